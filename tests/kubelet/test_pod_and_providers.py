"""Pod parsing/QoS, memory and device manager state: kubelet table facts and hand-derived cases."""

from __future__ import annotations

import re

import pytest

from tmnb.errors import InputError
from tmnb.kubelet.devicemanager.manager import DeviceManager
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.memorymanager.policy_static import MemoryStaticPolicy
from tmnb.kubelet.memorymanager.state import ModelMemoryBlock
from tmnb.kubelet.pod import BEST_EFFORT, BURSTABLE, GUARANTEED, Container, Pod, compute_qos
from tmnb.kubelet.topologymanager.hints import TopologyHint

GI = 1 << 30
MI = 1 << 20


def c(name, req=None, lim=None, restart=None):
    return Container(name, requests=req or {}, limits=lim or {}, restart_policy=restart)


class TestQoS:
    @pytest.mark.parametrize(
        ("containers", "expected"),
        [
            ([c("a")], BEST_EFFORT),
            ([c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], GUARANTEED),
            ([c("a", {"cpu": "1000m", "memory": "1024Mi"}, {"cpu": "1", "memory": "1Gi"})], GUARANTEED),
            ([c("a", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"})], BURSTABLE),
            ([c("a", {"cpu": "1"}, {"cpu": "1"})], BURSTABLE),  # memory limit missing
            ([c("a", None, {"cpu": "1", "memory": "1Gi"})], BURSTABLE),  # no API defaulting of requests
            ([c("a", {"cpu": "0", "memory": "0"}, {"cpu": "0", "memory": "0"})], BEST_EFFORT),
            ([c("a", {"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], BEST_EFFORT),  # only cpu/memory count
        ],
    )
    def test_compute_qos(self, containers, expected):
        assert compute_qos(Pod(uid="u", name="p", containers=tuple(containers))) == expected

    def test_init_container_breaks_guaranteed(self):
        g = {"cpu": "1", "memory": "1Gi"}
        pod = Pod(uid="u", name="p", containers=(c("a", g, g),), init_containers=(c("i", {"cpu": "1"}, {"cpu": "1"}),))
        assert pod.qos() == BURSTABLE

    def test_pod_level_resources_decide(self):
        pod = Pod(
            uid="u",
            name="p",
            containers=(c("a"),),
            pod_requests={"cpu": "2", "memory": "1Gi"},
            pod_limits={"cpu": "2", "memory": "1Gi"},
        )
        assert pod.qos() == GUARANTEED

    def test_status_qos_class_wins(self):
        assert Pod(uid="u", name="p", containers=(c("a"),), qos_class=GUARANTEED).qos() == GUARANTEED


class TestPodInput:
    def test_from_pod_dict(self):
        pod = Pod.from_pod_dict(
            {
                "metadata": {"name": "n", "uid": "u1"},
                "spec": {
                    "initContainers": [{"name": "side", "restartPolicy": "Always"}],
                    "containers": [{"name": "a", "resources": {"limits": {"cpu": 2, "memory": "1Gi"}}}],
                },
            }
        )
        assert (pod.namespace, pod.uid, pod.init_containers[0].restartable) == ("default", "u1", True)
        assert pod.containers[0].limits["cpu"] == 2 and not pod.containers[0].requests

    @pytest.mark.parametrize(
        ("obj", "match"),
        [
            ({"spec": {"containers": "x"}}, "spec.containers must be a list"),
            ({"spec": {"containers": [{"name": "a", "resources": {"limits": {"cpu": "two"}}}]}}, "limits.cpu"),
            ({"spec": {"containers": [{"name": "a"}, {"name": "a"}]}}, "container names must be unique"),
            ([], "expected a v1 Pod object"),
        ],
    )
    def test_bad_pod_dicts_name_the_field(self, obj, match):
        with pytest.raises(InputError, match=match):
            Pod.from_pod_dict(obj)


def mem_pod(uid, apps, inits=()):
    def mk(name, size, hp, restart=None):
        r = {"cpu": "1", "memory": size, "hugepages-1Gi": hp}
        return c(name, r, r, restart)

    return Pod(
        uid=uid,
        name=uid,
        containers=tuple(mk(n, s, h) for n, s, h in apps),
        init_containers=tuple(mk(n, s, h, r) for n, s, h, r in inits),
    )


class TestMemoryManager:
    @pytest.mark.parametrize(  # memorymanager policy_static_test.go Test_getPodRequestedResources
        ("apps", "inits", "expected"),
        [
            (
                [("c1", "1Gi", "1Gi"), ("c2", "2Gi", "2Gi")],
                [("i1", "1Gi", "1Gi", None), ("i2", "4Gi", "4Gi", None)],
                {"memory": 4 * GI, "hugepages-1Gi": 4 * GI},
            ),
            (
                [("c1", "2Gi", "2Gi"), ("c2", "3Gi", "3Gi")],
                [("i1", "1Gi", "1Gi", None), ("i2", "3Gi", "3Gi", None)],
                {"memory": 5 * GI, "hugepages-1Gi": 5 * GI},
            ),
            (
                [("c1", "2Gi", "1Gi"), ("c2", "3Gi", "2Gi")],
                [("i1", "1Gi", "1Gi", None), ("i2", "3Gi", "4Gi", None)],
                {"memory": 5 * GI, "hugepages-1Gi": 4 * GI},
            ),
            (
                [("c1", "1Gi", "1Gi"), ("c2", "2Gi", "2Gi")],
                [("r1", "2Gi", "2Gi", "Always"), ("i2", "4Gi", "4Gi", None)],
                {"memory": 6 * GI, "hugepages-1Gi": 6 * GI},
            ),
        ],
    )
    def test_pod_requested_resources(self, apps, inits, expected):
        policy = MemoryStaticPolicy({0: 16 * GI}, reserved={0: {"memory": GI}})
        assert policy.pod_requested(mem_pod("p", apps, inits)) == expected

    def _policy(self):
        return MemoryStaticPolicy(
            {0: 4 * GI, 1: 4 * GI},
            hugepages={0: {"hugepages-1Gi": 2 * GI}, 1: {"hugepages-1Gi": 2 * GI}},
            reserved={0: {"memory": 512 * MI}, 1: {"memory": 512 * MI}},
        )

    def test_regenerate_from_existing_blocks(self):  # "should provide topology hints based on the existent..."
        policy = self._policy()
        pod = mem_pod("pod1", [("container1", "1Gi", "1Gi")])
        policy.blocks[("pod1", "container1")] = [
            ModelMemoryBlock((0,), GI, "memory"),
            ModelMemoryBlock((0,), GI, "hugepages-1Gi"),
        ]
        want = [TopologyHint(1, True)]
        assert policy.get_topology_hints(pod, pod.containers[0]) == {"memory": want, "hugepages-1Gi": want}

    @pytest.mark.parametrize(
        "blocks",
        [
            [ModelMemoryBlock((0,), GI, "memory")],  # number of blocks differs from requested resources
            [ModelMemoryBlock((0,), GI, "memory"), ModelMemoryBlock((0,), GI, "hugepages-2Mi")],  # other resource
            [ModelMemoryBlock((0,), 512 * MI, "memory"), ModelMemoryBlock((0,), GI, "hugepages-1Gi")],  # other size
        ],
    )
    def test_mismatching_blocks_give_no_preference(self, blocks):
        policy = self._policy()
        pod = mem_pod("pod1", [("container1", "1Gi", "1Gi")])
        policy.blocks[("pod1", "container1")] = blocks
        assert policy.get_topology_hints(pod, pod.containers[0]) is None

    def test_allocate_reserves_and_groups(self):
        policy = self._policy()
        pod = mem_pod("p", [("a", "2Gi", "1Gi")])
        blocks = policy.allocate(pod, pod.containers[0], TopologyHint(0b11, True))
        assert blocks == [ModelMemoryBlock((0, 1), 2 * GI, "memory"), ModelMemoryBlock((0, 1), GI, "hugepages-1Gi")]
        # memory allocatable per node = 4Gi - 512Mi - 2Gi hugepages = 1.5Gi: node 0 fills, node 1 takes 512Mi
        assert policy.state[0].memory["memory"].free == 0
        assert policy.state[1].memory["memory"].free == GI
        assert (
            policy.state[0].memory["hugepages-1Gi"].free == GI
            and policy.state[1].memory["hugepages-1Gi"].free == 2 * GI
        )
        assert policy.state[0].cells == [0, 1] and policy.state[0].assignments == 2
        # a node in a 2-node group cannot take a single-node allocation any more: only the group itself
        # is offered, and it is not preferred because one node would have been enough
        small = mem_pod("q", [("b", "100Mi", "0")])
        group = [TopologyHint(0b11, False)]
        assert policy.get_topology_hints(small, small.containers[0]) == {"memory": group, "hugepages-1Gi": group}

    def test_allocate_without_system_reserved_is_refused(self):
        from tmnb.errors import ConfigRejected

        with pytest.raises(ConfigRejected, match="you should specify the system reserved memory"):
            MemoryStaticPolicy({0: GI})


class TestDeviceManager:
    def _dm(self):
        return DeviceManager(
            [0, 1],
            {"gpu": (Device("g0", (0,)), Device("g1", (1,)), Device("g2", (1,)), Device("x", None))},
        )

    def test_container_hints_by_limits_regardless_of_qos(self):
        dm = self._dm()
        pod = Pod(uid="p", name="p", containers=(c("a", None, {"gpu": "2"}),))
        assert dm.get_topology_hints(pod, pod.containers[0]) == {
            "gpu": [TopologyHint(0b10, True), TopologyHint(0b11, False)]
        }

    def test_allocation_prefers_hint_nodes_then_no_topology(self):
        dm = self._dm()
        pod = Pod(uid="p", name="p", containers=(c("a", None, {"gpu": "3"}),))
        got = dm.allocate(pod, pod.containers[0], TopologyHint(0b10, True))
        assert got == {"gpu": ("g1", "g2", "x")}

    def test_not_enough_devices(self):
        dm = self._dm()
        pod = Pod(uid="p", name="p", containers=(c("a", None, {"gpu": "5"}),))
        with pytest.raises(
            Exception, match=re.escape("requested number of devices unavailable for gpu. Requested: 5, Available: 4")
        ):
            dm.allocate(pod, pod.containers[0], TopologyHint(None, True))

    def test_init_devices_are_reused(self):
        dm = self._dm()
        pod = Pod(
            uid="p",
            name="p",
            containers=(c("a", None, {"gpu": "1"}),),
            init_containers=(c("i", None, {"gpu": "1"}),),
        )
        first = dm.allocate(pod, pod.init_containers[0], TopologyHint(0b01, True))
        second = dm.allocate(pod, pod.containers[0], TopologyHint(0b01, True))
        assert first == second == {"gpu": ("g0",)}

    def test_unregistered_resource_is_ignored(self):
        dm = self._dm()
        pod = Pod(uid="p", name="p", containers=(c("a", None, {"example.com/other": "1"}),))
        assert dm.get_topology_hints(pod, pod.containers[0]) == {}
