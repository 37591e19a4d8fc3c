"""Pods the kubelet refused at admission, and the controllers that keep recreating them.

A pod that was running when its kubelet restarted comes back in the start's first batch and is
admitted again over the CPUs its checkpoint says it holds; rejected there, it is a different story
from a new pod that never fit: the change to the kubelet (not the pod) did it, and the node should
have been drained first. ``at_restart`` tells the two apart from the evidence alone: the kubelet log
(the pod existed before the kubelet process that denied it started) or, without a log, an earlier
snapshot that saw it running with exclusive CPUs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

import pandas as pd

from tmnb.analysis.diagnose import Diagnosis, diagnose
from tmnb.analysis.whatif import replay_node
from tmnb.kubelet.names import ADMISSION_CHECKS, ADMISSION_REASONS
from tmnb.postmortem import kubelet_log
from tmnb.postmortem.evidence import Evidence
from tmnb.postmortem.timeline import utc_time
from tmnb.snapshot import Pod, Snapshot

COLUMNS = ["node", "pod", "owner", "reason", "message", "rejected at", "held CPUs", "created", "seen in"]


@dataclass(frozen=True)
class RestartRejection:
    """A running pod its kubelet rejected when re-admitting it at a start."""

    #: the kubelet start whose first batch rejected it (None: known from the snapshots only)
    started: datetime | None
    #: container -> the exclusive CPUs it held before the restart (from the latest snapshot that saw them)
    held: dict[str, str] = field(default_factory=dict)
    #: the snapshot that saw it running, when one did
    ran_in: str = ""


def _failed(p: Pod) -> bool:
    return p.phase == "Failed" and p.reason in ADMISSION_REASONS


def _all(evidence: Evidence) -> list[tuple[str, Snapshot]]:
    items = [*evidence.snapshots, *evidence.node_snapshots]
    return [(path.parent.name, snap) for path, snap in sorted(items, key=lambda item: item[1].captured_at)]


def at_restart(evidence: Evidence) -> dict[str, RestartRejection]:
    """Rejected pods (by uid) that were running when their kubelet restarted and were rejected in its
    first batch: the kubelet log says the pod existed before the process that denied it started, or,
    where no log records the denial, an earlier snapshot saw it running on that node."""
    denied = kubelet_log.denials(evidence)
    snapshots = _all(evidence)
    out: dict[str, RestartRejection] = {}
    for _seen, snap in snapshots:
        for p in snap.pods:
            if not _failed(p) or p.uid in out:
                continue
            held: dict[str, str] = {}
            ran_in = ""
            for name, earlier in snapshots:
                if earlier.captured_at > snap.captured_at:
                    break
                if any(q.uid == p.uid and q.phase == "Running" for q in earlier.pods):
                    ran_in = name
                for node in earlier.nodes:
                    if node.name == p.node:
                        mine = {a.container: a.cpuset for a in node.allocations if a.pod_uid == p.uid and a.exclusive}
                        held = mine or held
            log = denied.get((p.node or "", f"{p.namespace}/{p.name}"))
            created = utc_time(p.created)
            if log is not None and log[1] is not None:
                started = log[1]
                # creationTimestamp has whole seconds: only a pod created before the start's second surely
                # existed when the kubelet started
                if (created is not None and created < pd.Timestamp(started).floor("s")) or ran_in:
                    out[p.uid] = RestartRejection(started, held, ran_in)
            elif ran_in:
                out[p.uid] = RestartRejection(None, held, ran_in)
    return out


def _held_text(held: dict[str, str]) -> str:
    return ", ".join(f"{cpus} ({container})" for container, cpus in held.items())


def _when(rejection: RestartRejection) -> str:
    if rejection.started is None:
        return "kubelet restart"
    return f"kubelet restart {rejection.started:%Y-%m-%d %H:%M:%S}"


def rejected_pods(evidence: Evidence) -> pd.DataFrame:
    """Every rejected pod seen in any snapshot, once, with the snapshot that saw it first; "rejected at"
    says whether a kubelet restart rejected it while it ran, or it failed admission as a new pod."""
    restarts = at_restart(evidence)
    rows, seen = [], set()
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        for p in snap.pods:
            if _failed(p) and p.uid not in seen:
                seen.add(p.uid)
                owner = f"{p.owner.kind}/{p.owner.name}" if p.owner else ""
                restart = restarts.get(p.uid)
                rows.append({
                    "node": p.node or "", "pod": f"{p.namespace}/{p.name}", "owner": owner, "reason": p.reason,
                    "message": p.message or "", "rejected at": _when(restart) if restart else "admission",
                    "held CPUs": _held_text(restart.held) if restart else "", "created": p.created,
                    "seen in": path.parent.name,
                })  # fmt: skip
    return pd.DataFrame(rows, columns=COLUMNS)


def flapping(rejected: pd.DataFrame) -> pd.DataFrame:
    """Controllers with more than one rejected pod: the kubelet keeps refusing their replacements."""
    counts = rejected[rejected["owner"] != ""].groupby(["owner", "reason"], as_index=False).size()
    return counts[counts["size"] > 1].rename(columns={"size": "rejected pods"}).reset_index(drop=True)


def diagnoses(evidence: Evidence) -> list[tuple[str, Diagnosis, list[str]]]:
    """Each rejected pod explained on the first whole-cluster snapshot that holds it (other pools
    are visible there), else on the node snapshot that saw it. Pods of one controller refused on
    one node for one reason are explained once; the others are listed with it. A pod rejected at a
    kubelet restart is explained as that restart (``restart_diagnosis``), not as a new pod."""
    if evidence.explained is None:
        evidence.explained = _diagnoses(evidence)
    return evidence.explained


def _diagnoses(evidence: Evidence) -> list[tuple[str, Diagnosis, list[str]]]:
    out: dict[tuple[str, str, str], tuple[str, Diagnosis, list[str]]] = {}
    seen: set[str] = set()
    restarts = at_restart(evidence)
    for path, snap in [*evidence.snapshots, *evidence.node_snapshots]:
        names = {n.name for n in snap.nodes}
        for p in snap.pods:
            if not _failed(p) or p.uid in seen or p.node not in names:
                continue
            seen.add(p.uid)
            owner = (
                f"{p.owner.controller_kind or p.owner.kind}/{p.owner.controller_name or p.owner.name}"
                if p.owner
                else ""
            )
            key = (p.node or "", f"{p.namespace}/{owner}" if owner else f"{p.namespace}/{p.name}", p.reason or "")
            if key in out:
                out[key][2].append(f"{p.namespace}/{p.name}")
                continue
            restart = restarts.get(p.uid)
            found = restart_diagnosis(evidence, snap, p, restart) if restart else diagnose(snap, p)
            out[key] = (path.parent.name, found, [])
    return list(out.values())


def _running_snapshot(evidence: Evidence, rejection: RestartRejection) -> Snapshot | None:
    return next((snap for name, snap in _all(evidence) if name == rejection.ran_in), None)


def restart_diagnosis(evidence: Evidence, snap: Snapshot, pod: Pod, rejection: RestartRejection) -> Diagnosis:
    """Why a restart rejected a running pod: the kubelet's check (its reason and words), the CPUs the
    pod held, when; and whether the model's restart of the node as it ran, with the settings the
    kubelet restarted with, rejects it the same way."""
    name, node = f"{pod.namespace}/{pod.name}", pod.node or ""
    reason = pod.reason or ""
    check = ADMISSION_CHECKS.get(reason, "an admission check")
    when = f" at {rejection.started:%Y-%m-%d %H:%M:%S} UTC" if rejection.started else ""
    held = f"the CPUs it held, {_held_text(rejection.held)}" if rejection.held else "the resources it held"
    why = (
        f"rejected at a kubelet restart{when}, not as a new pod: it was running, came back in the restarted "
        f"kubelet's first batch over {held}, and {check} refused it ({reason}); the kubelet does not re-admit "
        "it, so the node needed a drain before the change"
    )
    reproduced = _model_rejects(evidence, snap, pod, rejection)
    if reproduced is not None:
        why += (
            "; the model's restart with the new settings rejects it the same way"
            if reproduced
            else "; the model's restart with the new settings keeps it"
        )
    message = (pod.message or "").removeprefix("Pod was rejected: ")
    return Diagnosis(name, node, reason, message, bool(reproduced), why)


def _model_rejects(evidence: Evidence, snap: Snapshot, pod: Pod, rejection: RestartRejection) -> bool | None:
    """The restart what-if of the node as the snapshot that saw the pod running holds it, with the
    settings the node runs in ``snap`` as the target; None when either node is missing."""
    ran = _running_snapshot(evidence, rejection)
    node = pod.node or ""
    if ran is None or node not in {n.name for n in ran.nodes} or node not in {n.name for n in snap.nodes}:
        return None
    before, after = ran.node(node), snap.node(node)
    was = {k: s.value for k, s in before.kubelet.settings.items()}
    target = {k: s.value for k, s in after.kubelet.settings.items() if was.get(k) != s.value}
    replay = replay_node(before, ran.pods_on(node), target, mode="restart")
    if replay.refused or replay.unmodelled:
        return None
    result = next((r for r in replay.results if r.uid == pod.uid), None)
    return result is not None and not result.admitted and result.reason == pod.reason
