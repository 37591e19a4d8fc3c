"""restart_drift: every pod that ran through a kubelet restart held to its checkpoint entry from before."""

from __future__ import annotations

import pytest

from tmnb.errors import InputError
from tmnb.rollout.verify import repinned, restart_drift

BEFORE = (
    '{"policyName":"static","defaultCpuSet":"0,5-15","entries":{"uid-a":{"main":"1-2"},"uid-b":{"main":"3-4"}},'
    '"checksum":0}'
)


def _pod(name: str, phase: str = "Running", **status: str) -> dict:
    return {"metadata": {"namespace": "app", "name": name, "uid": f"uid-{name}"}, "status": {"phase": phase, **status}}


def test_kept_cpus_are_no_drift() -> None:
    assert restart_drift(BEFORE, BEFORE, [_pod("a"), _pod("b"), _pod("c")]) == []


def test_repinned_and_new_and_rejected_pods_are_named() -> None:
    after = (
        '{"policyName":"static","defaultCpuSet":"0-2,9-15","entries":{"uid-b":{"main":"5-6"},"uid-c":{"main":"7-8"}},'
        '"checksum":0}'
    )
    pods = [
        _pod("a", "Failed", reason="TopologyAffinityError",
             message="Pod was rejected: Resources cannot be allocated with Topology locality"),
        _pod("b"),
        _pod("c"),
    ]  # fmt: skip
    assert restart_drift(BEFORE, after, pods) == [
        "app/a: rejected at the restart (TopologyAffinityError: Resources cannot be allocated with Topology "
        "locality); it held CPUs 1-2 (container main)",
        "app/b container main: 3-4 before the restart, 5-6 after",
        "app/c container main: no exclusive CPUs before the restart, 7-8 after",
    ]


def test_an_unreadable_checkpoint_is_named() -> None:
    with pytest.raises(InputError, match="cpu_manager_state after the restart"):
        restart_drift(BEFORE, "{", [])


def test_a_checkpoint_goes_back_only_when_running_pods_were_re_pinned() -> None:
    """``repinned``: the rollback puts the kept checkpoint back when running pods hold other CPUs than
    in it, and never when a pod holds CPUs it did not hold then (the kept one would take them away)."""
    moved = '{"policyName":"static","defaultCpuSet":"0-2,5-15","entries":{"uid-a":{"main":"3-4"}},"checksum":0}'
    newcomer = (
        '{"policyName":"static","defaultCpuSet":"0-2,9-15","entries":{"uid-a":{"main":"7-8"},"uid-b":{"main":"3-4"},'
        '"uid-c":{"main":"5-6"}},"checksum":0}'
    )
    assert repinned(BEFORE, moved, [_pod("a")])
    assert not repinned(BEFORE, BEFORE, [_pod("a"), _pod("b")])
    assert not repinned(BEFORE, newcomer, [_pod("a"), _pod("b"), _pod("c")])
    assert not repinned(BEFORE, moved, [_pod("a", "Failed")])  # a pod that is gone holds nothing to give back
