"""End-to-end admission on a modelled node; expectations derived by hand from the kubelet's rules."""

from __future__ import annotations

import pytest

from tmnb.errors import ConfigRejected
from tmnb.kubelet.cpumanager.topology import CPUInfo
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.memorymanager.state import ModelMemoryBlock
from tmnb.kubelet.node import (
    ExistingAllocation,
    Machine,
    ModelSettings,
    NodeModel,
    NodeSimulator,
    NUMANode,
    PodResult,
    reserved_cpu_count,
)
from tmnb.kubelet.pod import Container, Pod

GI = 1 << 30


def admit_all(node: NodeModel, pods: list[Pod | dict]) -> list[PodResult]:
    """Admit ``pods`` in order on a freshly started kubelet for ``node``."""
    sim = NodeSimulator(node)
    return [sim.admit(p) for p in pods]


# 2 sockets = 2 NUMA nodes, 3 cores x 2 threads each: NUMA0 = 0,6,1,7,2,8  NUMA1 = 3,9,4,10,5,11
CPUS = tuple(CPUInfo(c, c % 6, (c % 6) // 3, (c % 6) // 3) for c in range(12))


def machine(devices=None) -> Machine:
    nodes = (NUMANode(0, memory=8 * GI, distances=(10, 21)), NUMANode(1, memory=8 * GI, distances=(21, 10)))
    return Machine(CPUS, nodes, devices or {})


def settings(**kw) -> ModelSettings:
    base = {
        "topology_manager_policy": "single-numa-node",
        "cpu_manager_policy": "static",
        "reserved_cpu_count": 1,
        "memory_manager_policy": "Static",
        "reserved_memory": {0: {"memory": "1Gi"}},
    }
    base.update(kw)
    return ModelSettings(**base)


def gpod(name: str, cpu: str, memory: str = "1Gi", *, init=(), extra=None, sidecar=False) -> Pod:
    res = {"cpu": cpu, "memory": memory, **(extra or {})}
    inits = tuple(
        Container(f"{name}-init{i}", requests=r, limits=r, restart_policy="Always" if sidecar else None)
        for i, r in enumerate({"cpu": c, "memory": "1Gi"} for c in init)
    )
    return Pod(uid=name, name=name, containers=(Container("app", requests=res, limits=res),), init_containers=inits)


def test_sequential_single_numa_node_packing():
    results = admit_all(
        NodeModel("n1", machine(), settings()),
        [gpod("a", "4"), gpod("b", "6"), gpod("c", "2"), gpod("d", "1")],
    )
    a, b, c, d = results
    # cpu 0 is reserved (lowest core); 4 CPUs = the two whole free cores of NUMA 0
    assert (a.admitted, str(a.containers[0].cpuset), a.containers[0].affinity.numa()) == (True, "1-2,7-8", [0])
    assert (b.admitted, str(b.containers[0].cpuset), b.containers[0].affinity.numa()) == (True, "3-5,9-11", [1])
    # only CPU 6 is left: 2 CPUs fit nowhere, single-numa-node rejects
    assert (c.admitted, c.reason, c.message) == (
        False,
        "TopologyAffinityError",
        "Resources cannot be allocated with Topology locality",
    )
    assert c.pod_status_message == "Pod was rejected: Resources cannot be allocated with Topology locality"
    assert (d.admitted, str(d.containers[0].cpuset)) == (True, "6")
    assert d.containers[0].memory == (ModelMemoryBlock((0,), GI, "memory"),)


def test_best_effort_admits_cross_numa_and_allocates_from_hint_first():
    sim = NodeSimulator(NodeModel("n", machine(), settings(topology_manager_policy="best-effort")))
    first = sim.admit(gpod("a", "8"))
    # no single node holds 8 of the 11 free CPUs: the cross-NUMA hint is the only (so preferred) one
    assert first.admitted and first.containers[0].affinity.numa() == [0, 1]
    assert len(first.containers[0].cpuset) == 8
    assert 0 not in first.containers[0].cpuset


def test_smt_alignment_error_with_full_pcpus_only():
    node = NodeModel("n", machine(), settings(cpu_manager_policy_options={"full-pcpus-only": "true"}))
    (res,) = admit_all(node, [gpod("odd", "3")])
    assert (res.admitted, res.reason, res.message) == (
        False,
        "SMTAlignmentError",
        "SMT Alignment Error: requested 3 cpus not multiple cpus per core = 2",
    )


@pytest.mark.parametrize(
    ("kw", "text"),
    [
        # CPU hints give {0}: the memory manager must widen it and finds nothing that holds 20Gi
        ({"topology_manager_policy": "restricted"}, "failed to find NUMA nodes to extend the current topology hint"),
        # no CPU hints and an empty memory hint map: single-numa-node stores nil, so the memory
        # manager computes a default affinity itself and finds none
        (
            {"topology_manager_policy": "single-numa-node", "cpu_manager_policy": "none"},
            "failed to get the default NUMA affinity, no NUMA nodes with enough memory is available",
        ),
    ],
)
def test_memory_empty_map_quirk_ends_in_unexpected_admission_error(kw, text):
    # 8Gi nodes (1Gi reserved on node 0): 20Gi fits no mask -> empty hint map -> no preference,
    # the TM admits, then the memory manager's Allocate fails.
    (res,) = admit_all(NodeModel("n", machine(), settings(**kw)), [gpod("big", "1", "20Gi")])
    assert (res.admitted, res.reason) == (False, "UnexpectedAdmissionError")
    assert res.message == f"Allocate failed due to [memorymanager] {text}, which is unexpected"


def test_device_pulls_cpus_to_its_numa_node():
    devices = {"vendor.com/gpu": (Device("gpu0", (1,)), Device("gpu1", (1,)))}
    pod = gpod("g", "2", extra={"vendor.com/gpu": "1"})
    (res,) = admit_all(NodeModel("n", machine(devices), settings()), [pod])
    app = res.containers[0]
    assert res.admitted and app.affinity.numa() == [1]
    assert app.devices == {"vendor.com/gpu": ("gpu0",)}
    assert str(app.cpuset) == "3,9"


def test_rejected_pod_releases_what_it_got():
    devices = {"vendor.com/gpu": (Device("gpu0", (0,)),)}
    node = NodeModel("n", machine(devices), settings(topology_manager_policy="single-numa-node"))
    sim = NodeSimulator(node)
    # init container (1 CPU) is admitted and allocated, the app needs the GPU on NUMA 0 with 6 CPUs: rejected
    res = sim.admit(gpod("p", "6", init=("1",), extra={"vendor.com/gpu": "1"}))
    assert not res.admitted and res.reason == "TopologyAffinityError"
    assert str(sim.free_cpus()) == "1-11"


def test_init_container_cpus_are_reused_by_the_app_container():
    sim = NodeSimulator(NodeModel("n", machine(), settings()))
    res = sim.admit(gpod("p", "2", init=("2",)))
    init, app = res.containers
    assert init.cpuset == app.cpuset and len(app.cpuset) == 2


def test_sidecar_cpus_are_not_reused():
    sim = NodeSimulator(NodeModel("n", machine(), settings()))
    res = sim.admit(gpod("p", "2", init=("2",), sidecar=True))
    side, app = res.containers
    assert not set(side.cpuset) & set(app.cpuset)


def test_pod_scope_one_hint_for_all_containers():
    node = NodeModel("n", machine(), settings(topology_manager_scope="pod"))
    res = {"cpu": "2", "memory": "1Gi"}
    pod = Pod(uid="p", name="p", containers=(Container("a", res, res), Container("b", res, res)))
    (out,) = admit_all(node, [pod])
    assert out.admitted
    assert {c.affinity.numa()[0] for c in out.containers} == {0}
    assert len(set(out.containers[0].cpuset) | set(out.containers[1].cpuset)) == 4


def test_pod_dict_input_and_burstable_shared_pool():
    pod = {
        "metadata": {"name": "web", "namespace": "shop", "uid": "u1"},
        "spec": {"containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}, "limits": {"cpu": "2"}}}]},
    }
    (res,) = admit_all(NodeModel("n", machine(), settings()), [pod])
    assert (res.admitted, res.namespace, res.name) == (True, "shop", "web")
    assert len(res.containers[0].cpuset) == 0 and res.containers[0].affinity.affinity is None


def test_existing_allocations_are_respected():
    node = NodeModel(
        "n",
        machine(),
        settings(),
        allocations=(
            ExistingAllocation("old", "app", cpus="3-5,9-11", memory=(ModelMemoryBlock((1,), GI, "memory"),)),
        ),
    )
    (res,) = admit_all(node, [gpod("new", "5")])
    assert res.admitted and str(res.containers[0].cpuset) == "1-2,6-8"


@pytest.mark.parametrize(
    ("kw", "text"),
    [
        ({"reserved_cpu_count": 0}, "[cpumanager] unable to determine reserved CPU resources for static policy"),
        ({"reserved_memory": {}}, "[memorymanager] you should specify the system reserved memory"),
        ({"memory_manager_policy": "static"}, 'unknown policy: "static"'),
        (
            {"reserved_memory": {3: {"memory": "1Gi"}}},
            "the reserved memory configuration references a NUMA node 3 that does not exist on this machine",
        ),
        (
            {"cpu_manager_policy": "none", "cpu_manager_policy_options": {"full-pcpus-only": "true"}},
            "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]",
        ),
        (
            {"cpu_manager_policy_options": {"align-by-socket": "true"}},
            "new static policy error: "
            'CPU Manager Policy Alpha-level Options not enabled, but option "align-by-socket" provided',
        ),
    ],
)
def test_kubelet_refuses_to_start(kw, text):
    with pytest.raises(ConfigRejected) as info:
        NodeSimulator(NodeModel("n", machine(), settings(**kw)))
    assert str(info.value) == text


def test_existing_state_must_match_the_machine():
    node = NodeModel("n", machine(), settings(), allocations=(ExistingAllocation("p", "c", cpus="0-1"),))
    with pytest.raises(ConfigRejected, match="not all reserved cpus"):
        NodeSimulator(node)


def test_reserved_cpu_count_rounds_up():
    assert reserved_cpu_count("500m", "1") == 2
    assert reserved_cpu_count() == 0


def test_state_files_are_restored_at_start_cpu_manager_first():
    """NewManager errors come first; then the CPU manager's Start restores its checkpoint before its
    policy checks the state; then the memory manager's."""
    from tmnb.kubelet.checkpoints.restore import Checkpoint
    from tmnb.kubelet.errors import Unpredictable

    cpu = Checkpoint("cpu", "/var/lib/kubelet/cpu_manager_state", policy="none")
    memory = Checkpoint("memory", "/var/lib/kubelet/memory_manager_state", error="checkpoint is corrupted")
    stale = ExistingAllocation("p", "c", cpus="0-1")  # would fail the static policy's state check
    with pytest.raises(ConfigRejected) as info:
        NodeSimulator(NodeModel("n", machine(), settings(), allocations=(stale,), checkpoints=(memory, cpu)))
    assert str(info.value) == (
        'start cpu manager error: could not restore state from checkpoint: configured policy "static" differs from '
        'state checkpoint policy "none", please drain this node and delete the CPU manager checkpoint file '
        '"/var/lib/kubelet/cpu_manager_state" before restarting Kubelet'
    )
    alpha = settings(cpu_manager_policy_options={"align-by-socket": "true"})
    with pytest.raises(ConfigRejected, match=r"^new static policy error: "):
        NodeSimulator(NodeModel("n", machine(), alpha, checkpoints=(cpu,)))
    restored = Checkpoint("cpu", "/var/lib/kubelet/cpu_manager_state", policy="static")
    with pytest.raises(ConfigRejected) as info:
        NodeSimulator(NodeModel("n", machine(), settings(), checkpoints=(restored, memory)))
    assert str(info.value) == (
        "start memory manager error: could not restore state from checkpoint: checkpoint is corrupted, please drain "
        'this node and delete the memory manager checkpoint file "/var/lib/kubelet/memory_manager_state" before '
        "restarting Kubelet"
    )
    NodeSimulator(NodeModel("n", machine(), settings(), checkpoints=(restored,)))  # starts
    with pytest.raises(Unpredictable):
        NodeSimulator(NodeModel("n", machine(), settings(), checkpoints=(Checkpoint("cpu", "x", unknown="?"),)))
