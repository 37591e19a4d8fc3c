"""What a target that changes the kubelet minor changes on a node, from the two minors' facts.

The lint rules here compare the node's kubelet today (``LintContext.today``) with the minor after the
change (``LintContext.profile``) through their profiles only (``tmnb.kubelet.profiles``): the feature
gates the planned configuration sets that the new minor removed or locked, or whose dependencies it
checks and finds off; configured fields it does not know; policy options whose maturity changes (a gate
no longer needed, or newly needed); whether it reads the checkpoints today's kubelet wrote, and whether
today's minor reads the ones it writes (a rollback); how its resource managers treat the node's pods
with pod-level resources; and its device hints on a node whose devices sit on some NUMA nodes only.
They fire only when the plan changes the minor; the texts quote the kubelet where it prints one. The
direction does not matter: a target older than today's minor is compared the same way.

``admission_changes`` says which pods the planned minor admits or pins differently than today's minor
does under the same configuration: the node's pods replayed as both.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from tmnb.analysis.minors import PLRM, describe_gate
from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.whatif import replay_node
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.checkpoint import Manager as StateManager
from tmnb.kubelet.checkpoint import could_not_restore
from tmnb.kubelet.gates import PANIC, merge_feature_gates, unmet_dependencies
from tmnb.kubelet.names import CPU_STATIC, TOPOLOGY_NONE
from tmnb.kubelet.node import PodResult
from tmnb.kubelet.profiles import (
    CPU_STATE,
    KUBELET_VERSION,
    MEMORY_STATE,
    STAGE_GATES,
    KubeletProfile,
    Manager,
    Maturity,
)
from tmnb.replay import ACTIVE_PHASES, Mode, NodePlan, model_pod
from tmnb.snapshot import Node, Pod, Snapshot

AREA = "kubelet upgrade"
CHANGE_COLUMNS = ["node", "namespace", "pod", "kubelet today", "as today's kubelet", "kubelet after", "after", "why"]


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _gates(mapping: Mapping[str, Any]) -> dict[str, bool] | None:
    """``featureGates`` of a configuration; None when a value is not a boolean (the validator says so)."""
    raw = mapping.get("featureGates") or {}
    if not isinstance(raw, Mapping) or not all(isinstance(v, bool) for v in raw.values()):
        return None
    return {str(k): v for k, v in raw.items()}


def _refusal(profile: KubeletProfile, gates: Mapping[str, bool], *, dependencies: bool = True) -> str | None:
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
    gates = _gates(c.plan.planned)
    return (
        c.plan.upgrades
        and gates is not None
        and _refusal(c.today, gates) is None
        and _refusal(c.profile, gates) is not None
    )


def _gate_removed(c: LintContext) -> Iterator[Hit]:
    gates = _gates(c.plan.planned) if c.plan.upgrades else None
    removed = [(n, v) for n, v in (gates or {}).items() if n in c.today.gates and n not in c.profile.gates]
    several = " With several such gates it names the first it meets, one per start." if len(removed) > 1 else ""
    for name, value in removed:
        yield Hit(
            f"featureGates.{name}",
            f"a gate kubelet {c.profile.name} knows",
            f"{name}: {_go_bool(value)}",
            f"Kubelet {c.profile.name} does not have the {name} feature gate ({describe_gate(c.today.gates[name])} "
            f"in kubelet {c.today.name}) and dies while decoding its configuration file: "
            f'"{_refusal(c.profile, {name: value})}".' + several,
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
    gates = _gates(c.plan.planned) if c.plan.upgrades else None
    for name, value in (gates or {}).items():
        spec, before = c.profile.gates.get(name), c.today.gates.get(name)
        if spec is None or before is None or not spec.locked or value == spec.default:
            continue
        if _refusal(c.today, {name: value}, dependencies=False) is not None:
            continue  # refused today already: the validator's finding
        yield Hit(
            f"featureGates.{name}",
            f"{name}: {_go_bool(spec.default)} or unset",
            f"{name}: {_go_bool(value)}",
            f"Kubelet {c.profile.name} locks {name} to {_go_bool(spec.default)} ({describe_gate(before)} in kubelet "
            f"{c.today.name}) and dies while decoding its configuration file: "
            f'"{_refusal(c.profile, {name: value}, dependencies=False)}".',
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
    gates = _gates(c.plan.planned) if c.plan.upgrades else None
    if gates is None:
        return
    new, today = c.profile, c.today
    accepted = {n: v for n, v in gates.items() if _refusal(new, {n: v}, dependencies=False) is None}
    enabled = _enabled(new, accepted)
    if enabled is None:
        return
    before = _enabled(today, gates)
    failing_today = {g for g, _ in unmet_dependencies(today, before)} if before is not None else set()
    unmet = [(g, off) for g, off in unmet_dependencies(new, enabled) if g not in failing_today]
    if not unmet:
        return
    panic = _refusal(new, accepted) or PANIC
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


def _configured(node: Node, target: Mapping[str, Any]) -> dict[str, tuple[str, bool]]:
    """Fields the configuration file, its drop-ins or the plan set: field -> (where, in a drop-in)."""
    out: dict[str, tuple[str, bool]] = {}
    for name, setting in node.kubelet.settings.items():
        layers = setting.overridden if setting.source == "configz" else (*setting.overridden, setting.as_layer())
        written = [layer for layer in layers if layer.source in ("file", "dropin")]
        if written:
            out[name] = (written[-1].detail or written[-1].source, written[-1].source == "dropin")
    for name in target:
        if name != KUBELET_VERSION:
            out[name] = ("the planned change", False)
    return out


def _ignored(name: str, dropin: bool) -> str:
    if dropin:
        return (
            "ignores it without logging anything (drop-ins are merged as plain JSON, and a key that matches no "
            "field is dropped)"
        )
    return (
        'ignores it after logging "Using lenient decoding as strict decoding failed" '
        f'err="strict decoding error: unknown field \\"{name}\\""'
    )


def _field_unknown(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades:
        return
    for name, (where, dropin) in sorted(_configured(c.node, c.plan.target).items()):
        since = c.profile.field_since(name)
        if since is not None:
            yield Hit(
                name,
                f"a field kubelet {c.profile.name} knows",
                f"set in {where}",
                f"{name} exists from kubelet 1.{since} (kubelet {c.today.name} reads it); kubelet {c.profile.name} "
                f"{_ignored(name, dropin)}, so the setting has no effect.",
                fill={"minor": c.profile.name},
            )


UPGRADE_FIELD_UNKNOWN = Rule[LintContext](
    "upgrade.field-unknown",
    AREA,
    "warning",
    "Remove {setting} from the configuration of kubelet {minor}, or keep this node on its minor.",
    _field_unknown,
    summary="the configuration sets a field the planned minor does not know: it is ignored",
)


def _rollback_config(c: LintContext) -> Iterator[Hit]:
    """The planned configuration as today's minor would read it after a rollback of the kubelet alone."""
    if not c.plan.upgrades:
        return
    today, new = c.today, c.profile
    gates = _gates(c.plan.planned) or {}
    for name, value in gates.items():
        if _refusal(new, {name: value}, dependencies=False) is not None:
            continue  # the planned minor refuses it too: a rule above or the validator says so
        refused = _refusal(today, {name: value}, dependencies=False)
        if refused is not None:
            yield Hit(
                f"featureGates.{name}",
                f"a configuration kubelet {today.name} accepts",
                f"{name}: {_go_bool(value)}",
                f"Kubelet {new.name} accepts {name} ({describe_gate(new.gates.get(name))}); a rollback to kubelet "
                f'{today.name} with this configuration dies while decoding it: "{refused}".',
                severity="warning",
                fill={"minor": today.name},
            )
    for name in sorted(k for k in c.plan.target if k != KUBELET_VERSION):
        since = today.field_since(name)
        if since is not None:
            yield Hit(
                name,
                f"a field kubelet {today.name} knows",
                "set by the planned change",
                f"{name} exists from kubelet 1.{since}; a rollback to kubelet {today.name} with this configuration "
                f"{_ignored(name, False)}.",
                fill={"minor": today.name},
            )


