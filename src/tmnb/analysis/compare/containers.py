"""Every container on both sides: its alignment, its counterpart across the change, its verdict."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tmnb.analysis.inventory import ADMISSION_REJECTIONS
from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.profiles import resolve
from tmnb.parse.quantity import quantity
from tmnb.snapshot import Allocation, Container, Node, Pod, Snapshot
from tmnb.versions import KubeVersion

VERDICTS = ("now rejected", "lost alignment", "gone", "newly aligned", "moved", "new", "unchanged")
ALIGNMENTS = ("aligned", "cross-NUMA", "shared", "rejected", "not running", "unknown")
#: While this gate is on (every supported minor has it, on by default) exclusive CPUs get no CFS quota.
QUOTA_GATE = "DisableCPUQuotaWithExclusiveCPUs"
SIDE_FIELDS = ("pod", "node", "cpuset", "numa", "exclusive", "alignment", "why", "cfs_quota")
CONTAINER_COLUMNS = [
    "namespace",
    "owner",
    "container",
    "verdict",
    *(f"{f}_{side}" for f in SIDE_FIELDS for side in ("before", "after")),
]


def kubelet_version(node: Node | None) -> KubeVersion | None:
    try:
        return KubeVersion.parse(node.versions.kubelet) if node and node.versions.kubelet else None
    except InputError:
        return None


def _zones(ids: Iterable[int]) -> str:
    return ",".join(map(str, sorted(set(ids))))


# --- one side of a container -----------------------------------------------------------------


@dataclass(frozen=True)
class Side:
    """A container as one snapshot sees it."""

    pod: Pod
    node: str | None
    cpuset: str | None
    numa: str
    exclusive: bool | None
    alignment: str
    why: str
    cfs_quota: bool | None

    @property
    def admitted(self) -> bool:
        return self.alignment != "rejected"


def owner_of(pod: Pod) -> str:
    """``Kind/name`` of the pod's controller; ReplicaSets without a recorded controller lose their hash."""
    owner = pod.owner
    if owner is None:
        return f"Pod/{pod.name}"
    if owner.controller_kind and owner.controller_name:
        return f"{owner.controller_kind}/{owner.controller_name}"
    template_hash = pod.labels.get("pod-template-hash")
    if owner.kind == "ReplicaSet" and template_hash and owner.name.endswith(f"-{template_hash}"):
        return f"Deployment/{owner.name.removesuffix(f'-{template_hash}')}"
    return f"{owner.kind}/{owner.name}"


def _zones_needed(count: int, node: Node) -> int | None:
    """Fewest NUMA zones whose CPUs could hold ``count`` CPUs (None when the node has no zones)."""
    total = 0
    for needed, size in enumerate(sorted((len(CPUSet.parse(z.cpus)) for z in node.numa), reverse=True), start=1):
        total += size
        if total >= count:
            return needed
    return len(node.numa) or None


def _device_zones(alloc: Allocation, node: Node) -> Iterator[tuple[str, set[int]]]:
    known = {(d.resource, d.id): d.numa for d in node.devices}
    for dev in alloc.devices:
        zones = dev.numa if dev.numa is not None else [z for i in dev.ids for z in (known.get((dev.resource, i)) or [])]
        if zones:
            yield dev.resource, set(zones)


def alignment(alloc: Allocation, node: Node) -> tuple[str, str, str]:
    """(alignment, why, NUMA zones of the cpuset) for one allocation on its node."""
    cpus = CPUSet.parse(alloc.cpuset)
    numa = set(alloc.numa) or {z.id for z in node.numa if CPUSet.parse(z.cpus) & cpus}
    where = f"NUMA {_zones(numa)}"
    if not alloc.exclusive:
        return "shared", "shared pool", _zones(numa)
    needed = _zones_needed(len(cpus), node)
    if needed is not None and len(numa) > needed:
        fit = "one zone" if needed == 1 else f"{needed} zones"
        return "cross-NUMA", f"{len(cpus)} CPUs span {where} but fit in {fit}", _zones(numa)
    pinned = [(block.type, set(block.numa)) for block in alloc.memory if block.numa]
    pinned += list(_device_zones(alloc, node))
    for what, zones in pinned:
        if not zones <= numa:
            return "cross-NUMA", f"{what} on NUMA {_zones(zones)}, CPUs on {where}", _zones(numa)
    names = ", ".join(["CPUs", *dict.fromkeys(what for what, _ in pinned)])
    spread = f" ({len(cpus)} CPUs need {needed} zones)" if needed and needed > 1 else ""
    return "aligned", f"{names} on {where}{spread}", _zones(numa)


