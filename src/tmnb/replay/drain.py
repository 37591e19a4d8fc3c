"""What a change needs around the kubelet's restart on one node: checkpoint files moved aside, a drain, and why.

One decision, read by readiness (03's steps and the lint rules that list them) and by the rollout
plan (04's state files and drain), so 03 names the steps 04 takes. It follows what the kubelet does
at start: today's state files restored as the planned minor restores them and checked by its
policies (``model_for(plan, "restart")``, ``NodeSimulator``); a file the kubelet would refuse is
moved aside, in the kubelet's words, and a running pod it would reject or re-pin makes the node
drain. Where tmnb is more careful than the kubelet requires, the step says so and why: a file whose
manager's settings change (the profile's ``checkpoint_spoilers``) moves aside even when today's file
would be restored, and a restart tmnb cannot predict drains.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from dataclasses import dataclass

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.checkpoints.restore import Manager
from tmnb.kubelet.memorymanager.validate import KubeletPanic
from tmnb.kubelet.node import NodeSimulator
from tmnb.kubelet.profiles import CPU_STATE, MEMORY_STATE
from tmnb.replay.node_input import config_refusal, model_for, model_pod, replay_order
from tmnb.replay.plan import NodePlan, show_value
from tmnb.snapshot import Pod

KUBELET_ROOT = "/var/lib/kubelet"
_FILES: dict[Manager, str] = {"cpu": CPU_STATE, "memory": MEMORY_STATE}
#: Running pods named in a reason before "and N more".
_NAMED = 3
NOTHING_TO_CHANGE = "already at the target: nothing to change"


@dataclass(frozen=True)
class MovedFile:
    """A checkpoint the rollout moves aside before the kubelet starts with the change."""

    path: str
    #: the kubelet's refusal at start over this file, in its words ("" when it would restore it)
    refused: str = ""
    #: why tmnb moves it although the kubelet would restore it ("" when the kubelet refuses it)
    careful: str = ""

    @property
    def why(self) -> str:
        if self.refused:
            return f"{self.path}: the kubelet would refuse it at start ({self.refused})"
        return f"{self.path}: more careful than the kubelet requires: {self.careful}"


@dataclass(frozen=True)
class DrainSteps:
    """One node's steps around the restart: what 03 lists and 04 does."""

    node: str
    #: the kubelet's refusal of the planned configuration itself, from a fresh state ("" when it starts)
    refused: str
    moved: tuple[MovedFile, ...]
    drain: bool
    why: str
    #: the drain or a move goes beyond what the kubelet requires (``why`` says why)
    careful: bool = False
    #: whether the target changes anything on the node
    changes: bool = True

    @property
    def state_files(self) -> list[str]:
        return [f.path for f in self.moved]


def _some(items: list[str]) -> str:
    more = f" and {len(items) - _NAMED} more" if len(items) > _NAMED else ""
    return "; ".join(items[:_NAMED]) + more


def _manager_of(err: ConfigRejected) -> Manager | None:
    """The state file behind a start-up refusal (the container manager names the manager it started)."""
    if isinstance(err, KubeletPanic) or err.message.startswith("start memory manager error"):
        return "memory"
    if err.message.startswith("start cpu manager error"):
        return "cpu"
    return None


def _careful(plan: NodePlan, name: str, fields: tuple[str, ...], unpredictable: str) -> str:
    held = ", ".join(f"{f}={show_value(plan.current.get(f))}" for f in fields)
    if plan.node.state_files and all(f.path.rsplit("/", 1)[-1] != name for f in plan.node.state_files):
        return f"the snapshot found no {name}; one the kubelet wrote since would hold assignments made under {held}"
    if unpredictable:
        return f"it holds assignments made under {held}, and the restart is not predictable here ({unpredictable})"
    return (
        f"kubelet {plan.planned_kubelet.name} would restore it over the snapshot's state (what-if, restart mode), but "
        f"it holds assignments made under {held}: running pods would keep them, and a pod started since the snapshot "
        "can make the kubelet refuse it; moved aside, every pod is placed under the new settings"
    )


def _restart(plan: NodePlan) -> tuple[NodeSimulator | None, dict[Manager, str], str]:
    """The kubelet started over today's state files, each file it refuses moved aside in turn (the CPU
    manager starts first, so a refused CPU file hides what the memory manager would say); the third
    item is a refusal no state file explains."""
    refused: dict[Manager, str] = {}
    while True:
        try:
            return NodeSimulator(model_for(plan, "restart", moved=tuple(refused))), refused, ""
        except ConfigRejected as err:
            manager = _manager_of(err)
            if manager is None or manager in refused:
                return None, refused, f"the kubelet refuses to start over today's state: {err.message}"
            refused[manager] = err.message


