"""The featureGates a planned configuration sets, as each of the two minors decodes them.

A kubelet panics while decoding a configuration whose gates it does not have, has locked to the other
value, or whose dependencies it checks and finds off; the rules here say which of those the planned
minor adds to what today's minor accepts, gate by gate. The helpers read a configuration's gates for
the other upgrade rules too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tmnb.analysis.minors import describe_gate
from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.gates import PANIC, merge_feature_gates, unmet_dependencies
from tmnb.kubelet.profiles import KubeletProfile

#: The area of every upgrade finding.
AREA = "kubelet upgrade"


def go_bool(value: bool) -> str:
    return "true" if value else "false"


def feature_gates(mapping: Mapping[str, Any]) -> dict[str, bool] | None:
    """``featureGates`` of a configuration; None when a value is not a boolean (the validator says so)."""
    raw = mapping.get("featureGates") or {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, bool) for v in raw.values()):
        return None
    return {str(k): v for k, v in raw.items()}


def refusal(profile: KubeletProfile, gates: Mapping[str, bool], *, dependencies: bool = True) -> str | None:
    """The panic ``profile``'s kubelet dies with while decoding these gates, or None."""
    try:
        merge_feature_gates(profile, gates, dependencies=dependencies)
    except ConfigRejected as err:
        return err.message
    return None


def _enabled(profile: KubeletProfile, gates: Mapping[str, bool]) -> dict[str, bool] | None:
    """The gates ``profile`` runs with for this map, before its dependency check; None if it refuses it."""
    try:
        return merge_feature_gates(profile, gates, dependencies=False)
    except (ConfigRejected, InputError):
        return None


def feature_gates_refused_by_upgrade(c: LintContext) -> bool:
    """The planned ``featureGates`` are fine for today's minor and refused by the planned one: the gate
    rules below say why, gate by gate (the validator's ``config.feature-gates`` finding is left out)."""
    gates = feature_gates(c.plan.planned)
    return (
        c.plan.upgrades
        and gates is not None
        and refusal(c.today, gates) is None
        and refusal(c.profile, gates) is not None
    )


def _gate_removed(c: LintContext) -> Iterator[Hit]:
    gates = feature_gates(c.plan.planned) if c.plan.upgrades else None
    removed = [(n, v) for n, v in (gates or {}).items() if n in c.today.gates and n not in c.profile.gates]
    several = " With several such gates it names the first it meets, one per start." if len(removed) > 1 else ""
    for name, value in removed:
        yield Hit(
            f"featureGates.{name}",
            f"a gate kubelet {c.profile.name} knows",
            f"{name}: {go_bool(value)}",
            f"Kubelet {c.profile.name} does not have the {name} feature gate ({describe_gate(c.today.gates[name])} "
            f"in kubelet {c.today.name}) and dies while decoding its configuration file: "
            f'"{refusal(c.profile, {name: value})}".' + several,
            fill={"gate": name, "minor": c.profile.name},
        )


UPGRADE_GATE_REMOVED = Rule[LintContext](
    "upgrade.gate-removed",
    AREA,
    "blocker",
    "Drop {gate} from featureGates with the upgrade to kubelet {minor} (a target's featureGates replaces the "
    "node's whole map).",
    _gate_removed,
    summary="the configuration sets a feature gate the planned minor does not have (removed): it panics at start",
)


def _gate_locked(c: LintContext) -> Iterator[Hit]:
    gates = feature_gates(c.plan.planned) if c.plan.upgrades else None
    for name, value in (gates or {}).items():
        spec, before = c.profile.gates.get(name), c.today.gates.get(name)
        if spec is None or before is None or not spec.locked or value == spec.default:
            continue
        if refusal(c.today, {name: value}, dependencies=False) is not None:
            continue  # refused today already: the validator's finding
        yield Hit(
            f"featureGates.{name}",
            f"{name}: {go_bool(spec.default)} or unset",
            f"{name}: {go_bool(value)}",
            f"Kubelet {c.profile.name} locks {name} to {go_bool(spec.default)} ({describe_gate(before)} in kubelet "
            f"{c.today.name}) and dies while decoding its configuration file: "
            f'"{refusal(c.profile, {name: value}, dependencies=False)}".',
            fill={"gate": name, "minor": c.profile.name, "value": "on" if spec.default else "off"},
        )


UPGRADE_GATE_LOCKED = Rule[LintContext](
    "upgrade.gate-locked",
    AREA,
    "blocker",
    "Drop {gate} from featureGates with the upgrade: kubelet {minor} always runs it {value}.",
    _gate_locked,
    summary="the configuration turns a gate the planned minor locks to the other value: it panics at start",
)


def _gate_dependency(c: LintContext) -> Iterator[Hit]:
    gates = feature_gates(c.plan.planned) if c.plan.upgrades else None
    if gates is None:
        return
    new, today = c.profile, c.today
    accepted = {n: v for n, v in gates.items() if refusal(new, {n: v}, dependencies=False) is None}
    enabled = _enabled(new, accepted)
    if enabled is None:
        return
    before = _enabled(today, gates)
    failing_today = {g for g, _ in unmet_dependencies(today, before)} if before is not None else set()
    unmet = [(g, off) for g, off in unmet_dependencies(new, enabled) if g not in failing_today]
    if not unmet:
        return
    panic = refusal(new, accepted) or PANIC
    first = " once the gates it does not know or has locked are dropped" if len(accepted) < len(gates) else ""
    for gate, disabled in unmet:
        why = "set on in featureGates" if gates.get(gate) else f"on by default in kubelet {new.name}"
        if not today.gate_dependencies:
            change = f"kubelet {today.name} does not check gate dependencies; kubelet {new.name} does"
        elif set(disabled) - set(today.gate_dependencies.get(gate, ())):
            change = f"kubelet {today.name} did not list this dependency"
        else:
            change = f"{gate} is {describe_gate(today.gates.get(gate))} in kubelet {today.name}"
        yield Hit(
            f"featureGates.{gate}",
            f"{', '.join(disabled)} on, or {gate} off",
            f"{', '.join(disabled)} off",
            f"{gate} ({why}) needs {', '.join(disabled)}, which the configuration turns off; {change}. "
            f'Kubelet {new.name} dies while decoding its configuration file{first}: "{panic}".',
            fill={"gate": gate, "needs": ", ".join(disabled)},
        )


UPGRADE_GATE_DEPENDENCY = Rule[LintContext](
    "upgrade.gate-dependency",
    AREA,
    "blocker",
    "Turn {needs} back on, or set {gate}: false, in featureGates with the upgrade.",
    _gate_dependency,
    summary="the planned minor checks a gate dependency the configuration breaks: it panics at start",
)
