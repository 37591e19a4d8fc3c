"""Compare two snapshots taken before and after a change: settings per node, and every container.

Containers are matched by namespace, owner (the controller, e.g. ``Deployment/web``; the pod
itself when it has none) and container name, because recreated pods get new names. Replicas
of one owner are interchangeable, so they are paired to show as few changes as there are: by pod
name first (StatefulSets, pods that were not recreated), then same node and CPUs, then same node,
then admitted with admitted, then in creation order.

A container's **alignment**:

- ``aligned``: exclusive CPUs on one NUMA zone (or on as few zones as its CPU count needs), and
  its pinned memory and its devices with NUMA affinity on those zones;
- ``cross-NUMA``: exclusive CPUs, but spread over more zones than needed, or memory or devices
  on other zones;
- ``shared``: CPUs from the shared pool (alignment does not apply);
- ``rejected``: the kubelet refused the pod at admission;
- ``not running``: pending, unbound or finished; ``unknown``: running, but the snapshot has no
  allocation for it (the why says whether the node's cpu_manager_state was read at all). Under
  ``cpuManagerPolicy: none`` the kubelet keeps no CPU state and every container is ``shared``.

The **verdict** of a matched pair, worst first: ``now rejected``, ``lost alignment``, ``gone``
(no running counterpart after the change), ``newly aligned``, ``moved`` (other node or CPUs),
``new`` (only after), ``unchanged``. Shared-pool containers only move when their node changes:
the pool itself shifts whenever any exclusive allocation on the node changes.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.inventory import ADMISSION_REJECTIONS
from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.quantity import quantity
from tmnb.snapshot import Allocation, Container, Node, Pod, Snapshot
from tmnb.verdict import Verdict
from tmnb.versions import KubeVersion

VERDICTS = ("now rejected", "lost alignment", "gone", "newly aligned", "moved", "new", "unchanged")
ALIGNMENTS = ("aligned", "cross-NUMA", "shared", "rejected", "not running", "unknown")
#: From this kubelet on, DisableCPUQuotaWithExclusiveCPUs (default on) drops the CFS quota of exclusive CPUs.
QUOTA_GATE, QUOTA_GATE_SINCE = "DisableCPUQuotaWithExclusiveCPUs", KubeVersion(1, 33)
SIDE_FIELDS = ("pod", "node", "cpuset", "numa", "exclusive", "alignment", "why", "cfs_quota")
CONTAINER_COLUMNS = [
    "namespace",
    "owner",
    "container",
    "verdict",
    *(f"{f}_{side}" for f in SIDE_FIELDS for side in ("before", "after")),
]
DIFF_COLUMNS = ["node", "setting", "before", "after", "source_before", "source_after", "change"]
CONFOUNDER_COLUMNS = ["confounder", "affects", "scope", "detail"]


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def _version(node: Node | None) -> KubeVersion | None:
    try:
        return KubeVersion.parse(node.versions.kubelet) if node and node.versions.kubelet else None
    except InputError:
        return None


def _zones(ids: Iterable[int]) -> str:
    return ",".join(map(str, sorted(set(ids))))


# --- settings --------------------------------------------------------------------------------


def settings_diff(before: Snapshot, after: Snapshot) -> pd.DataFrame:
    """Per node, every kubelet setting whose value or deciding layer differs, and version changes."""
    old, new = {n.name: n for n in before.nodes}, {n.name: n for n in after.nodes}
    rows = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            change = "node added" if a is None else "node removed"
            rows.append({"node": name, "setting": "(node)", "before": "", "after": "", "change": change})
            continue
        if a.versions.kubelet != b.versions.kubelet:
            rows.append(
                {
                    "node": name,
                    "setting": "kubelet version",
                    "before": _show(a.versions.kubelet),
                    "after": _show(b.versions.kubelet),
                    "change": "version",
                }
            )
        for setting in sorted(a.kubelet.settings.keys() | b.kubelet.settings.keys()):
            x, y = a.kubelet.settings.get(setting), b.kubelet.settings.get(setting)
            vx, vy = _show(x.value if x else None), _show(y.value if y else None)
            sx, sy = (x.source if x else ""), (y.source if y else "")
            if vx != vy or sx != sy:
                rows.append(
                    {
                        "node": name,
                        "setting": setting,
                        "before": vx,
                        "after": vy,
                        "source_before": sx,
                        "source_after": sy,
                        "change": "value" if vx != vy else "source only",
                    }
                )
    return pd.DataFrame(rows, columns=DIFF_COLUMNS).fillna("")


def settings_changes(diff: pd.DataFrame, examples: int = 3) -> pd.DataFrame:
    """The fleet view of a settings diff: each distinct change once, with how many nodes made it."""
    columns = ["setting", "before", "after", "change", "nodes", "examples"]
    if diff.empty:
        return pd.DataFrame(columns=columns)
    grouped = diff.groupby(["setting", "before", "after", "change"], sort=False)["node"]
    table = grouped.agg(
        nodes="count",
        examples=lambda s: ", ".join(sorted(s)[:examples]) + (", …" if len(s) > examples else ""),
    )
    return table.reset_index().sort_values(["nodes", "setting"], ascending=[False, True], ignore_index=True)[columns]


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
    """Whether the container runs with a CFS quota: CPU limit set, unless exclusive on a 1.33+ kubelet."""
    if spec is None or exclusive is None:
        return None
    if "cpu" not in spec.limits:
        return False
    if not exclusive:
        return True
    version = _version(node)
    if version is None:
        return None
    gates = node.kubelet.settings.get("featureGates") if node else None
    enabled = (gates.value if gates and isinstance(gates.value, dict) else {}).get(QUOTA_GATE, True)
    return not (version >= QUOTA_GATE_SINCE and enabled)


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


def _before_after(before: Any, after: Any) -> str:
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


Confounder = dict[str, Any]
_RUNNING = ["aligned", "cross-NUMA", "shared", "unknown"]


def _scope(rows: pd.DataFrame) -> list[dict[str, str]]:
    """The workloads a confounder touches, as label sets the statistics' groups can be matched on."""
    pairs = rows[["namespace", "container"]].drop_duplicates().sort_values(["namespace", "container"])
    return pairs.to_dict("records")