def _cfs_quota(spec: Container | None, exclusive: bool | None, node: Node | None) -> bool | None:
    """Whether the container runs with a CFS quota: CPU limit set, unless exclusive while the kubelet's
    DisableCPUQuotaWithExclusiveCPUs gate is on."""
    if spec is None or exclusive is None:
        return None
    if "cpu" not in spec.limits:
        return False
    if not exclusive:
        return True
    version = kubelet_version(node)
    if version is None or node is None:
        return None
    gates = node.kubelet.settings.get("featureGates")
    return not resolve(version).gate_on(QUOTA_GATE, gates.value if gates and isinstance(gates.value, dict) else {})


def _cpu_manager_policy(node: Node) -> str | None:
    setting = node.kubelet.settings.get("cpuManagerPolicy")
    return str(setting.value).lower() if setting and setting.value is not None else None


def _wants_exclusive(pod: Pod, spec: Container) -> bool:
    """Whether the static CPU manager gives the container exclusive CPUs: Guaranteed, whole CPUs."""
    cpu = spec.requests.get("cpu")
    if pod.qos_class != "Guaranteed" or cpu is None:
        return False
    try:
        return quantity(cpu, "cpu") % 1 == 0
    except InputError:
        return False


def _unrecorded(node: Node, pod: Pod, spec: Container) -> tuple[str, str, str | None]:
    """(alignment, why, cpuset) of a running container the snapshot holds no allocation for."""
    if _cpu_manager_policy(node) == "none":
        return "shared", "cpuManagerPolicy none: no exclusive CPUs, it runs on every CPU but the reserved", None
    if node.shared_pool is None:
        read = [i.message for i in node.issues if "cpu_manager_state" in i.message]
        return "unknown", "no cpu_manager_state read on this node" + (f" ({read[0]})" if read else ""), None
    if not _wants_exclusive(pod, spec):  # the checkpoint lists exclusive assignments; the rest run on the pool
        return "shared", "shared pool (no exclusive CPUs, so not in cpu_manager_state)", node.shared_pool
    return (
        "unknown",
        "Guaranteed with whole CPUs but not in the node's cpu_manager_state (started after it was read?)",
        None,
    )


def _sides(snapshot: Snapshot) -> dict[tuple[str, str, str], list[Side]]:
    nodes = {n.name: n for n in snapshot.nodes}
    allocs = {(a.pod_uid, a.container): a for n in snapshot.nodes for a in n.allocations}
    found: dict[tuple[str, str, str], list[Side]] = defaultdict(list)
    for pod in sorted(snapshot.pods, key=lambda p: (p.created, p.name)):
        node = nodes.get(pod.node or "")
        specs = [*pod.containers, *(c for c in pod.init_containers if c.restart_policy == "Always")]
        for spec in specs:
            alloc = allocs.get((pod.uid, spec.name))
            cpuset, numa, exclusive = None, "", None
            if pod.phase == "Failed" and pod.reason in ADMISSION_REJECTIONS:
                state, why = "rejected", f"{pod.reason}: {pod.message or ''}".rstrip(": ")
            elif pod.phase != "Running" or node is None:
                state, why = "not running", f"pod is {pod.phase}" + ("" if pod.node else ", not bound to a node")
            elif alloc is None:
                state, why, cpuset = _unrecorded(node, pod, spec)
                exclusive = False if state == "shared" else None
            else:
                state, why, numa = alignment(alloc, node)
                cpuset, exclusive = alloc.cpuset, alloc.exclusive
            quota = _cfs_quota(spec, exclusive, node)
            found[(pod.namespace, owner_of(pod), spec.name)].append(
                Side(pod, pod.node, cpuset, numa, exclusive, state, why, quota)
            )
    return found


# --- matching and verdicts -------------------------------------------------------------------


def _take(
    before: list[Side], after: list[Side], key: Callable[[Side], Hashable]
) -> tuple[list[tuple[Side, Side]], list[Side], list[Side]]:
    """Pair sides with equal ``key`` in order; a ``None`` key never pairs."""
    waiting: dict[Hashable, list[Side]] = defaultdict(list)
    for side in after:
        waiting[key(side)].append(side)
    pairs, rest = [], []
    for side in before:
        k = key(side)
        if k is not None and waiting.get(k):
            pairs.append((side, waiting[k].pop(0)))
        else:
            rest.append(side)
    taken = {id(b) for _, b in pairs}
    return pairs, rest, [s for s in after if id(s) not in taken]