UPGRADE_ROLLBACK_CONFIG = Rule[LintContext](
    "upgrade.rollback-config",
    AREA,
    "info",
    "Roll the configuration back with the kubelet: a rollback to kubelet {minor} needs the node's current {setting}.",
    _rollback_config,
    summary="what today's minor would refuse (warning) or ignore (info) in the planned configuration on a rollback",
)

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
    gates = _gates(c.plan.planned) or {}
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

_MANAGERS: dict[str, StateManager] = {CPU_STATE: "cpu", MEMORY_STATE: "memory"}


def _checkpoints(c: LintContext, *, rollback: bool) -> Iterator[tuple[str, Hit]]:
    """The checkpoint each resource manager's kubelet writes and how the other minor restores it, as
    ("refused" | "inline", hit); every kubelet writes both files, whatever its policies."""
    if not c.plan.upgrades:
        return
    writer, reader = (c.profile, c.today) if rollback else (c.today, c.profile)
    gates = _gates(c.plan.planned if rollback else c.plan.current) or {}
    for name, manager in _MANAGERS.items():
        written = writer.state_written(name, gates)
        read = reader.reads_state(name, written)
        if read == written:
            continue
        path = f"/var/lib/kubelet/{name}"
        gated = f" ({PLRM} is on)" if written != writer.state_written(name, {}) else ""
        wrote = f"Kubelet {writer.name} writes {name} as {written.upper()}{gated}"
        reads = ", ".join(sorted(f.upper() for f in reader.state_read(name)))
        expected = f"a format kubelet {reader.name} reads ({reads})"
        fill = {"path": path, "minor": reader.name}
        if read is None:
            text = could_not_restore(manager, path, "checkpoint is corrupted")
            moment = "on a rollback" if rollback else "at start"
            yield (
                "refused",
                Hit(
                    name,
                    expected,
                    written.upper(),
                    f'{wrote}; kubelet {reader.name} reads {reads} only and refuses the file {moment}: "{text}".',
                    fill=fill,
                ),
            )
            continue
        lost = (
            f", without the pod-level assignments ({PLRM} is on) that only {written.upper()}'s data holds"
            if writer.gate_on(PLRM, gates)
            else f"; with {PLRM} off there are no pod-level assignments to lose"
        )
        moment = "on a rollback, " if rollback else ""
        yield (
            "inline",
            Hit(
                name,
                expected,
                written.upper(),
                f"{wrote}, which keeps the {read.upper()} fields inline for older kubelets: {moment}kubelet "
                f"{reader.name} restores those{lost}.",
                fill=fill,
            ),
        )


