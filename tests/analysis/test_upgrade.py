"""Upgrade what-ifs: each lint rule for a target that changes the kubelet minor, worked by hand from
docs/kubelet-minors.md and src/tmnb/kubelet/data/feature_gates.json (the kubelet's texts quoted from
the gates' and checkpoints' sources), and the pods two minors admit or pin differently."""

import pytest

from factories import Device, node, pod, settings, snapshot
from tmnb.analysis.lint import lint, needs_manual_action
from tmnb.analysis.readiness import assess, results
from tmnb.snapshot import KubeletInfo, PodResources

PANIC = "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8"}


def kubelet(**values):
    return KubeletInfo(settings=settings(**values))


#: Whether the upgrade itself is supported (``upgrade.policy``: test_upgrade_policy.py); the cases here are
#: about what the two minors' facts change.
POLICY = {"upgrade.newer-than-server", "upgrade.beyond-skew", "upgrade.skips-minors", "upgrade.drain-first"}


def upgrade_findings(snap, target):
    return [f for f in lint(snap, target) if f.rule.startswith("upgrade.") and f.rule not in POLICY]


def rules(findings):
    return sorted((f.rule, f.setting, f.severity) for f in findings)


def test_no_upgrade_no_upgrade_finding():
    """The same node and gates without kubeletVersion, or with the node's own minor."""
    snap = snapshot([node("a", version="v1.35.2", kubelet=kubelet(featureGates={"MemoryManager": True}))])
    assert upgrade_findings(snap, {"topologyManagerPolicy": "best-effort"}) == []
    assert upgrade_findings(snap, {"kubeletVersion": "1.35"}) == []


def test_a_gate_the_new_minor_removed():
    """MemoryManager: GA and locked to true in 1.35, gone from 1.36's gate table."""
    snap = snapshot([node("a", version="v1.35.2", kubelet=kubelet(featureGates={"MemoryManager": True}))])
    findings = lint(snap, {"kubeletVersion": "1.36"})
    (hit,) = [f for f in findings if f.rule == "upgrade.gate-removed"]
    assert (hit.setting, hit.severity, hit.detected) == ("featureGates.MemoryManager", "blocker", "MemoryManager: true")
    assert "(GA, locked to true in kubelet 1.35)" in hit.explanation
    assert f'"{PANIC}unrecognized feature gate: MemoryManager"' in hit.explanation
    assert hit.remedy.startswith("Drop MemoryManager from featureGates with the upgrade to kubelet 1.36")
    # the validator's config.feature-gates says the same panic: left out for the rule that says why
    assert "config.feature-gates" not in {f.rule for f in findings}


def test_a_gate_the_new_minor_locked():
    """TopologyManagerPolicyOptions: GA, on by default, can be turned off in 1.35; locked to true in 1.36."""
    snap = snapshot(
        [node("a", version="v1.35.2", kubelet=kubelet(featureGates={"TopologyManagerPolicyOptions": False}))]
    )
    (hit,) = upgrade_findings(snap, {"kubeletVersion": "1.36"})
    assert (hit.rule, hit.severity) == ("upgrade.gate-locked", "blocker")
    assert "(GA, on by default in kubelet 1.35)" in hit.explanation
    assert (
        f'"{PANIC}cannot set feature gate TopologyManagerPolicyOptions to false, feature is locked to true"'
        in hit.explanation
    )
    assert (
        hit.remedy
        == "Drop TopologyManagerPolicyOptions from featureGates with the upgrade: kubelet 1.36 always runs it on."
    )


def test_a_gate_dependency_the_new_minor_checks():
    """1.34 checks no dependencies; 1.35 does, and ProcMountType (beta, on by default in 1.35) needs
    UserNamespacesSupport, which this node turns off. In 1.36 UserNamespacesSupport is locked to true:
    the lock, not the dependency, is what it refuses."""
    snap = snapshot([node("a", version="v1.34.5", kubelet=kubelet(featureGates={"UserNamespacesSupport": False}))])
    (hit,) = upgrade_findings(snap, {"kubeletVersion": "1.35"})
    assert (hit.rule, hit.setting, hit.severity) == ("upgrade.gate-dependency", "featureGates.ProcMountType", "blocker")
    assert "ProcMountType (on by default in kubelet 1.35) needs UserNamespacesSupport" in hit.explanation
    assert "kubelet 1.34 does not check gate dependencies; kubelet 1.35 does" in hit.explanation
    assert (
        f'"{PANIC}ProcMountType is enabled, but depends on features that are disabled: [UserNamespacesSupport]"'
        in hit.explanation
    )
    assert rules(upgrade_findings(snap, {"kubeletVersion": "1.36"})) == [
        ("upgrade.gate-locked", "featureGates.UserNamespacesSupport", "blocker")
    ]


