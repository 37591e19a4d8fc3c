"""Policy options the plan uses whose maturity the planned minor changes: a gate no longer needed,
or one newly needed (or an option it does not know)."""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.upgrade.gates import AREA, feature_gates
from tmnb.kubelet.names import CPU_STATIC, TOPOLOGY_NONE
from tmnb.kubelet.profiles import STAGE_GATES, Manager, Maturity

_OPTION_FIELDS: tuple[tuple[Manager, str, str], ...] = (
    ("topology", "topologyManagerPolicyOptions", "topologyManagerPolicy"),
    ("cpu", "cpuManagerPolicyOptions", "cpuManagerPolicy"),
)


def _option_changes(c: LintContext) -> Iterator[tuple[Manager, str, str, Maturity | None, Maturity | None]]:
    """(manager, options field, option, maturity today, maturity after) of every option the plan uses
    whose maturity the planned minor changes."""
    if not c.plan.upgrades:
        return
    for manager, field, policy in _OPTION_FIELDS:
        value = c.plan.planned.get(policy)
        if (manager == "topology" and value == TOPOLOGY_NONE) or (manager == "cpu" and value != CPU_STATIC):
            continue
        for name in c.plan.planned.get(field) or {}:
            before, after = c.today.option_maturity(manager, name), c.profile.option_maturity(manager, name)
            if before != after:
                yield manager, field, str(name), before, after


def _option_gate_dropped(c: LintContext) -> Iterator[Hit]:
    for manager, field, name, before, after in _option_changes(c):
        if after == "ga" and (before == "alpha" or before == "beta"):
            gate = STAGE_GATES[(manager, before)]
            yield Hit(
                f"{field}.{name}",
                f"{before} in kubelet {c.today.name}",
                f"GA in kubelet {c.profile.name}",
                f"{name} is GA in kubelet {c.profile.name} ({before} in kubelet {c.today.name}): it no longer needs "
                f"the {gate} feature gate.",
                area=f"{manager} manager",
                fill={"gate": gate, "minor": c.profile.name},
            )


UPGRADE_OPTION_GATE_DROPPED = Rule[LintContext](
    "upgrade.option-gate-dropped",
    AREA,
    "info",
    "Nothing to do for kubelet {minor}; {gate} can leave featureGates once no node runs a minor where the "
    "option still needs it.",
    _option_gate_dropped,
    summary="a policy option the plan uses is GA in the planned minor: it no longer needs its gate",
)


def _option_gate_needed(c: LintContext) -> Iterator[Hit]:
    gates = feature_gates(c.plan.planned) or {}
    for manager, field, name, before, after in _option_changes(c):
        was = "unknown" if before is None else "GA" if before == "ga" else before
        if after is None:
            explanation = (
                f"Kubelet {c.profile.name} does not know the {manager} manager option {name} ({was} in kubelet "
                f"{c.today.name}) and refuses it at start."
            )
            gate = ""
        elif after == "alpha" or after == "beta":
            gate = STAGE_GATES[(manager, after)]
            on = c.profile.gate_on(gate, gates)
            explanation = (
                f"{name} is {after} in kubelet {c.profile.name} ({was} in kubelet {c.today.name}): it needs the "
                f"{gate} feature gate, which is {'on' if on else 'off'} in the planned configuration"
                + ("." if on else f", so kubelet {c.profile.name} refuses the option at start.")
            )
        else:
            continue
        yield Hit(
            f"{field}.{name}",
            f"an option kubelet {c.profile.name} accepts",
            f"{after or 'unknown'} in kubelet {c.profile.name}",
            explanation,
            area=f"{manager} manager",
            fill={"todo": f"set {gate}: true in featureGates" if gate else "drop the option"},
        )


UPGRADE_OPTION_GATE_NEEDED = Rule[LintContext](
    "upgrade.option-gate-needed",
    AREA,
    "warning",
    "With the change of minor, {todo}.",
    _option_gate_needed,
    summary="a policy option the plan uses needs a gate in the planned minor, or is unknown to it",
)
