"""The one drain and checkpoint decision (``replay.drain``): what the kubelet does at start decides which
checkpoint moves aside, in its words; tmnb's extra care is said as such.

The factory node has 16 CPUs, two per core (core c holds CPUs c and c+8), NUMA 0 = 0-3,8-11 and
NUMA 1 = 4-7,12-15; its kubelet runs the static CPU policy with reservedSystemCPUs 0,8. Every
expectation below is worked by hand from the kubelet's static policy (validateState).
"""

from __future__ import annotations

import dataclasses

from factories import node, pod, settings, snapshot
from tmnb.replay import drain_steps, plan_for
from tmnb.snapshot import Allocation, KubeletInfo, Snapshot

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "none"}
CPU_STATE = "/var/lib/kubelet/cpu_manager_state"


def _holding(cpus: str) -> Snapshot:
    """One node whose one running pod holds ``cpus`` exclusively."""
    info = KubeletInfo(settings=settings(**STATIC), config_file="/var/lib/kubelet/config.yaml")
    held = Allocation(pod_uid="uid-db", namespace="app", pod="db", container="main", cpuset=cpus, exclusive=True)
    return snapshot([node("w1", kubelet=info, allocations=[held])], [pod("db", "w1", cpu="2")])


def _steps(snap: Snapshot, target: dict[str, object]):  # type: ignore[no-untyped-def]
    return drain_steps(plan_for(snap.nodes[0], target), snap.pods_on("w1"))


def test_a_new_reserved_cpu_a_pod_holds_makes_the_kubelet_refuse_the_file() -> None:
    """db holds 1,9, so the shared pool (defaultCpuSet) is every CPU but those: 0,2-8,10-15; the new
    reserved set 0-1 is not inside it, which validateState refuses."""
    steps = _steps(_holding("1,9"), {"reservedSystemCPUs": "0,1"})
    refusal = 'start cpu manager error: not all reserved cpus: "0-1" are present in defaultCpuSet: "0,2-8,10-15"'
    assert [(f.path, f.refused, f.careful) for f in steps.moved] == [(CPU_STATE, refusal, "")]
    assert steps.drain and not steps.careful and not steps.refused
    assert steps.why == (
        f"{CPU_STATE}: the kubelet would refuse it at start ({refusal}). Moving it aside makes the kubelet forget "
        "exclusive assignments: running pods must leave the node first"
    )


def test_a_reserved_set_the_kubelet_would_accept_is_moved_aside_as_tmnbs_care() -> None:
    """db holds 2,10: the new reserved CPUs 0,1 are both in the shared pool, so the kubelet restores the
    file; tmnb still moves it aside (the reservedSystemCPUs checkpoint spoiler) and says it is its care."""
    steps = _steps(_holding("2,10"), {"reservedSystemCPUs": "0,1"})
    (moved,) = steps.moved
    assert moved.path == CPU_STATE and moved.refused == ""
    assert moved.careful.startswith(
        "kubelet 1.36 would restore it over the snapshot's state (what-if, restart mode), but it holds assignments "
        "made under reservedSystemCPUs=0,8"
    )
    assert steps.drain and steps.careful
    assert steps.why.startswith(f"{CPU_STATE}: more careful than the kubelet requires: kubelet 1.36 would restore")


def test_a_topology_change_every_pod_survives_needs_neither_drain_nor_move() -> None:
    steps = _steps(_holding("2,10"), {"topologyManagerPolicy": "best-effort"})
    assert (steps.moved, steps.drain) == ((), False)
    assert steps.why == "the kubelet re-admits every running pod at restart (what-if, restart mode)"


def test_a_configuration_the_kubelet_refuses_is_named_in_its_words() -> None:
    """policy_none.go refuses any option map (``None policy: received unsupported options=%v``), wrapped by
    NewManager as ``new none policy error``; nothing moves, the rollout leaves the node out."""
    target = {"cpuManagerPolicy": "none", "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}
    steps = _steps(_holding("2,10"), target)
    assert steps.refused == "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]"
    assert steps.why == f"the kubelet would refuse the target: {steps.refused}"


def test_an_unchanged_node_has_no_steps() -> None:
    steps = _steps(_holding("2,10"), {"reservedSystemCPUs": "0,8"})
    assert (steps.changes, steps.drain, steps.moved, steps.why) == (
        False,
        False,
        (),
        "already at the target: nothing to change",
    )


def test_a_node_without_topology_drains_as_care() -> None:
    snap = _holding("2,10")
    bare = dataclasses.replace(snap.nodes[0], cpus=[], numa=[], allocations=[])
    steps = drain_steps(plan_for(bare, {"topologyManagerPolicy": "best-effort"}), snap.pods_on("w1"))
    assert steps.drain and steps.careful and steps.moved == ()
    assert steps.why == (
        "more careful than the kubelet may require: the restart is not predictable here (the snapshot has no CPU "
        "and NUMA topology for this node), so the 1 active pod(s) leave rather than be re-admitted unseen"
    )


def test_a_file_the_snapshot_did_not_find_is_moved_as_care_and_said_so() -> None:
    """The snapshot read the state files and found only memory_manager_state: at the restart the CPU manager
    starts fresh, so nothing refuses a new reserved set; tmnb still moves aside a file written since."""
    from tmnb.snapshot import StateFile

    snap = _holding("1,9")
    memory = StateFile(manager="memory", path="/var/lib/kubelet/memory_manager_state", policy="None")
    w1 = dataclasses.replace(snap.nodes[0], state_files=[memory])
    steps = drain_steps(plan_for(w1, {"reservedSystemCPUs": "0,1"}), snap.pods_on("w1"))
    assert [(f.path, f.refused, f.careful) for f in steps.moved] == [
        (
            CPU_STATE,
            "",
            "the snapshot found no cpu_manager_state; one the kubelet wrote since would hold assignments made under "
            "reservedSystemCPUs=0,8",
        )
    ]
