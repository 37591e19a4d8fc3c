"""The pods the planned minor admits or pins differently than today's minor does under the same
configuration: the node's pods replayed as both, each difference with the fact behind it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import pandas as pd

from tmnb.analysis.upgrade.gates import feature_gates
from tmnb.analysis.upgrade.managers import device_nodes, pod_level_handling
from tmnb.analysis.whatif import replay_node
from tmnb.kubelet.node import PodResult
from tmnb.replay import Mode, NodePlan, model_pod
from tmnb.snapshot import Pod, Snapshot

CHANGE_COLUMNS = ["node", "namespace", "pod", "kubelet today", "as today's kubelet", "kubelet after", "after", "why"]


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
    gates_today, gates_after = feature_gates(plan.current) or {}, feature_gates(plan.planned) or {}
    reasons = []
    model = model_pod(pod) if pod is not None else None
    if model is not None and model.pod_level_resources_set:
        b, a = pod_level_handling(today, gates_today), pod_level_handling(new, gates_after)
        if a != b:
            reasons.append(f"pod-level resources: {b} as kubelet {today.name}, {a} as kubelet {new.name}")
    asks = {r for c in (pod.containers if pod is not None else ()) for r in c.requests}
    devices = sorted(asks & set(device_nodes(plan.node)))
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
