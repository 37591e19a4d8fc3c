"""The pre-change inventory checklist, each item's status computed from the evidence itself."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pandas as pd

from tmnb.analysis.inventory import admission_failures, exclusive_containers, shape_of
from tmnb.errors import SnapshotError
from tmnb.kubelet.names import CPU_STATIC
from tmnb.report.commands import command
from tmnb.report.verdict import Verdict
from tmnb.snapshot import Snapshot, digest, load

Status = Literal["done", "partial", "missing"]
Check = tuple[Status, str]


def _ratio(done: int, total: int, what: str) -> Check:
    if total and done == total:
        return "done", f"{done}/{total} {what}"
    return ("partial" if done else "missing"), f"{done}/{total} {what}"


def _has(snapshot: Snapshot, *names: str) -> Check:
    ok = sum(all(n in node.kubelet.settings for n in names) for node in snapshot.nodes)
    return _ratio(ok, len(snapshot.nodes), f"nodes with {', '.join(names)} and where each came from")


def versions_recorded(snapshot: Snapshot) -> Check:
    status, text = _ratio(
        sum(bool(n.versions.kubelet) for n in snapshot.nodes), len(snapshot.nodes), "nodes with a kubelet version"
    )
    if not snapshot.cluster.server_version:
        return "partial" if status != "missing" else "missing", f"API server version missing; {text}"
    return status, f"API server {snapshot.cluster.server_version}; {text}"


def cpu_manager_documented(snapshot: Snapshot) -> Check:
    status, text = _has(snapshot, "cpuManagerPolicy", "memoryManagerPolicy")
    static = [
        n for n in snapshot.nodes if getattr(n.kubelet.settings.get("cpuManagerPolicy"), "value", None) == CPU_STATIC
    ]
    unreserved = [
        n.name
        for n in static
        if not any(k in n.kubelet.settings for k in ("reservedSystemCPUs", "kubeReserved", "systemReserved"))
    ]
    if unreserved:
        return "partial", f"{text}; reserved CPUs unknown on {', '.join(unreserved)}"
    return status, f"{text}; reserved CPUs known on all {len(static)} static-policy nodes"


def numa_captured(snapshot: Snapshot) -> Check:
    captured = [n for n in snapshot.nodes if n.numa and n.cpus]
    shapes = {shape_of(n) for n in captured}
    status, text = _ratio(len(captured), len(snapshot.nodes), "nodes with NUMA zones and CPU topology")
    return status, f"{text}; {len(shapes)} hardware shapes"


def extended_resources_listed(snapshot: Snapshot) -> Check:
    advertised = [(n, r) for n in snapshot.nodes for r in n.capacity if "/" in r]
    if not advertised:
        return "done", "no extended resources advertised by any node"
    known = sum(any(d.resource == r for d in n.devices) for n, r in advertised)
    return _ratio(known, len(advertised), "advertised extended resources with per-device NUMA information")


def baseline_pods_captured(snapshot: Snapshot) -> Check:
    """Every container that holds exclusive CPUs by the kubelet's rule (Guaranteed, whole CPUs, a
    static-policy node) has its cpuset recorded; a shared-pool container has none to record, so it
    is complete as it is, not missing."""
    if not snapshot.pods:
        return "missing", "no pods in the snapshot"
    allocated = {(a.pod_uid, a.container) for n in snapshot.nodes for a in n.allocations}
    pinned = exclusive_containers(snapshot)
    running = sum(len(p.containers) for p in snapshot.pods if p.phase == "Running")
    shared = f"the other {running - len(pinned)} running container(s) use the shared pool and need none"
    if not pinned:
        return "done", f"{len(snapshot.pods)} pods; no container holds exclusive CPUs, so there is no cpuset to record"
    have = sum((p.uid, c) in allocated for p, c in pinned)
    status, text = _ratio(
        have,
        len(pinned),
        "containers with exclusive CPUs (Guaranteed, whole CPUs, static policy) with their cpuset recorded",
    )
    return status, f"{len(snapshot.pods)} pods; {text}; {shared}"


def stored_versioned(path: Path | None, snapshot: Snapshot) -> Check:
    if path is None:
        return "missing", "snapshot not written"
    try:
        reloaded = load(path)
    except SnapshotError as exc:
        return "missing", f"written snapshot does not load back: {exc}"
    stored = digest(reloaded)
    if stored != digest(snapshot):
        return "partial", f"{path.name} differs from the inventory in memory"
    return "done", f"{path.name} ({reloaded.schema}), sha256 {stored[:16]}… in its manifest"


CHECKS: tuple[tuple[str, Callable[[Snapshot], Check]], ...] = (
    ("Kubernetes and kubelet versions recorded", versions_recorded),
    (
        "Topology Manager policy and scope documented",
        lambda s: _has(s, "topologyManagerPolicy", "topologyManagerScope"),
    ),
    ("CPU and memory manager policies and reserved CPUs documented", cpu_manager_documented),
    ("NUMA layout captured for every node type", numa_captured),
    ("Devices and extended resources listed", extended_resources_listed),
    ("Baseline pods and CPU assignments captured", baseline_pods_captured),
)


def checklist(snapshot: Snapshot, stored: Path | None) -> pd.DataFrame:
    results = [(item, *check(snapshot)) for item, check in CHECKS]
    results.append(("Inventory stored in versioned form", *stored_versioned(stored, snapshot)))
    return pd.DataFrame(results, columns=["item", "status", "evidence"])


#: The change the next report checks by default (the readiness notebook's default target).
NEXT_TARGET = {"topologyManagerPolicy": "single-numa-node"}


def verdict(checks: pd.DataFrame, stored: Path, snapshot: Snapshot) -> Verdict:
    """The checklist's result first: pods the kubelet rejected at admission (an inventory taken after a
    change is how a new TopologyAffinityError is found: never a green "complete" beside one), which
    items are incomplete and why, then the next report to run."""
    done = checks["status"] == "done"
    gaps = [f"**{r.item}** ({r.status}): {r.evidence}" for r in checks[~done].itertuples()]
    failed = admission_failures(snapshot)
    rejected = [
        f"`{r.namespace}/{r.pod}` on **{r.node}**: {r.reason}"
        + (f" ({r.owner} keeps recreating it)" if r.owner else "")
        for r in failed.itertuples()
    ]
    next_report = command("run", "03-readiness", params={"source": stored, "target": NEXT_TARGET})
    if gaps:
        headline = (
            f"Checklist: {int(done.sum())} of {len(checks)} items done; {len(gaps)} incomplete: "
            "complete them before the change."
        )
    else:
        headline = f"Checklist complete: all {len(checks)} items done. The baseline snapshot is stored."
    if rejected:
        headline = (
            f"{len(rejected)} pod(s) rejected at admission on "
            f"{failed['node'].nunique()} node(s): find out why before any change. " + headline
        )
    steps = [
        f"Baseline snapshot: `{stored}`.",
        "Check the planned change against every node (set `target` to the change you plan):",
    ]
    sections = [("Rejected at admission", rejected), ("Incomplete", gaps), ("What to do next", steps)]
    return Verdict("warn" if gaps or rejected else "ok", headline, sections, [next_report])