def pair(before: list[Side], after: list[Side]) -> list[tuple[Side | None, Side | None]]:
    """Pair replicas of one owner's container, so that as few as possible look changed: same pod name,
    same node and exclusive CPUs, same node, same admission, then any."""
    stages: list[Callable[[Side], Hashable]] = [
        lambda s: s.pod.name,
        lambda s: (s.node, s.cpuset) if s.node and s.exclusive else None,
        lambda s: (s.node, s.admitted) if s.node else None,
        lambda s: s.admitted,
        lambda s: True,
    ]
    pairs: list[tuple[Side | None, Side | None]] = []
    for key in stages:
        found, before, after = _take(before, after, key)
        pairs += found
    return pairs + [(b, None) for b in before] + [(None, a) for a in after]


def verdict(before: Side | None, after: Side | None) -> str:
    if after is None:
        return "gone"
    if before is None:
        return "now rejected" if after.alignment == "rejected" else "new"
    was, now = before.alignment, after.alignment
    if now == "not running" and was != "not running":
        return "gone"
    if now == "rejected" and was != "rejected":
        return "now rejected"
    if now == "aligned" and was != "aligned":
        return "newly aligned"
    if was == "aligned" and now in {"cross-NUMA", "shared"}:
        return "lost alignment"
    same_place = before.node == after.node and (now == "shared" or before.cpuset == after.cpuset)
    return "unchanged" if was == now and same_place else "moved"


def containers(before: Snapshot, after: Snapshot) -> pd.DataFrame:
    """One row per container matched across the change, with both sides and a verdict."""
    old, new = _sides(before), _sides(after)
    rows = []
    for key in sorted(old.keys() | new.keys()):
        for x, y in pair(old.get(key, []), new.get(key, [])):
            row: dict[str, Any] = dict(zip(("namespace", "owner", "container"), key, strict=True))
            row["verdict"] = verdict(x, y)
            for side, s in (("before", x), ("after", y)):
                for f in SIDE_FIELDS:
                    value = None if s is None else (s.pod.name if f == "pod" else getattr(s, f))
                    row[f"{f}_{side}"] = value
            rows.append(row)
    return pd.DataFrame(rows, columns=CONTAINER_COLUMNS)


# --- fleet views -----------------------------------------------------------------------------


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """Containers, owners and nodes per verdict, every verdict listed, worst first."""
    rows = []
    for name in VERDICTS:
        part = table[table["verdict"] == name]
        nodes = set(part["node_after"].dropna()) | set(part["node_before"].dropna())
        rows.append(
            {
                "verdict": name,
                "containers": len(part),
                "owners": part[["namespace", "owner"]].drop_duplicates().shape[0],
                "nodes": len(nodes),
            }
        )
    return pd.DataFrame(rows)


def alignment_matrix(table: pd.DataFrame) -> pd.DataFrame:
    """Containers by alignment before (rows) and after (columns); (none) = not there."""
    order = [*ALIGNMENTS, "(none)"]
    matrix = pd.crosstab(table["alignment_before"].fillna("(none)"), table["alignment_after"].fillna("(none)"))
    rows = [a for a in order if a in matrix.index]
    cols = [a for a in order if a in matrix.columns]
    return matrix.reindex(index=rows, columns=cols, fill_value=0).rename_axis(index="before", columns="after")


def _before_after(before: object, after: object) -> str:
    """One cell for both sides: the value once when it did not change, else ``before → after``."""
    was, now = ("" if pd.isna(v) else str(v) for v in (before, after))
    if was == now:
        return now
    return f"{was or '–'} → {now or '–'}"


def attention(table: pd.DataFrame) -> pd.DataFrame:
    """Containers whose verdict is not ``unchanged``, worst first, with what explains them; each
    side-by-side field in one column (``before → after``) so the table fits a page."""
    rank = {v: i for i, v in enumerate(VERDICTS)}
    part = table[table["verdict"] != "unchanged"]
    part = part.loc[part["verdict"].map(rank).sort_values(kind="stable").index]
    out = part[["verdict", "namespace", "owner", "container"]].copy()
    for field, title in (("pod", "pod"), ("node", "node"), ("cpuset", "cpuset"), ("numa", "NUMA"), ("why", "why")):
        out[title] = [_before_after(b, a) for b, a in zip(part[f"{field}_before"], part[f"{field}_after"], strict=True)]
    return out.reset_index(drop=True)
