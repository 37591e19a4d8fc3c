"""Every lint rule with a case that fires and one that does not."""

import pytest

from factories import Device, Layer, node, pod, settings, snapshot
from tmnb.analysis.lint import at_or_above, lint, to_frame
from tmnb.snapshot import Cpu, KubeletInfo, NumaZone, Setting


def kubelet(**values):
    return KubeletInfo(settings=settings(**values))


def rules(findings, rule):
    return [f for f in findings if f.rule == rule]


def only(findings, rule):
    hits = rules(findings, rule)
    assert len(hits) == 1, [(f.rule, f.node, f.setting) for f in findings]
    return hits[0]


STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8"}


def test_flag_overriding_the_file_blocks_a_change_of_that_field():
    flagged = settings(**STATIC)
    flagged["topologyManagerPolicy"] = Setting(
        value="best-effort",
        source="flag",
        detail="--topology-manager-policy",
        overridden=[Layer(source="file", value="none", detail="/var/lib/kubelet/config.yaml")],
    )
    snap = snapshot([node("a", kubelet=KubeletInfo(settings=flagged))])
    hit = only(lint(snap, {"topologyManagerPolicy": "restricted"}), "flag-overrides-file")
    assert hit.severity == "blocker" and "--topology-manager-policy" in hit.detected
    assert only(lint(snap, {"topologyManagerScope": "pod"}), "flag-overrides-file").severity == "info"
    assert not rules(
        lint(snapshot([node("b", kubelet=kubelet(**STATIC))]), {"topologyManagerPolicy": "restricted"}),
        "flag-overrides-file",
    )


@pytest.mark.parametrize(
    ("version", "options", "gates", "fires", "text"),
    [
        (
            "v1.34.5",
            {"max-allowable-numa-nodes": "16"},
            {"TopologyManagerPolicyBetaOptions": False},
            True,
            "topology manager policy beta-level options not enabled",
        ),
        ("v1.36.1", {"max-allowable-numa-nodes": "16"}, {}, False, ""),
        ("v1.36.1", {"prefer-closest-numa-nodes": "yes"}, {}, True, 'bad value for option "prefer-closest-numa-nodes"'),
        (
            "v1.35.2",
            {"prefer-closest-numa-nodes": "true"},
            {"TopologyManagerPolicyOptions": False},
            True,
            'require feature gates "TopologyManagerPolicyOptions"',
        ),
        ("v1.33.9", {"prefer-closest-numa-nodes": "true"}, {}, False, ""),
    ],
)
def test_option_availability_follows_the_kubelet_version(version, options, gates, fires, text):
    snap = snapshot([node("a", version=version, kubelet=kubelet(**STATIC))])
    target = {"topologyManagerPolicy": "restricted", "topologyManagerPolicyOptions": options, "featureGates": gates}
    hits = rules(lint(snap, target), "kubelet.rejects")
    assert bool(hits) is fires
    if fires:
        assert hits[0].severity == "blocker" and text in hits[0].explanation


def test_alpha_cpu_option_is_a_warning_when_gated_on():
    snap = snapshot([node("a", kubelet=kubelet(**STATIC))])
    target = {
        "cpuManagerPolicyOptions": {"align-by-socket": "true"},
        "featureGates": {"CPUManagerPolicyAlphaOptions": True},
    }
    assert only(lint(snap, target), "option-maturity").severity == "warning"
    assert rules(lint(snap, {"cpuManagerPolicyOptions": {"align-by-socket": "true"}}), "kubelet.rejects")