def _quota(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    lost = table["cfs_quota_before"].eq(True) & table["cfs_quota_after"].eq(False)
    gained = table["cfs_quota_before"].eq(False) & table["cfs_quota_after"].eq(True)
    if lost.any():
        yield {
            "confounder": "CFS quota removed",
            "affects": ["throttling", "latency"],
            "scope": _scope(table[lost]),
            "detail": f"{lost.sum()} container(s) lost their CFS quota: from kubelet 1.33 ({QUOTA_GATE}, on by "
            "default) containers with exclusive CPUs get none, so CPU throttling drops (and tail latency may "
            "improve) whatever NUMA alignment did",
        }
    if gained.any():
        yield {
            "confounder": "CFS quota added",
            "affects": ["throttling", "latency"],
            "scope": _scope(table[gained]),
            "detail": f"{gained.sum()} container(s) run with a CFS quota again (shared CPUs now, an older kubelet, "
            f"or {QUOTA_GATE} turned off), so throttling can rise whatever NUMA alignment did",
        }


def _kubelet_versions(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    old, new = {n.name: _version(n) for n in before.nodes}, {n.name: _version(n) for n in after.nodes}
    changed = [n for n in sorted(old.keys() & new.keys()) if old[n] != new[n]]
    if changed:
        upgrades = "; ".join(sorted({f"{old[n]} → {new[n]}" for n in changed}))
        on_them = table["node_before"].isin(changed) | table["node_after"].isin(changed)
        yield {
            "confounder": "kubelet version changed",
            "affects": ["all"],
            "scope": _scope(table[on_them]),
            "detail": f"{len(changed)} node(s) changed kubelet version ({upgrades}): everything else in those "
            "releases changed at the same time",
        }


def _exclusive(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    known = table["exclusive_before"].notna() & table["exclusive_after"].notna()
    flipped = known & (table["exclusive_before"] != table["exclusive_after"])
    if flipped.any():
        yield {
            "confounder": "exclusive CPUs changed",
            "affects": ["cpu", "throttling", "latency"],
            "scope": _scope(table[flipped]),
            "detail": f"{flipped.sum()} container(s) moved between the shared pool and exclusive CPUs, which changes "
            "CPU contention independently of NUMA placement",
        }


def _replicas(table: pd.DataFrame, before: Snapshot, after: Snapshot) -> Iterator[Confounder]:
    counts = {
        side: table[table[f"alignment_{side}"].isin(_RUNNING)].groupby(["namespace", "owner"]).size()
        for side in ("before", "after")
    }
    both = pd.concat(counts, axis=1).fillna(0).astype(int)
    scaled = both[both["before"] != both["after"]]
    if len(scaled):
        examples = ", ".join(f"{owner} {r.before}→{r.after}" for (_, owner), r in scaled.head(3).iterrows())
        owners = table.set_index(["namespace", "owner"]).index.isin(scaled.index)
        yield {
            "confounder": "running replicas changed",
            "affects": ["cpu", "latency"],
            "scope": _scope(table[owners]),
            "detail": f"{len(scaled)} owner(s) run a different number of containers ({examples}"
            f"{', …' if len(scaled) > 3 else ''}): load per replica shifts",
        }


def confounders(before: Snapshot, after: Snapshot, table: pd.DataFrame) -> pd.DataFrame:
    """Other things that changed between the snapshots and move application metrics on their own.

    ``affects`` lists the signal kinds (cpu, throttling, latency, or all) whose statistics get the note;
    ``scope`` the workloads (namespace, container) concerned.
    """
    rules = (_quota, _kubelet_versions, _exclusive, _replicas)
    rows = [row for rule in rules for row in rule(table, before, after)]
    return pd.DataFrame(rows, columns=CONFOUNDER_COLUMNS)


def headline(before: Snapshot, after: Snapshot, diff: pd.DataFrame, table: pd.DataFrame) -> str:
    """Markdown: what was compared and what changed, in two sentences."""
    counts = table["verdict"].value_counts()
    parts = [f"{counts[v]} {v}" for v in VERDICTS if counts.get(v)]
    changed_nodes = diff.loc[diff["change"] != "source only", "node"].nunique()
    return (
        f"**Before** {before.captured_at} ({len(before.nodes)} nodes, {len(before.pods)} pods) → "
        f"**after** {after.captured_at} ({len(after.nodes)} nodes, {len(after.pods)} pods). "
        f"Settings changed on {changed_nodes} node(s); {len(table)} containers compared: "
        f"{', '.join(parts) or 'none'}."
    )


def alert(table: pd.DataFrame, more: list[str]) -> dict[str, Any] | None:
    """The run's alert: rejected pods, lost alignment, and ``more`` (regressions, unreadable metrics)."""
    counts = table["verdict"].value_counts()
    lines = [f"{counts[v]} container(s) {v}" for v in ("now rejected", "lost alignment") if counts.get(v)]
    lines += more
    return {"why": "; ".join(lines), "items": lines} if lines else None


def describe_confounders(found: pd.DataFrame) -> str:
    """Markdown bullets for the report: each confounder, the signals it moves, and why."""
    if found.empty:
        return "No confounders: kubelet versions, CFS quotas, exclusive CPUs and replica counts did not change."
    return "\n".join(f"- **{r.confounder}** (moves {', '.join(r.affects)}): {r.detail}." for r in found.itertuples())


# --- the report's answer ---------------------------------------------------------------------

#: verdicts that alert (the change hurt), and those a person should look at without alarm
_BAD, _LOOK = ("now rejected", "lost alignment"), ("gone",)


def evidence_folder(paths: Iterable[str]) -> str:
    """The folder that holds every run this comparison read (the before and after snapshots, the
    journal and this run's own folder): what 06-postmortem takes as ``evidence``."""
    folders = [Path(p).resolve().parent for p in paths if p and p != "sample" and Path(p).is_file()]
    return str(Path(os.path.commonpath(folders)) if folders else Path(".").resolve())


def _change_id(journal: str) -> str | None:
    if not journal or not Path(journal).is_file():
        return None
    for line in Path(journal).read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and record.get("change_id"):
            return str(record["change_id"])
    return None


def verdict_block(
    table: pd.DataFrame,
    diff: pd.DataFrame,
    *,
    evidence: str,
    journal: str = "",
    metrics: tuple[list[str], list[str], list[str]] | None = None,
) -> Verdict:
    """The answer of 05-compare: verdict counts, the containers that got worse, the metric
    regressions (``metrics`` = regressions, possible regressions, reasons none were compared;
    ``None`` while they are still being read), and the next command."""
    counts = table["verdict"].value_counts()
    worse = table[table["verdict"].isin(_BAD + _LOOK)]
    regressed, possible, unread = metrics if metrics is not None else ([], [], [])
    bad = int(sum(counts.get(v, 0) for v in _BAD))
    changed = diff.loc[diff["change"] != "source only", "node"].nunique()
    tally = ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS if counts.get(v)) or "none"
    if bad or regressed:
        tone: Literal["ok", "warn", "stop"] = "stop"
        said = [f"{bad} container(s) worse off"] * bool(bad) + [f"{len(regressed)} metric regression(s)"] * bool(
            regressed
        )
        headline = f"The change hurt: {' and '.join(said)}. Find out why before the next gate."
    elif possible or len(worse) or unread or metrics is None:
        tone = "warn"
        headline = "No container lost its alignment or admission, but check the points below."
    else:
        tone = "ok"
        headline = "The change did what it should: no container worse off, no metric regression."
    containers = [f"{len(table)} containers compared, settings changed on {changed} node(s): {tally}."]
    containers += [
        f"**{r.verdict}**: {r.namespace}/{r.owner} `{r.container}` on {r.node_after or r.node_before}"
        + (f": {r.why_after}" if isinstance(r.why_after, str) and r.why_after else "")
        for r in worse.head(8).itertuples()
    ]
    if len(worse) > 8:
        containers.append(f"... and {len(worse) - 8} more in the table *What changed, container by container*.")
    if metrics is None:
        shown = ["Application metrics are still being compared (section *Application metrics*)."]
    elif regressed or possible:
        shown = [f"**regression**: {line}" for line in regressed] + [
            f"**possible regression** (no alert; watch it or compare longer windows): {line}" for line in possible
        ]
    else:
        shown = unread or ["No metric regression or possible regression."]
    change = _change_id(journal)
    if tone == "stop":
        steps = ["Explain each rejection and what would admit the pod, from the evidence alone (no cluster needed):"]
        if change:
            steps.insert(0, f"Hold the rollout of `{change}`: approve no further gate.")
        command = f"tmnb run notebooks/06-postmortem.ipynb -p evidence {evidence}"
    elif change:
        steps = [f"See where the rollout of `{change}` stands, then approve its next gate in 04-rollout:"]
        command = f"tmnb rollout status --change-id {change} --state-dir {Path(journal).resolve().parent}"
    else:
        steps = ["Keep this report with the change's evidence; the postmortem reads it all:"]
        command = f"tmnb run notebooks/06-postmortem.ipynb -p evidence {evidence}"
    sections = [("Containers", containers), ("Application metrics", shown), ("What to do next", steps)]
    return Verdict(tone, headline, sections, [command])
