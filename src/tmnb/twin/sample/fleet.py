"""Step 6, assembly: the snapshot of the whole fleet (nodes, pods, the events still visible, PDBs), the
committed sample file, and the command line that writes one."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Literal

from tmnb.snapshot import Cluster, DisruptionBudget, Event, Pod, Snapshot, SnapshotSource, save
from tmnb.twin.sample.catalogue import WORKLOADS
from tmnb.twin.sample.common import CAPTURED_AT, SERVER_VERSION, rfc3339
from tmnb.twin.sample.nodes import BuiltNode, assemble_node, build_node
from tmnb.twin.sample.pods import Intent, pod_intents
from tmnb.twin.sample.rollout import AFTER_CAPTURED_AT, CHANGE, WAVE, roll_out
from tmnb.twin.sample.scheduling import Outcome, run_admission
from tmnb.twin.sample.specs import curated_specs, scaled_specs

#: The apiserver's default event TTL: older events are gone from ``kubectl get events``.
EVENT_TTL = timedelta(hours=1)


def _events(rejected: Sequence[tuple[Pod, Intent]], now: datetime = CAPTURED_AT) -> list[Event]:
    """What ``kubectl get events`` still shows (events live an hour): the controller creating each
    replacement, the scheduler binding it, and the kubelet rejecting it."""
    events = []
    for pod, intent in rejected:
        created = intent.created
        if not timedelta(0) <= now - created <= EVENT_TTL:
            continue
        owner = intent.owner
        controller = {"ReplicaSet": "replicaset-controller", "Job": "job-controller"}.get(owner.kind)
        if controller:
            events.append(_event(pod, owner.kind, owner.name, "SuccessfulCreate", f"Created pod: {pod.name}",
                                 "Normal", created, controller, None))  # fmt: skip
        events.append(_event(pod, "Pod", pod.name, "Scheduled", f"Successfully assigned {pod.namespace}/{pod.name} "
                             f"to {pod.node}", "Normal", created, "default-scheduler", None))  # fmt: skip
        message = (pod.message or "").removeprefix("Pod was rejected: ")
        events.append(_event(pod, "Pod", pod.name, pod.reason or "", message, "Warning",
                             created + timedelta(seconds=1), "kubelet", pod.node))  # fmt: skip
    return events


def _event(
    pod: Pod,
    kind: str,
    name: str,
    reason: str,
    message: str,
    type_: Literal["Normal", "Warning"],
    at: datetime,
    component: str,
    node: str | None,
) -> Event:
    return Event(
        namespace=pod.namespace,
        kind=kind,
        name=name,
        reason=reason,
        message=message,
        type=type_,
        first_seen=rfc3339(at),
        last_seen=rfc3339(at),
        node=node,
        component=component,
    )


def _disruption_budgets(pods: Sequence[Pod]) -> list[DisruptionBudget]:
    """One PDB per workload that asks for it, selecting exactly its pods by their app label."""
    budgets = []
    for w in WORKLOADS:
        if w.min_available is None or not any(p.labels.get("app.kubernetes.io/name") == w.name for p in pods):
            continue
        budgets.append(
            DisruptionBudget(
                namespace=w.namespace,
                name=f"{w.name}-pdb",
                selector={"app.kubernetes.io/name": w.name},
                min_available=w.min_available,
            )
        )
    return budgets


def _snapshot(built: Sequence[BuiltNode], outcome: Outcome, detail: str, now: datetime) -> Snapshot:
    pods = sorted(outcome.pods, key=lambda p: (p.created, p.namespace, p.name))
    return Snapshot(
        captured_at=rfc3339(now),
        source=SnapshotSource(kind="sample", context="sample", detail=detail),
        cluster=Cluster(server_version=SERVER_VERSION, platform="kubeadm on bare metal"),
        nodes=[assemble_node(n) for n in built],
        pods=pods,
        events=_events(outcome.rejected, now),
        disruption_budgets=_disruption_budgets(pods),
    )


def generate_fleet(nodes: int | None = None, *, seed: int = 7) -> Snapshot:
    """The curated sample (``nodes=None``) or the same pools and workloads scaled to ``nodes`` nodes.

    Deterministic: the same arguments give the same snapshot, byte for byte."""
    specs = curated_specs() if nodes is None else scaled_specs(nodes)
    built = [build_node(s, seed) for s in specs]
    outcome = run_admission(built, pod_intents(specs, seed), seed).outcome
    detail = "curated sample fleet" if nodes is None else f"scaled sample fleet, {nodes} nodes"
    return _snapshot(built, outcome, f"{detail} (tmnb.twin.sample, seed {seed})", CAPTURED_AT)


def generate_after(*, seed: int = 7) -> Snapshot:
    """The curated sample after its rollout (``rollout``): the other half of the sample comparison."""
    specs = curated_specs()
    built = [build_node(s, seed) for s in specs]
    admission = run_admission(built, pod_intents(specs, seed), seed)
    built = roll_out(admission, built, seed)
    change = ", ".join(f"{k}={v}" for k, v in CHANGE.items())
    detail = f"curated sample fleet after {change} on {', '.join(WAVE)} (tmnb.twin.sample, seed {seed})"
    return _snapshot(built, admission.outcome, detail, AFTER_CAPTURED_AT)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tmnb.twin.sample", description="Write a generated sample fleet snapshot."
    )
    parser.add_argument(
        "--out", required=True, type=Path, help="snapshot file (.json or .json.gz), or with --comparison a folder"
    )
    parser.add_argument("--nodes", type=int, default=None, help="scale to N nodes (default: the curated sample)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--after", action="store_true", help="the curated sample after its rollout")
    parser.add_argument(
        "--comparison", action="store_true", help="the sample pair's rollout journal and application metrics"
    )
    args = parser.parse_args(argv)
    if (args.after or args.comparison) and args.nodes is not None:
        parser.error("--after and --comparison apply to the curated sample only")
    if args.comparison:
        from tmnb.twin.sample.metrics import write_shipped

        args.out.mkdir(parents=True, exist_ok=True)
        for path in write_shipped(args.out, generate_fleet(seed=args.seed), generate_after(seed=args.seed)):
            print(f"wrote {path}")
        return 0
    snapshot = generate_after(seed=args.seed) if args.after else generate_fleet(args.nodes, seed=args.seed)
    manifest = save(snapshot, args.out)
    print(f"wrote {args.out}: {manifest['nodes']} nodes, {manifest['pods']} pods, sha256 {manifest['sha256'][:16]}")
    return 0