def test_options_with_policy_none():
    snap = snapshot([node("a", kubelet=kubelet(**STATIC))])
    hit = only(
        lint(snap, {"topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "bogus"}}), "topology.options-ignored"
    )
    assert hit.severity == "warning"
    cpu = lint(snapshot([node("b")]), {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}})
    hit = only(cpu, "cpu.options-with-none")
    assert hit.severity == "blocker"
    assert "None policy: received unsupported options=map[full-pcpus-only:true]" in hit.explanation
    assert not rules(lint(snap, {"topologyManagerPolicy": "restricted"}), "topology.options-ignored")


def test_cpu_manager_none_with_a_strict_topology_policy():
    assert only(lint(snapshot([node("a")]), {"topologyManagerPolicy": "single-numa-node"}), "cpu-none-strict-topology")
    assert not rules(lint(snapshot([node("a")]), {"topologyManagerPolicy": "best-effort"}), "cpu-none-strict-topology")
    assert not rules(
        lint(snapshot([node("a", kubelet=kubelet(**STATIC))]), {"topologyManagerPolicy": "restricted"}),
        "cpu-none-strict-topology",
    )


def test_static_policy_needs_a_cpu_reservation():
    hit = only(lint(snapshot([node("a")]), {"cpuManagerPolicy": "static"}), "cpu.static-no-reservation")
    assert "unable to determine reserved CPU resources for static policy" in hit.explanation
    assert not rules(
        lint(snapshot([node("a")]), {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "500m"}}),
        "cpu.static-no-reservation",
    )


def test_manager_policy_change_needs_drain_and_state_file_removal():
    hit = only(lint(snapshot([node("a")]), {**STATIC}), "manager-policy-change")
    assert hit.setting == "cpuManagerPolicy" and "/var/lib/kubelet/cpu_manager_state" in hit.remedy
    mem = only(lint(snapshot([node("a")]), {"memoryManagerPolicy": "Static"}), "manager-policy-change")
    assert "memory_manager_state" in mem.remedy
    assert not rules(
        lint(snapshot([node("a", kubelet=kubelet(**STATIC))]), {"cpuManagerPolicy": "static"}), "manager-policy-change"
    )


def test_manager_policy_change_says_the_kubelets_words_or_tmnbs_care():
    """reservedSystemCPUs 0,8 -> 0,1 with a pod on 1,9: the shared pool is 0,2-8,10-15, which lacks CPU 1,
    so the kubelet refuses the file (validateState); with the pod on 2,10 it would restore it, and the
    finding says moving it is tmnb's care."""
    from tmnb.snapshot import Allocation

    def holding(cpus):
        held = Allocation(pod_uid="uid-db", namespace="app", pod="db", container="main", cpuset=cpus, exclusive=True)
        a = node("a", kubelet=kubelet(**STATIC), allocations=[held])
        return only(lint(snapshot([a], [pod("db", "a")]), {"reservedSystemCPUs": "0,1"}), "manager-policy-change")

    refused = holding("1,9")
    assert refused.explanation.startswith(
        "/var/lib/kubelet/cpu_manager_state: the kubelet would refuse it at start (start cpu manager error: not all "
        'reserved cpus: "0-1" are present in defaultCpuSet: "0,2-8,10-15")'
    )
    assert (refused.setting, refused.detected, refused.expected) == (
        "reservedSystemCPUs",
        "reservedSystemCPUs=0,8",
        "reservedSystemCPUs=0,1",
    )
    careful = holding("2,10")
    assert "more careful than the kubelet requires" in careful.explanation


def test_restart_drain_names_the_running_pod_the_restart_would_reject():
    """app/wide holds 3-4,11-12, CPUs of both NUMA nodes: at the restart its hint is regenerated from them,
    which single-numa-node refuses; a pod on 1-2,9-10 (NUMA 0) is re-admitted as it runs."""
    from tmnb.snapshot import Allocation

    def on(cpus):
        held = Allocation(
            pod_uid="uid-wide", namespace="app", pod="wide", container="main", cpuset=cpus, exclusive=True
        )
        a = node("a", kubelet=kubelet(**STATIC), allocations=[held])
        return rules(
            lint(snapshot([a], [pod("wide", "a", cpu="4")]), {"topologyManagerPolicy": "single-numa-node"}),
            "restart-drain",
        )

    (hit,) = on("3-4,11-12")
    assert hit.severity == "warning" and "Manual action: drain the node" in hit.remedy
    assert hit.explanation == (
        "at restart the kubelet re-admits the running pods (what-if, restart mode): app/wide: TopologyAffinityError: "
        "Resources cannot be allocated with Topology locality. tmnb's rollout drains the node before the restart."
    )
    assert on("1-2,9-10") == []