def test_a_field_the_new_minor_does_not_know():
    """memoryReservationPolicy exists from 1.36: a what-if back to 1.35 ignores it with a log line."""
    snap = snapshot([node("a", version="v1.36.1", kubelet=kubelet(memoryReservationPolicy="None"))])
    findings = lint(snap, {"kubeletVersion": "1.35"})
    (hit,) = [f for f in findings if f.rule == "upgrade.field-unknown"]
    assert (hit.setting, hit.severity, hit.detected) == (
        "memoryReservationPolicy",
        "warning",
        "set in /var/lib/kubelet/config.yaml",
    )
    assert 'err="strict decoding error: unknown field \\"memoryReservationPolicy\\""' in hit.explanation
    assert "config.field-too-new" not in {f.rule for f in findings}


def test_what_a_rollback_to_todays_minor_refuses_or_ignores():
    """1.36 -> 1.37 with defaultPodSysctls (from 1.37) and PodLevelResourcesFixKubeletQOSClass (1.37's gate):
    1.36 ignores the field and panics on the gate."""
    snap = snapshot([node("a", version="v1.36.1")])
    target = {
        "kubeletVersion": "1.37",
        "defaultPodSysctls": [{"name": "net.ipv4.ip_forward", "value": "1"}],
        "featureGates": {"PodLevelResourcesFixKubeletQOSClass": False},
    }
    found = {f.setting: f for f in upgrade_findings(snap, target) if f.rule == "upgrade.rollback-config"}
    gate, field = found["featureGates.PodLevelResourcesFixKubeletQOSClass"], found["defaultPodSysctls"]
    assert gate.severity == "warning" and field.severity == "info"
    assert f'"{PANIC}unrecognized feature gate: PodLevelResourcesFixKubeletQOSClass"' in gate.explanation
    assert "a rollback to kubelet 1.36" in field.explanation and "unknown field" in field.explanation


def test_an_option_that_no_longer_needs_its_gate():
    """prefer-align-cpus-by-uncorecache: beta in 1.35, GA in 1.36; max-allowable-numa-nodes: beta in
    1.34, GA in 1.35."""
    cpu = snapshot(
        [
            node(
                "a",
                version="v1.35.2",
                kubelet=kubelet(**STATIC, cpuManagerPolicyOptions={"prefer-align-cpus-by-uncorecache": "true"}),
            )
        ]
    )
    (hit,) = upgrade_findings(cpu, {"kubeletVersion": "1.36"})
    assert (hit.rule, hit.severity, hit.area) == ("upgrade.option-gate-dropped", "info", "cpu manager")
    assert "no longer needs the CPUManagerPolicyBetaOptions feature gate" in hit.explanation
    topology = snapshot([node("b", version="v1.34.5", kubelet=kubelet(**STATIC))])
    target = {
        "kubeletVersion": "1.35",
        "topologyManagerPolicy": "restricted",
        "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "8"},
    }
    assert rules(upgrade_findings(topology, target)) == [
        ("upgrade.option-gate-dropped", "topologyManagerPolicyOptions.max-allowable-numa-nodes", "info")
    ]
    assert upgrade_findings(topology, {**target, "kubeletVersion": "1.34"}) == []