def _risks(plan: NodePlan, sim: NodeSimulator, pods: list[Pod]) -> list[str]:
    """Running pods the kubelet would reject, or pin to other CPUs, when it re-admits them at restart."""
    held = {(a.pod_uid, a.container): a.cpuset for a in plan.node.allocations if a.exclusive}
    risks = []
    for r in sim.restart([model_pod(p) for p in pods]):
        if not r.admitted:
            risks.append(f"{r.namespace}/{r.name}: {r.reason}: {r.message}")
            continue
        for c in r.containers:
            before = held.get((r.uid, c.name))
            if before is not None and str(c.cpuset or "") != str(before):
                risks.append(
                    f"{r.namespace}/{r.name}: {c.name} re-pinned from CPUs {before} to {c.cpuset or 'the shared pool'}"
                )
    return risks


def drain_steps(plan: NodePlan, pods: Iterable[Pod]) -> DrainSteps:
    """The checkpoint files moved aside, the drain and why, for ``plan`` on its node with ``pods`` (the
    node's pods; the active ones are re-admitted at the restart, in creation order)."""
    node = plan.node
    if not any(plan.changes(k) for k in plan.target):
        return DrainSteps(node.name, "", (), False, NOTHING_TO_CHANGE, changes=False)
    steps = _steps(plan, pods)
    if plan.hops and not steps.drain:
        return dataclasses.replace(steps, drain=True, why=f"{minor_upgrade(plan)}; {steps.why}")
    return steps


def minor_upgrade(plan: NodePlan) -> str:
    """Why a minor upgrade of the kubelet drains the node whatever its restart would do."""
    today = f"{plan.version.major}.{plan.version.minor}" if plan.version else plan.kubelet.profile.name
    return (
        f'kubelet {today} to {plan.planned_kubelet.name} is a minor version upgrade: "Before performing a minor '
        "version kubelet upgrade, drain pods from that node. In-place minor version kubelet upgrades are not "
        'supported" (version skew policy)'
    )


def _steps(plan: NodePlan, pods: Iterable[Pod]) -> DrainSteps:
    """``drain_steps`` from what the kubelet does at its start alone."""
    node = plan.node
    active = replay_order(pods)
    spoiled = plan.spoiled_checkpoints()
    refusal, unpredictable = config_refusal(node), ""
    sim: NodeSimulator | None = None
    refused: dict[Manager, str] = {}
    if refusal is None and (not node.cpus or not node.numa):
        unpredictable = "the snapshot has no CPU and NUMA topology for this node"
    elif refusal is None:
        try:  # the kubelet's start with the target and no state at all: does it take the target?
            NodeSimulator(model_for(plan, "drain", moved=("cpu", "memory")))
        except ConfigRejected as err:
            refusal = err.message
        except InputError as err:  # Unpredictable: a NUMA node's memory tmnb could not read
            unpredictable = err.message
    if refusal is not None:
        unpredictable = "the kubelet would refuse the target"
    elif not unpredictable:
        try:
            sim, refused, unpredictable = _restart(plan)
        except InputError as err:  # Unpredictable included: a file tmnb cannot read as the kubelet does
            unpredictable = err.message
    moved = tuple(
        MovedFile(f"{KUBELET_ROOT}/{name}", refused=refused[manager])
        if manager in refused
        else MovedFile(f"{KUBELET_ROOT}/{name}", careful=_careful(plan, name, spoiled[name], unpredictable))
        for manager, name in _FILES.items()
        if manager in refused or name in spoiled
    )
    careful = any(f.careful for f in moved)
    if refusal is not None:
        why = f"the kubelet would refuse the target: {refusal}"
        return DrainSteps(node.name, refusal, moved, True, why, careful=True)
    if moved:
        reasons = "; ".join(f.why for f in moved)
        why = (
            f"{reasons}. Moving {'them' if len(moved) > 1 else 'it'} aside makes the kubelet forget exclusive "
            "assignments: running pods must leave the node first"
        )
        return DrainSteps(node.name, "", moved, True, why, careful=careful)
    if unpredictable or sim is None:
        why = (
            f"more careful than the kubelet may require: the restart is not predictable here ({unpredictable}), so "
            f"the {len(active)} active pod(s) leave rather than be re-admitted unseen"
        )
        return DrainSteps(node.name, "", (), True, why, careful=True)
    risks = _risks(plan, sim, active)
    if risks:
        why = "at restart the kubelet re-admits the running pods (what-if, restart mode): " + _some(risks)
        return DrainSteps(node.name, "", (), True, why)
    return DrainSteps(
        node.name, "", (), False, "the kubelet re-admits every running pod at restart (what-if, restart mode)"
    )
