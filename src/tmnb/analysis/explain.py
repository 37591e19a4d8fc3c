"""A pod the what-if rejects, explained as 06-postmortem explains a rejection: each provider's hints, the
policy's merge, the constraint in numbers and the remedies the model admits (``diagnose``), so a person
reading 03 or ``tmnb whatif`` learns why, not only that, a pod would be refused.

``explanation_lines`` is one explanation as text lines (what a terminal prints); ``explain_rejections``
explains a what-if's rejections as readiness needs them: pods of one controller refused on one node for
one reason once, on at most ``EXPLAINED_NODES`` nodes, and, on a fleet of more than ``FEW_NODES``
nodes, the "another node" remedy checked on the nodes of each pool with the most unrequested CPU (every
node would cost a replay each, minutes at a fleet's size).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tmnb.analysis.diagnose import Diagnosis, diagnose_whatif
from tmnb.analysis.occupancy import pool_of
from tmnb.parse.quantity import parse_quantity
from tmnb.replay import Mode
from tmnb.report.tables import counted, some
from tmnb.snapshot import Pod, Snapshot

#: Nodes whose rejections 03 explains (the replays behind one explanation take a tenth of a second or more).
EXPLAINED_NODES = 8
#: Up to this many nodes every node is a candidate for the "another node" remedy; beyond, ``PER_POOL`` per pool.
FEW_NODES = 64
PER_POOL = 3
COLUMNS = ["node", "pod", "reason", "why", "hints", "merge", "would admit", "refused the same way"]


@dataclass(frozen=True)
class Explained:
    """One rejection explained, and the other pods of its controller refused on its node for its reason."""

    diagnosis: Diagnosis
    alike: tuple[str, ...] = ()


def _hints(d: Diagnosis) -> str:
    return "; ".join(f"{h['container']} {h['provider']} {h['resource']}: {h['hints']}" for h in d.hints)


def _remedies(d: Diagnosis) -> list[str]:
    return [f"{r.change} (checked on {r.checked_on})" + (f": {r.note}" if r.note else "") for r in d.remedies]


def explanation_lines(d: Diagnosis, alike: Sequence[str] = ()) -> list[str]:
    """A rejected pod's explanation as text lines, indented under the kubelet's words: why (the constraint
    in numbers), each provider's hints, the merge, and what would admit it, each remedy checked with the
    model, best first (``alike``: other pods of its controller refused the same way)."""
    lines = [f"{d.pod} on {d.node}: {d.reason}: {d.message}"]
    lines.append(f"  why: {d.why}" if d.reproduced else f"  why (the model does not reproduce it): {d.why}")
    if d.hints:
        lines.append(f"  hints: {_hints(d)}")
    if d.merged:
        lines.append(f"  merge: {d.merged}")
    remedies = _remedies(d)
    if remedies:
        lines.append("  would admit it (each checked with the model, best first):")
        lines += [f"    {i}. {text}" for i, text in enumerate(remedies, start=1)]
    elif d.reproduced:
        lines.append("  would admit it: no single change the model tried; resize the pod or add capacity")
    if alike:
        lines.append(f"  refused the same way: {counted(len(alike), 'more pod')} of its controller: {some(alike, 5)}")
    return lines


def _freest(snapshot: Snapshot) -> dict[str, list[str]]:
    """Per pool, its Ready nodes with the most unrequested CPU first: each node's allocatable CPU less what
    its pods request (the scheduler's view of room, ranked once for every explanation)."""
    pools: dict[str, list[tuple[float, str]]] = {}
    for node in snapshot.nodes:
        if node.ready:
            pods = snapshot.pods_on(node.name)
            requested = sum(float(parse_quantity(c.requests.get("cpu", "0"))) for p in pods for c in p.containers)
            room = float(parse_quantity(node.allocatable.get("cpu", "0"))) - requested
            pools.setdefault(pool_of(node), []).append((-room, node.name))
    return {pool: [name for _, name in sorted(ranked)] for pool, ranked in pools.items()}


def _scope(snapshot: Snapshot, node: str, freest: dict[str, list[str]]) -> Snapshot:
    """The snapshot an explanation on ``node`` replays: the whole fleet when it is small, else ``node`` and
    the ``PER_POOL`` freest other nodes of each pool (``_freest``)."""
    if len(snapshot.nodes) <= FEW_NODES:
        return snapshot
    kept = {node} | {name for names in freest.values() for name in [n for n in names if n != node][:PER_POOL]}
    return dataclasses.replace(
        snapshot, nodes=[n for n in snapshot.nodes if n.name in kept], pods=[p for p in snapshot.pods if p.node in kept]
    )


def _owner(pod: Pod | None) -> str:
    if pod is None or pod.owner is None:
        return ""
    return f"{pod.owner.controller_kind or pod.owner.kind}/{pod.owner.controller_name or pod.owner.name}"


def explain_rejections(
    snapshot: Snapshot, pods: pd.DataFrame, target: Mapping[str, Any], mode: Mode
) -> list[Explained]:
    """The what-if's rejections (``pods``: its admission frame) explained on the first ``EXPLAINED_NODES``
    nodes, by name, where it rejects any."""
    rejected = pods[~pods["admitted"]] if len(pods) else pods
    nodes = sorted(set(rejected["node"])) if len(rejected) else []
    freest = _freest(snapshot) if nodes and len(snapshot.nodes) > FEW_NODES else {}
    out: dict[tuple[str, str, str], list[Diagnosis]] = {}
    for node in nodes[:EXPLAINED_NODES]:
        by_name = {f"{p.namespace}/{p.name}": p for p in snapshot.pods_on(node)}
        for d in diagnose_whatif(_scope(snapshot, node, freest), node, target, mode=mode):
            out.setdefault((node, _owner(by_name.get(d.pod)) or d.pod, d.reason), []).append(d)
    return [Explained(first, tuple(o.pod for o in others)) for first, *others in out.values()]


def rejection_table(explained: Sequence[Explained]) -> pd.DataFrame:
    """03's rejected pods, one row per explanation."""
    rows = [
        {
            "node": e.diagnosis.node,
            "pod": e.diagnosis.pod,
            "reason": f"{e.diagnosis.reason}: {e.diagnosis.message}",
            "why": e.diagnosis.why,
            "hints": _hints(e.diagnosis),
            "merge": e.diagnosis.merged,
            "would admit": "; ".join(f"{i}. {t}" for i, t in enumerate(_remedies(e.diagnosis), start=1)),
            "refused the same way": some(list(e.alike), 5),
        }
        for e in explained
    ]
    return pd.DataFrame(rows, columns=COLUMNS)


def verdict_line(e: Explained, rejected: int) -> str:
    """A node's rejections for the verdict block: how many, the first one's constraint and best remedy."""
    d = e.diagnosis
    fix = f" **Would admit it:** {d.remedies[0].change} (checked on {d.remedies[0].checked_on})." if d.remedies else ""
    return f"**{d.node}**: {counted(rejected, 'pod')} would be rejected, first {d.pod} ({d.reason}): {d.why}.{fix}"