def test_an_option_that_newly_needs_a_gate_that_is_off():
    """The other way: prefer-align-cpus-by-uncorecache is alpha in 1.33, and CPUManagerPolicyAlphaOptions
    is off by default, so 1.33 refuses it (the validator's kubelet.rejects quotes the kubelet)."""
    snap = snapshot(
        [
            node(
                "a",
                version="v1.36.1",
                kubelet=kubelet(**STATIC, cpuManagerPolicyOptions={"prefer-align-cpus-by-uncorecache": "true"}),
            )
        ]
    )
    findings = lint(snap, {"kubeletVersion": "1.33"})
    (hit,) = [f for f in findings if f.rule == "upgrade.option-gate-needed"]
    assert hit.severity == "warning" and "alpha in kubelet 1.33 (GA in kubelet 1.36)" in hit.explanation
    assert "CPUManagerPolicyAlphaOptions feature gate, which is off" in hit.explanation
    assert hit.remedy == "With the change of minor, set CPUManagerPolicyAlphaOptions: true in featureGates."
    assert any(f.rule == "kubelet.rejects" for f in findings)


def test_checkpoints_v4_and_v3_keep_the_older_fields_inline_for_a_rollback():
    """1.36 -> 1.37: 1.37 writes cpu_manager_state V4 (V2 inline) and memory_manager_state V3 (V1 inline);
    1.36 reads V1-V3 and V1-V2, so a rollback restores the inline fields. Nothing is refused."""
    found = upgrade_findings(snapshot([node("a", version="v1.36.1")]), {"kubeletVersion": "1.37"})
    assert rules(found) == [
        ("upgrade.checkpoint-inline", "cpu_manager_state", "info"),
        ("upgrade.checkpoint-inline", "memory_manager_state", "info"),
    ]
    cpu = next(f for f in found if f.setting == "cpu_manager_state")
    assert "writes cpu_manager_state as V4, which keeps the V2 fields inline" in cpu.explanation
    assert "on a rollback, kubelet 1.36 restores those" in cpu.explanation
    assert not any(needs_manual_action(f) for f in found)


def test_a_rollback_from_pod_level_resource_managers_is_refused():
    """1.35 -> 1.36 turning PodLevelResourceManagers on: 1.36 writes CPU V3 and memory V2, which 1.35 (CPU
    V1-V2, memory V1) refuses; and 1.35 does not know the gate."""
    found = upgrade_findings(
        snapshot([node("a", version="v1.35.2")]),
        {"kubeletVersion": "1.36", "featureGates": {"PodLevelResourceManagers": True}},
    )
    assert rules(found) == [
        ("upgrade.rollback-checkpoint-refused", "cpu_manager_state", "warning"),
        ("upgrade.rollback-checkpoint-refused", "memory_manager_state", "warning"),
        ("upgrade.rollback-config", "featureGates.PodLevelResourceManagers", "warning"),
    ]
    cpu = found[0]
    assert (
        '"could not restore state from checkpoint: checkpoint is corrupted, please drain this node and delete the CPU '
        'manager checkpoint file "/var/lib/kubelet/cpu_manager_state" before restarting Kubelet"' in cpu.explanation
    )
    assert not needs_manual_action(cpu)  # a step of a rollback, not of this rollout


def test_a_checkpoint_the_new_minor_refuses_needs_a_manual_step():
    """A 1.36 node with PodLevelResourceManagers on wrote V3 / V2; the what-if back to 1.35 refuses them at
    start (and panics on the gate first)."""
    snap = snapshot([node("a", version="v1.36.1", kubelet=kubelet(featureGates={"PodLevelResourceManagers": True}))])
    found = upgrade_findings(snap, {"kubeletVersion": "1.35"})
    refused = [f for f in found if f.rule == "upgrade.checkpoint-refused"]
    assert [(f.setting, f.detected) for f in refused] == [("cpu_manager_state", "V3"), ("memory_manager_state", "V2")]
    assert all(needs_manual_action(f) for f in refused)
    assert "remove /var/lib/kubelet/cpu_manager_state, install kubelet 1.35" in refused[0].remedy
    assert "upgrade.gate-removed" in {f.rule for f in found}


