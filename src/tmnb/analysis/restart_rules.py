"""Lint rules on the kubelet's restart with the change: the checkpoints the rollout moves aside and the
drain it takes first, read from the node's drain decision (``replay.drain``), so 03 lists the steps 04
takes."""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.kubelet.profiles import CHECKPOINT_POLICIES
from tmnb.replay import DrainSteps, show_value


def _manager_policy_change(c: LintContext) -> Iterator[Hit]:
    """A checkpoint the rollout moves aside (``replay.drain``): one the kubelet would refuse at start, in
    its words, or one whose manager's settings change, moved although the kubelet would restore it."""
    p = c.plan
    spoiled = p.spoiled_checkpoints()
    for moved in c.steps.moved:
        name = moved.path.rsplit("/", 1)[-1]
        fields = spoiled.get(name) or (CHECKPOINT_POLICIES[name][0],)
        yield Hit(
            fields[0],
            "; ".join(f"{f}={show_value(p.planned.get(f))}" for f in fields),
            "; ".join(f"{f}={show_value(p.current.get(f))}" for f in fields),
            f"{moved.why}. tmnb's rollout drains the node and moves the file aside.",
            fill={"state": moved.path},
        )


MANAGER_POLICY_CHANGE = Rule[LintContext](
    "manager-policy-change",
    "kubelet restart",
    "warning",
    "Manual action: drain the node, stop the kubelet, move {state} aside, apply the config, start the kubelet, "
    "verify, uncordon.",
    _manager_policy_change,
    manual=True,
    summary="a resource manager's checkpoint the kubelet would refuse at start, or whose settings change: drain "
    "and move the file aside",
)


def _restart_drain(c: LintContext) -> Iterator[Hit]:
    """A drain with no checkpoint moved: running pods the restart would reject or re-pin, or a restart
    tmnb cannot predict (the kubelet's refusal of the target is the validator's finding; a minor upgrade's
    drain is ``upgrade.drain-first``'s)."""
    steps: DrainSteps = c.steps
    if steps.drain and not steps.moved and not steps.refused and not c.plan.hops:
        yield Hit(
            "running pods",
            "pods the kubelet re-admits as they run",
            "drain",
            f"{steps.why}. tmnb's rollout drains the node before the restart.",
            severity="info" if steps.careful else None,  # not predicted: the verdict says unknown
        )


RESTART_DRAIN = Rule[LintContext](
    "restart-drain",
    "kubelet restart",
    "warning",
    "Manual action: drain the node, apply the config, restart the kubelet, verify, uncordon.",
    _restart_drain,
    manual=True,
    summary="the restart would reject or re-pin a running pod (warning), or cannot be predicted (info): drain first",
)