def big_numa_node(zones=16):
    cpus = [Cpu(cpu=i, core=i, socket=i // 8, numa=i // 4) for i in range(zones * 4)]
    numa = [NumaZone(id=z, cpus=f"{4 * z}-{4 * z + 3}", memory_total=1 << 34) for z in range(zones)]
    return node("big", cpus=cpus, numa=numa, kubelet=kubelet(**STATIC))


def test_more_than_eight_numa_nodes():
    snap = snapshot([big_numa_node()])
    hit = only(lint(snap, {"topologyManagerPolicy": "restricted"}), "topology.too-many-numa-nodes")
    assert "more than 8 NUMA Nodes" in hit.explanation and hit.severity == "blocker"
    ok = {"topologyManagerPolicy": "restricted", "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "16"}}
    assert not rules(lint(snap, ok), "topology.too-many-numa-nodes")
    assert not rules(lint(snap, {"topologyManagerPolicy": "none"}), "topology.too-many-numa-nodes")


def test_mixed_hardware_in_one_pool():
    mixed = snapshot([node("a"), node("b", smt=False)])
    hit = only(lint(mixed, {}), "mixed-hardware-pool")
    assert hit.node == "general" and "SMT1" in hit.detected and "SMT2" in hit.detected
    assert not rules(lint(snapshot([node("a"), node("b")]), {}), "mixed-hardware-pool")


def test_devices_without_numa_topology():
    devs = [
        Device(resource="example.com/fpga", id="f0", numa=None),
        Device(resource="nvidia.com/gpu", id="g0", numa=[0]),
    ]
    snap = snapshot([node("a", devices=devs, kubelet=kubelet(**STATIC))])
    hit = only(lint(snap, {"topologyManagerPolicy": "single-numa-node"}), "device-without-numa")
    assert hit.setting == "example.com/fpga"
    assert not rules(lint(snap, {"topologyManagerPolicy": "none"}), "device-without-numa")


def test_guaranteed_pods_with_fractional_cpu():
    snap = snapshot([node("a")], [pod("frac", "a", cpu="1500m"), pod("whole", "a", cpu="2")])
    hit = only(lint(snap, {}), "guaranteed-fractional-cpu")
    assert hit.setting == "app/frac"


def test_reserved_cpus_spanning_numa_nodes():
    snap = snapshot([node("a", kubelet=kubelet(**STATIC))])
    assert only(lint(snap, {"reservedSystemCPUs": "0,4"}), "reserved-cpus-span-numa").detected == "0,4 (NUMA 0, 1)"
    assert not rules(lint(snap, {"reservedSystemCPUs": "0,8"}), "reserved-cpus-span-numa")


def test_version_skew():
    snap = snapshot([node("old", version="v1.32.0"), node("lag", version="v1.35.2"), node("same")])
    hits = {f.node: f.severity for f in rules(lint(snap, {}), "version-skew")}
    assert hits == {"old": "blocker", "lag": "warning"}


def test_kubeadm_managed_nodes_lose_local_edits():
    managed = KubeletInfo(settings=settings(**STATIC), kubeadm_managed=True)
    snap = snapshot([node("k", kubelet=managed), node("plain", kubelet=kubelet(**STATIC))])
    assert only(lint(snap, {"topologyManagerPolicy": "restricted"}), "kubeadm-overwrites").node == "k"
    assert not rules(lint(snap, {}), "kubeadm-overwrites")


def test_frame_orders_by_severity_and_threshold():
    snap = snapshot([node("a"), node("b", smt=False)], [pod("frac", "a", cpu="100m")])
    findings = lint(snap, {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}})
    frame = to_frame(findings)
    assert list(frame["severity"]) == sorted(frame["severity"], key={"blocker": 0, "warning": 1, "info": 2}.get)
    assert {f.severity for f in at_or_above(findings, "warning")} <= {"blocker", "warning"}
    assert at_or_above(findings, "blocker")