def _checkpoint_refused(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _checkpoints(c, rollback=False) if kind == "refused")


def _rollback_checkpoint_refused(c: LintContext) -> Iterator[Hit]:
    return (hit for kind, hit in _checkpoints(c, rollback=True) if kind == "refused")


def _checkpoint_inline(c: LintContext) -> Iterator[Hit]:
    for rollback in (False, True):
        yield from (hit for kind, hit in _checkpoints(c, rollback=rollback) if kind == "inline")


UPGRADE_CHECKPOINT_REFUSED = Rule[LintContext](
    "upgrade.checkpoint-refused",
    AREA,
    "warning",
    "Manual action: drain the node, stop the kubelet, remove {path}, install kubelet {minor}, start it, verify, "
    "uncordon.",
    _checkpoint_refused,
    manual=True,
    summary="the planned minor cannot read the checkpoint today's kubelet wrote: it does not start over it",
)
UPGRADE_ROLLBACK_CHECKPOINT_REFUSED = Rule[LintContext](
    "upgrade.rollback-checkpoint-refused",
    AREA,
    "warning",
    "Plan the rollback with it: drain the node, stop the kubelet, remove {path}, then start kubelet {minor}.",
    _rollback_checkpoint_refused,
    summary="today's minor cannot read the checkpoint the planned one writes: a rollback needs the file removed",
)
UPGRADE_CHECKPOINT_INLINE = Rule[LintContext](
    "upgrade.checkpoint-inline",
    AREA,
    "info",
    "Nothing to do: kubelet {minor} restores the fields kept inline; pod-level assignments do not survive.",
    _checkpoint_inline,
    summary="a checkpoint one minor writes, the other restores from the older fields it keeps inline",
)


def pod_level_handling(profile: KubeletProfile, gates: Mapping[str, object] | None) -> str:
    """How ``profile``'s static CPU and Memory managers treat a pod with pod-level ``spec.resources``."""
    skips = profile.skips_pod_level_resources(gates)
    if skips is None:
        return "allocated as one pod-level block (PodLevelResources and PodLevelResourceManagers on)"
    if skips:
        return "skipped: no NUMA hints and no exclusive CPUs or memory"
    return "pinned as its containers ask (the managers do not read spec.resources)"


