"""restart_drift: every pod that ran through a kubelet restart held to its checkpoint entry from before."""

from __future__ import annotations

import pytest

from tmnb.errors import InputError
from tmnb.rollout.verify import restart_drift

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