@pytest.mark.parametrize(
    ("zones", "policy", "fires"),
    [([0], "single-numa-node", True), ([0, 1], "single-numa-node", False), ([0], "none", False)],
)
def test_device_hints_change_where_devices_sit_on_some_numa_nodes(zones, policy, fires):
    """#138244 (from 1.36): hints only over the NUMA nodes holding the resource's devices. GPUs on NUMA 0 of
    two change the hints; GPUs on both do not; policy none uses no hints."""
    gpus = [Device(resource="nvidia.com/gpu", id=f"g{z}", numa=[z]) for z in zones]
    snap = snapshot([node("a", version="v1.35.2", devices=gpus)])
    found = upgrade_findings(snap, {"kubeletVersion": "1.36", "topologyManagerPolicy": policy})
    hits = [f for f in found if f.rule == "upgrade.device-hints"]
    assert bool(hits) is fires
    if fires:
        assert hits[0].setting == "nvidia.com/gpu" and hits[0].severity == "info"
        assert "only over the NUMA nodes holding its devices (0)" in hits[0].explanation
        assert "kubelet 1.35 offers them over all 2 NUMA nodes" in hits[0].explanation


RES = {"cpu": "2", "memory": "1Gi"}
STATIC_KUBELET = KubeletInfo(settings=settings(**STATIC))


def pod_level_fleet():
    """A 1.33 node (static CPU manager, reserved CPUs 0,8: core 0 of NUMA 0) with two Guaranteed 2-CPU pods,
    the first with pod-level spec.resources. 1.33's static policy pins both by their containers: plr the
    first free core, 1 (CPUs 1,9), plain the next, 2 (CPUs 2,10). 1.34 turns PodLevelResources on by
    default and then skips plr (shared pool), so plain takes core 1."""
    pods = [
        pod("plr", "a", resources=PodResources(requests=RES, limits=RES)),
        pod("plain", "a", created="2026-11-30T10:01:00Z"),
    ]
    return snapshot([node("a", version="v1.33.4", kubelet=STATIC_KUBELET)], pods)


def test_pod_level_resources_handled_differently_by_the_new_minor():
    (hit,) = upgrade_findings(pod_level_fleet(), {"kubeletVersion": "1.34"})
    assert (hit.rule, hit.setting, hit.severity) == ("upgrade.pod-level-resources", "app/plr", "warning")
    assert "Kubelet 1.33's static CPU and Memory managers: pinned as its containers ask" in hit.explanation
    assert "kubelet 1.34's: skipped: no NUMA hints and no exclusive CPUs or memory" in hit.explanation
    # 1.34 -> 1.35 handle such pods alike (both skip them while PodLevelResources is on)
    snap = pod_level_fleet()
    moved = type(snap)(**{**snap.__dict__, "nodes": [node("a", version="v1.34.5", kubelet=STATIC_KUBELET)]})
    assert "upgrade.pod-level-resources" not in {f.rule for f in upgrade_findings(moved, {"kubeletVersion": "1.35"})}


def test_readiness_names_the_pods_the_upgrade_admits_or_pins_differently():
    report = assess(pod_level_fleet(), {"kubeletVersion": "1.34"})
    table = report.upgrade.set_index("pod")
    assert list(table.index) == ["plr", "plain"]
    assert table.loc["plr", "as today's kubelet"] == "admitted (main: CPUs 1,9)"
    assert table.loc["plr", "after"] == "admitted"
    assert table.loc["plr", "why"].startswith("pod-level resources: pinned as its containers ask")
    assert (table.loc["plain", "as today's kubelet"], table.loc["plain", "after"]) == (
        "admitted (main: CPUs 2,10)",
        "admitted (main: CPUs 1,9)",
    )
    assert table.loc["plain", "why"] == "admitted after app/plr, which the two minors admit or place differently"
    assert set(table["kubelet today"]) == {"1.33"} and set(table["kubelet after"]) == {"1.34"}
    assert results(report, "s")["upgrade_changes"] == 2


def test_an_upgrade_that_changes_no_pod_has_an_empty_table():
    """1.36 -> 1.37 with whole-CPU containers and no pod-level resources: the same pins."""
    snap = snapshot([node("a", kubelet=STATIC_KUBELET)], [pod("x", "a"), pod("y", "a", created="2026-11-30T10:01:00Z")])
    report = assess(snap, {"kubeletVersion": "1.37"})
    assert report.upgrade.empty and results(report, "s")["upgrade_changes"] == 0
    assert assess(snap, {"topologyManagerPolicy": "restricted"}).upgrade.empty
    assert "upgrade_changes" not in results(assess(snap, {"topologyManagerPolicy": "restricted"}), "s")