def _pod_level(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades:
        return
    gates_today, gates_after = _gates(c.plan.current) or {}, _gates(c.plan.planned) or {}
    before, after = pod_level_handling(c.today, gates_today), pod_level_handling(c.profile, gates_after)
    qos_before = c.today.empty_pod_resources_best_effort(gates_today)
    qos_after = c.profile.empty_pod_resources_best_effort(gates_after)
    for pod in c.pods:
        if pod.phase not in ACTIVE_PHASES:
            continue
        model = model_pod(pod)
        if model.pod_level_resources_set and before != after:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                f"as kubelet {c.today.name}: {before}",
                f"as kubelet {c.profile.name}: {after}",
                f"The pod sets pod-level resources (spec.resources). Kubelet {c.today.name}'s static CPU and Memory "
                f"managers: {before}; kubelet {c.profile.name}'s: {after}.",
            )
        elif model.pod_resources_given and not model.has_pod_level_resources and qos_before != qos_after:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                f"QoS as kubelet {c.today.name}",
                f"QoS as kubelet {c.profile.name}",
                f"The pod has an empty spec.resources: kubelet {c.today.name} "
                f"{'treats it as BestEffort' if qos_before else 'takes its QoS class from its containers'}, kubelet "
                f"{c.profile.name} "
                f"{'treats it as BestEffort' if qos_after else 'takes its QoS class from its containers'} "
                "(PodLevelResourcesFixKubeletQOSClass, #137150).",
            )


UPGRADE_POD_LEVEL_RESOURCES = Rule[LintContext](
    "upgrade.pod-level-resources",
    AREA,
    "warning",
    "Check the pod's placement in the upgrade table, and move its resources to its containers if it needs pinning.",
    _pod_level,
    summary="the planned minor's resource managers treat a pod with pod-level resources differently",
)


def _device_nodes(node: Node) -> dict[str, set[int]]:
    out: dict[str, set[int]] = {}
    for device in node.devices:
        out.setdefault(device.resource, set()).update(device.numa or ())
    return out


