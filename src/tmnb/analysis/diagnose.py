"""Why the kubelet refused a pod, and what would have admitted it.

A rejected pod is replayed on its node as the snapshot saw the node (its checkpoints' allocations
kept, as after a kubelet restart), or, for a pod a what-if rejects, as the target's kubelet met it
(``diagnose_whatif``): each provider's hints, the policy's merge, the model's verdict. Every remedy
is a changed copy of the pod, the node's settings or its pods, replayed the same way; only remedies
the model admits are shown, best first.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.errors import Unpredictable
from tmnb.kubelet.names import (
    BEST_EFFORT,
    RESTRICTED,
    SCOPE_CONTAINER,
    SCOPE_POD,
    SINGLE_NUMA_NODE,
)
from tmnb.kubelet.node import ExistingAllocation, ModelSettings, NodeModel, NodeSimulator
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.topologymanager.hints import ProviderHints
from tmnb.parse.quantity import quantity
from tmnb.replay.node_input import Mode, config_refusal, model_for, model_pod, replay_order
from tmnb.replay.plan import plan_for
from tmnb.report.tables import some
from tmnb.snapshot import Node, Pod, Snapshot
from tmnb.snapshot.taints import keeps_off, taint_text, untolerated

PREFER_CLOSEST = "prefer-closest-numa-nodes"
NO_FIT = "none: cannot fit"
POOL_LABEL = "tmnb.dev/pool"
ADMITTED_NOW = (
    "the node as this snapshot saw it would admit the pod now: it was refused under an earlier state "
    "(other pods held the CPUs then, or the settings differed)"
)
ADMITTED_ALONE = (
    "the model admits it in the state the replay reached before it, when asked alone: the rejection depends "
    "on the batch it came in"
)


@dataclass(frozen=True)
class Remedy:
    """One change that the model admits the pod under, with where it was checked."""

    kind: str
    change: str
    checked_on: str
    note: str = ""


@dataclass(frozen=True)
class Diagnosis:
    pod: str
    node: str
    reason: str
    message: str
    #: the model rejects the pod too, so the explanation below is the kubelet's
    reproduced: bool
    why: str
    hints: list[dict[str, str]] = field(default_factory=list)
    merged: str = ""
    remedies: list[Remedy] = field(default_factory=list)


def _model(snapshot: Snapshot, node: str) -> NodeModel:
    return model_for(plan_for(snapshot.node(node), {}), mode="running")


def _admits(model: NodeModel, pod: ModelPod) -> bool:
    try:
        return NodeSimulator(model).admit(pod).admitted
    except ConfigRejected:
        return False


def _hint_rows(sim: NodeSimulator, pod: ModelPod) -> tuple[list[dict[str, str]], str]:
    names = ("device manager", "CPU manager", "memory manager")
    policy, pod_scope = sim.topology.policy, sim.topology.scope.name == SCOPE_POD
    groups: list[tuple[str, list[ProviderHints]]] = (
        [("(pod)", [p.get_pod_topology_hints(pod) for p in sim.providers])]
        if pod_scope
        else [(c.name, [p.get_topology_hints(pod, c) for p in sim.providers]) for c in pod.all_containers()]
    )
    rows, merged = [], []
    for container, answers in groups:
        for provider, answer in zip(names, answers, strict=True):
            for resource, hints in (answer or {}).items():
                shown = "any NUMA node" if hints is None else " ".join(map(str, hints)) or NO_FIT
                rows.append({"container": container, "provider": provider, "resource": resource, "hints": shown})
        hint, admit = policy.merge(answers)
        merged.append(f"{container}: {hint} → {'admit' if admit else 'reject'}")
    return rows, "; ".join(merged)


def _exclusive_cpus(container: ModelContainer) -> int:
    """Whole CPUs a Guaranteed container gets exclusively; 0 for a fractional or absent request."""
    value = quantity(container.requests.get("cpu") or container.limits.get("cpu") or "0", f"{container.name}.cpu")
    return int(value) if value == value.to_integral_value() else 0


def _why(
    sim: NodeSimulator, snapshot: Snapshot, node: str, pod: ModelPod, reason: str, hints: list[dict[str, str]]
) -> str:
    """The sentence that names the constraint: the exclusive CPUs asked for against the largest
    free set on one NUMA node, when that is what does not fit."""
    free = set(sim.free_cpus())
    by_numa = {z.id: len(free & set(CPUSet.parse(z.cpus))) for z in snapshot.node(node).numa}
    wanted = {c.name: _exclusive_cpus(c) for c in pod.all_containers()}
    name, most = max(wanted.items(), key=lambda kv: kv[1], default=("", 0))
    per_zone = ", ".join(f"NUMA {z}: {n} free" for z, n in sorted(by_numa.items()))
    if most and by_numa:
        best = max(by_numa.values())
        total = sum(wanted.values()) if sim.topology.scope.name == SCOPE_POD else most
        who = "the pod asks" if sim.topology.scope.name == SCOPE_POD else f"container {name} asks"
        if total > best:
            need = {
                SINGLE_NUMA_NODE: "single-numa-node needs them on one NUMA node",
                RESTRICTED: "restricted admits only the narrowest NUMA placement the CPUs could ever have",
            }.get(sim.topology.policy.name, f"{sim.topology.policy.name} refused the wider placement")
            return (
                f"{who} for {total} exclusive CPUs; the largest free set on one NUMA node is {best} ({per_zone}); "
                f"{need}"
            )
    short = sorted({h["resource"] for h in hints if h["hints"] == NO_FIT})
    if short:
        return (
            f"{', '.join(short)}: no NUMA placement has enough free of it for the request (its provider gives no "
            f"hint at all); CPUs free per NUMA node: {per_zone}"
        )
    if reason == "SMTAlignmentError":
        return f"the CPU request is not a multiple of the {sim.cpu_topology.cpus_per_core()} CPUs of a core"
    return f"no NUMA placement satisfies every resource manager at once ({per_zone})"


def _with_cpus(pod: ModelPod, name: str, cpus: int) -> ModelPod:
    def resize(c: ModelContainer) -> ModelContainer:
        if c.name != name:
            return c
        return dataclasses.replace(c, requests={**c.requests, "cpu": str(cpus)}, limits={**c.limits, "cpu": str(cpus)})

    return dataclasses.replace(
        pod, containers=tuple(map(resize, pod.containers)), init_containers=tuple(map(resize, pod.init_containers))
    )


def _smaller_request(model: NodeModel, sim: NodeSimulator, pod: ModelPod, node: str) -> Iterable[Remedy]:
    wanted = {c.name: _exclusive_cpus(c) for c in pod.all_containers()}
    name, most = max(wanted.items(), key=lambda kv: kv[1], default=("", 0))
    whole_cores = model.settings.cpu_manager_policy_options.get("full-pcpus-only") == "true"
    step = sim.cpu_topology.cpus_per_core() if whole_cores else 1
    for cpus in range((most - 1) // step * step, 0, -step):
        if _admits(model, _with_cpus(pod, name, cpus)):
            yield Remedy("smaller request", f"container {name}: cpu {most} → {cpus} (requests and limits)", node)
            return


def _settings(model: NodeModel, settings: ModelSettings) -> NodeModel:
    return dataclasses.replace(model, settings=settings)


def _setting_changes(model: NodeModel, pod: ModelPod, node: str) -> Iterable[Remedy]:
    s = model.settings
    other = SCOPE_CONTAINER if s.topology_manager_scope == SCOPE_POD else SCOPE_POD
    if _admits(_settings(model, dataclasses.replace(s, topology_manager_scope=other)), pod):
        yield Remedy("scope", f"topologyManagerScope: {s.topology_manager_scope} → {other}", node)
    options = dict(s.topology_manager_policy_options)
    if s.topology_manager_policy in (RESTRICTED, BEST_EFFORT) and options.get(PREFER_CLOSEST) != "true":
        closer = _settings(
            model, dataclasses.replace(s, topology_manager_policy_options={**options, PREFER_CLOSEST: "true"})
        )
        if _admits(closer, pod):
            yield Remedy("policy option", f'topologyManagerPolicyOptions: {PREFER_CLOSEST}: "true"', node)
    if s.topology_manager_policy != BEST_EFFORT and _admits(
        _settings(model, dataclasses.replace(s, topology_manager_policy=BEST_EFFORT)), pod
    ):
        yield Remedy(
            "policy",
            f"topologyManagerPolicy: {s.topology_manager_policy} → {BEST_EFFORT}",
            node,
            "admitted, but its CPUs and memory may then span NUMA nodes",
        )


def _moving_pods(snapshot: Snapshot, model: NodeModel, pod: ModelPod, node: str) -> Iterable[Remedy]:
    """The fewest pods (largest exclusive holders first, at most three) whose leaving admits it."""
    names = {p.uid: f"{p.namespace}/{p.name}" for p in snapshot.pods}
    names |= {a.pod_uid: f"{a.namespace}/{a.pod}" for a in snapshot.node(node).allocations if a.pod}
    cpus: dict[str, int] = {}
    devices: dict[str, int] = {}
    uids: dict[str, str] = {}
    for a in model.allocations:
        name = names.get(a.pod_uid, a.pod_uid)
        uids[name] = a.pod_uid
        if a.cpus:
            cpus[name] = cpus.get(name, 0) + len(CPUSet.parse(a.cpus))
        devices[name] = devices.get(name, 0) + sum(len(ids) for ids in a.devices.values())
    wants_devices = any("/" in r for c in pod.all_containers() for r in c.requests)  # vendor/resource names

    def rank(n: str) -> tuple[int, int, str]:
        first, second = (devices[n], cpus.get(n, 0)) if wants_devices else (cpus.get(n, 0), devices[n])
        return (-first, -second, n)

    holders = sorted((n for n in uids if cpus.get(n) or devices.get(n)), key=rank)
    moved: list[str] = []
    for name in holders[:3]:
        moved.append(name)
        gone = {uids[n] for n in moved}
        freed = dataclasses.replace(model, allocations=tuple(a for a in model.allocations if a.pod_uid not in gone))
        if _admits(freed, pod):
            held = [f"{sum(cpus.get(n, 0) for n in moved)} exclusive CPUs"]
            if any(devices[n] for n in moved):
                held.append(f"{sum(devices[n] for n in moved)} device(s)")
            yield Remedy("free resources", f"move {', '.join(moved)} off {node}", node, f"frees {' and '.join(held)}")
            return


def _offers(other: Node, pod: ModelPod) -> bool:
    """The node has the allocatable CPU and every extended resource the pod requests: the model's
    managers ignore resources a node lacks, where the scheduler would never place the pod."""
    wanted: dict[str, Decimal] = {}
    for c in pod.containers:
        for resource, value in c.requests.items():
            wanted[resource] = wanted.get(resource, Decimal(0)) + quantity(value, f"{pod.name}.{resource}")
    for resource, amount in wanted.items():
        if resource in ("memory", "ephemeral-storage") or resource.startswith("hugepages-"):
            continue
        have = other.allocatable.get(resource)
        if have is None or quantity(have, f"{other.name}.allocatable.{resource}") < amount:
            return False
    return True


#: (pool, the taints the pod does not tolerate there) -> nodes whose model admits it
_Group = dict[tuple[str, str], list[str]]


def _other_pools(snapshot: Snapshot, pod: Pod, mpod: ModelPod, pool_of: Callable[[str], str]) -> Iterable[Remedy]:
    """Nodes whose model admits the pod, by pool, where the scheduler would place it. A cordoned node,
    or one tainted against the pod, is never offered as if it were free: a cordoned one is named beside
    its pool's remedy, and only when no other node admits the pod are they offered, with what they need
    (an uncordon; a toleration its pool's owners agree to, since a taint keeps other workloads off on purpose)."""
    placeable: _Group = {}
    cordoned: _Group = {}
    tainted: _Group = {}
    for other in snapshot.nodes:
        if other.name == pod.node or not other.ready or not _offers(other, mpod):
            continue
        try:
            model = _model(snapshot, other.name)
        except (InputError, ConfigRejected):
            continue
        if not _admits(model, mpod):
            continue
        off = keeps_off(other, pod.tolerations)
        missing = ", ".join(map(taint_text, untolerated(other.taints, pod.tolerations))) if off != "cordoned" else ""
        group = cordoned if off == "cordoned" else tainted if off else placeable
        group.setdefault((pool_of(other.name), missing), []).append(other.name)
    here = pool_of(pod.node or "")

    def where(pool: str) -> str:
        return "other nodes of this pool" if pool == here else f"pool {pool}"

    def ranked(group: _Group) -> list[tuple[str, str, str]]:
        order = sorted(group.items(), key=lambda kv: (kv[0][0] == here, -len(kv[1]), kv[0]))
        return [(pool, taints, some(sorted(nodes), 3)) for (pool, taints), nodes in order]

    for pool, _, shown in ranked(placeable):
        skipped = sorted(cordoned.get((pool, ""), []))
        verb = "is" if len(skipped) == 1 else "are"
        note = f"{some(skipped, 3)} would admit it too, but {verb} cordoned" if skipped else ""
        yield Remedy("another node", f"schedule it on {where(pool)}: {shown}", shown, note)
    if placeable:
        return
    for pool, _, shown in ranked(cordoned):
        yield Remedy("another node", f"schedule it on {where(pool)} once uncordoned: {shown}", shown,
                     "cordoned now: whoever cordoned it says when it takes pods again")  # fmt: skip
    for pool, taints, shown in ranked(tainted):
        yield Remedy("another node", f"tolerate {taints} and schedule it on {where(pool)}: {shown}", shown,
                     "the pool is tainted to keep other workloads off: agree with its owners first")  # fmt: skip


def diagnose(snapshot: Snapshot, pod: Pod, *, pool_label: str = POOL_LABEL) -> Diagnosis:
    """Explain one rejected pod from the snapshot that holds it and its node."""
    if not pod.node:
        raise InputError(f"pod {pod.namespace}/{pod.name} has no node: nothing to replay")
    try:
        model = _model(snapshot, pod.node)
        return explain(snapshot, pod, model, reason=pod.reason or "", message=pod.message or "", pool_label=pool_label)
    except ConfigRejected as exc:  # the model's kubelet does not start (``explain`` starts it first)
        why = f"the node's kubelet would not start: {exc}"
        return Diagnosis(f"{pod.namespace}/{pod.name}", pod.node, pod.reason or "", pod.message or "", False, why)


def explain(
    snapshot: Snapshot,
    pod: Pod,
    model: NodeModel,
    *,
    reason: str,
    message: str,
    pool_label: str = POOL_LABEL,
    admitted_why: str = ADMITTED_NOW,
) -> Diagnosis:
    """Why the kubelet ``model`` (the pod's node as the pod met it) rejects ``pod`` with ``reason``
    and ``message``: each provider's hints, the merge, the constraint in numbers, and the remedies the
    model admits. ``admitted_why`` is the explanation when the model admits the pod after all."""
    node = pod.node or model.name
    who = f"{pod.namespace}/{pod.name}"
    mpod = model_pod(pod)
    sim = NodeSimulator(model)
    hints, merged = _hint_rows(sim, mpod)
    result = NodeSimulator(model).admit(mpod)
    why = admitted_why if result.admitted else _why(sim, snapshot, node, mpod, result.reason or reason, hints)
    labels = {n.name: n.labels for n in snapshot.nodes}
    remedies: list[Remedy] = []
    if not result.admitted:
        remedies += _smaller_request(model, sim, mpod, node)
        remedies += _setting_changes(model, mpod, node)
        remedies += _moving_pods(snapshot, model, mpod, node)
        remedies += _other_pools(snapshot, pod, mpod, lambda n: labels.get(n, {}).get(pool_label, "(no pool)"))
    return Diagnosis(who, node, reason, message, not result.admitted, why, hints, merged, remedies)


def diagnose_whatif(
    snapshot: Snapshot, node: str, target: Mapping[str, Any], *, mode: Mode = "drain"
) -> list[Diagnosis]:
    """Each pod a what-if of ``target`` rejects on ``node``, explained as the target's kubelet met it:
    the node's pods are replayed as the what-if replays them, and each rejected one is explained in the
    state the pods before it left (remedies are checked in that state). Empty when the node is not
    predicted or its kubelet would not start: the what-if says why."""
    found = snapshot.node(node)
    if not found.cpus or not found.numa or config_refusal(found) is not None:
        return []
    try:
        model = model_for(plan_for(found, target), mode)
        sim = NodeSimulator(model)
    except (ConfigRejected, Unpredictable):
        return []
    out = []
    for pod in replay_order(snapshot.pods_on(node)):
        before = _held(sim)
        result = sim.admit(model_pod(pod), sources_ready=mode != "restart")  # a restart's batch cleans up after
        if not result.admitted:
            at = dataclasses.replace(model, allocations=before, state_files=None)
            out.append(
                explain(snapshot, pod, at, reason=result.reason, message=result.message, admitted_why=ADMITTED_ALONE)
            )
    return out


def _held(sim: NodeSimulator) -> tuple[ExistingAllocation, ...]:
    """What the containers hold in ``sim`` now, as a model of the node starts with it: the exclusive CPUs
    and memory blocks its managers checkpoint, the devices the device manager gave."""
    cpu, memory = sim.checkpoint_states()
    devices: dict[tuple[str, str], dict[str, tuple[str, ...]]] = {}
    for (uid, container, resource), ids in sim.devices.allocated.items():
        devices.setdefault((uid, container), {})[resource] = ids
    held = {(u, c) for u, cs in cpu.entries.items() for c in cs} | {
        (u, c) for u, cs in memory.entries.items() for c in cs
    }
    return tuple(
        ExistingAllocation(
            u,
            c,
            str(cpu.entries.get(u, {}).get(c, "")),
            tuple(memory.entries.get(u, {}).get(c) or ()),
            devices.get((u, c), {}),
        )
        for u, c in sorted(held | set(devices))
    )