def _device_hints(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades or c.today.device_hints_over_device_nodes == c.profile.device_hints_over_device_nodes:
        return
    if c.plan.planned.get("topologyManagerPolicy", TOPOLOGY_NONE) == TOPOLOGY_NONE:
        return
    zones = {z.id for z in c.node.numa}
    for resource, hosting in sorted(_device_nodes(c.node).items()):
        hosting &= zones
        if not hosting or hosting == zones:
            continue  # hints over all NUMA nodes either way
        before, after = _hint_words(c.today, hosting, zones), _hint_words(c.profile, hosting, zones)
        yield Hit(
            resource,
            f"as kubelet {c.today.name}: hints {before}",
            f"as kubelet {c.profile.name}: hints {after}",
            f"Kubelet {c.profile.name} offers {resource} hints {after}; kubelet {c.today.name} offers them {before} "
            f"(#138244). Pods asking for {resource} may be admitted or aligned differently.",
        )


def _hint_words(profile: KubeletProfile, hosting: set[int], zones: set[int]) -> str:
    if profile.device_hints_over_device_nodes:
        return f"only over the NUMA nodes holding its devices ({', '.join(map(str, sorted(hosting)))})"
    return f"over all {len(zones)} NUMA nodes, adding the wider masks with NUMA nodes that hold none"


UPGRADE_DEVICE_HINTS = Rule[LintContext](
    "upgrade.device-hints",
    AREA,
    "info",
    "Check the pods asking for {setting} in the upgrade table (pods admitted or pinned differently).",
    _device_hints,
    summary="the planned minor's device hints differ on a node whose devices sit on some NUMA nodes only",
)

UPGRADE_RULES: tuple[Rule[LintContext], ...] = (
    UPGRADE_GATE_REMOVED,
    UPGRADE_GATE_LOCKED,
    UPGRADE_GATE_DEPENDENCY,
    UPGRADE_FIELD_UNKNOWN,
    UPGRADE_OPTION_GATE_NEEDED,
    UPGRADE_OPTION_GATE_DROPPED,
    UPGRADE_CHECKPOINT_REFUSED,
    UPGRADE_ROLLBACK_CHECKPOINT_REFUSED,
    UPGRADE_CHECKPOINT_INLINE,
    UPGRADE_ROLLBACK_CONFIG,
    UPGRADE_POD_LEVEL_RESOURCES,
    UPGRADE_DEVICE_HINTS,
)


# ---------------------------------------------------------------------------------------------
# Pods admitted or pinned differently


def _placement(numa: Mapping[str, Any], cpuset: Mapping[str, Any]) -> str:
    parts = []
    for name in sorted(set(numa) | set(cpuset)):
        where = []
        if numa.get(name):
            where.append("NUMA " + ",".join(map(str, numa[name])))
        if cpuset.get(name):
            where.append(f"CPUs {cpuset[name]}")
        parts.append(f"{name}: {' '.join(where)}")
    return "; ".join(parts)


def _outcome(admitted: bool, reason: str, numa: Mapping[str, Any], cpuset: Mapping[str, Any]) -> str:
    if not admitted:
        return f"rejected: {reason}"
    placed = _placement(numa, cpuset)
    return f"admitted ({placed})" if placed else "admitted"


def _result_fields(r: PodResult) -> tuple[bool, str, dict[str, Any], dict[str, Any]]:
    """A replayed pod as the what-if table holds it (admitted, reason, NUMA and CPUs per container)."""
    numa = {c.name: c.affinity.numa() for c in r.containers if c.affinity is not None and r.admitted}
    cpuset = {c.name: str(c.cpuset) for c in r.containers if c.cpuset}
    return r.admitted, r.reason, numa, cpuset


def _why(plan: NodePlan, pod: Pod | None, before: tuple[Any, ...], after: tuple[Any, ...], earlier: list[str]) -> str:
    """The facts of the two minors that apply to this pod, else the pods admitted before it that the two
    place differently, else the rejection in the kubelet's words."""
    today, new = plan.kubelet.profile, plan.planned_kubelet
    gates_today, gates_after = _gates(plan.current) or {}, _gates(plan.planned) or {}
    reasons = []
    model = model_pod(pod) if pod is not None else None
    if model is not None and model.pod_level_resources_set:
        b, a = pod_level_handling(today, gates_today), pod_level_handling(new, gates_after)
        if a != b:
            reasons.append(f"pod-level resources: {b} as kubelet {today.name}, {a} as kubelet {new.name}")
    asks = {r for c in (pod.containers if pod is not None else ()) for r in c.requests}
    devices = sorted(asks & set(_device_nodes(plan.node)))
    if devices and today.device_hints_over_device_nodes != new.device_hints_over_device_nodes:
        over = "only over the NUMA nodes holding the devices" if new.device_hints_over_device_nodes else "over all"
        reasons.append(f"device hints for {', '.join(devices)}: kubelet {new.name} offers them {over} (#138244)")
    if reasons:
        return "; ".join(reasons)
    if earlier:
        more = f" and {len(earlier) - 1} more" if len(earlier) > 1 else ""
        return f"admitted after {earlier[0]}{more}, which the two minors admit or place differently"
    rejected = before if not before[0] else after if not after[0] else None
    if rejected is not None:
        return f"{rejected[1]}: {rejected[2]}"
    return "another placement under the same configuration"


def admission_changes(
    snapshot: Snapshot, plans: Mapping[str, NodePlan], planned: pd.DataFrame, *, mode: Mode = "drain"
) -> pd.DataFrame:
    """Per pod of a node the plan moves to another kubelet minor: how today's minor and the planned one
    admit it under the planned configuration, where they differ, and why. ``planned`` is the what-if's
    pod table for the same plans (the planned minor's replay); today's minor is replayed here. Nodes whose
    kubelet would not start, or that have no topology, have no per-pod answer (the node table says why)."""
    rows = []
    moving = [node for node in snapshot.nodes if plans[node.name].upgrades]
    # The planned rows grouped by node once: a mask over every pod row per node was quadratic on a fleet.
    by_node = dict(iter(planned.groupby("node", sort=False))) if moving and len(planned) else {}
    for node in moving:
        plan = plans[node.name]
        mine = by_node.get(node.name)
        if mine is None:
            continue
        pods = snapshot.pods_on(node.name)
        replay = replay_node(
            node, pods, plan.target, mode=mode, plan=replace(plan, planned_kubelet=plan.kubelet.profile)
        )
        if replay.refused or replay.unmodelled:
            continue
        after = {r.uid: r for r in mine.itertuples()}
        by_uid = {p.uid: p for p in pods}
        changed: list[str] = []
        for r in replay.results:
            a = after.get(r.uid)
            if a is None:
                continue
            b = _result_fields(r)
            later = (bool(a.admitted), str(a.reason), dict(a.numa), dict(a.cpuset))
            if b[0] == later[0] and b[2:] == later[2:]:
                continue
            rows.append(
                {
                    "node": node.name,
                    "namespace": r.namespace,
                    "pod": r.name,
                    "kubelet today": plan.kubelet.profile.name,
                    "as today's kubelet": _outcome(*b),
                    "kubelet after": plan.planned_kubelet.name,
                    "after": _outcome(*later),
                    "why": _why(
                        plan, by_uid.get(r.uid), (*b[:2], r.message), (later[0], later[1], str(a.message)), changed
                    ),
                }
            )
            changed.append(f"{r.namespace}/{r.name}")
    return pd.DataFrame(rows, columns=CHANGE_COLUMNS)
