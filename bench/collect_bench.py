"""Collection at fleet scale: tmnb's live collector against the naive kubectl loop, one run.

A sandbox (in-memory kubelets) twins a generated fleet padded to the wanted pod count; then
1. tmnb: ``collect_cluster`` in a child process (wall time, peak RSS of that process);
2. naive: ``kubectl get pods -A -o json`` plus one ``kubectl get --raw .../configz`` per node, in
   sequence. The per-node loop is timed on ``--naive-nodes`` nodes and scaled to the fleet unless
   ``--naive-nodes 0`` (all nodes; about a quarter of an hour at 5,000 nodes).

    .venv/bin/python bench/collect_bench.py --nodes 5000 --pods 150000

Targets (issue): at least 10x faster than the naive loop, under 60 s and 2 GiB RSS.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tmnb.snapshot import Pod, Snapshot
from tmnb.twin.sample import generate_fleet
from tmnb.twin.sandbox import Faults, Sandbox

CHILD = """
import json, sys, time
from tmnb.sources.cluster import collect_cluster
t = time.monotonic()
snap = collect_cluster(kubeconfig=sys.argv[1], progress=False)
print(json.dumps({"seconds": time.monotonic() - t, "nodes": len(snap.nodes), "pods": len(snap.pods),
                  "issues": sum(len(n.issues) for n in snap.nodes)}))
"""


def padded(snapshot: Snapshot, pods: int) -> Snapshot:
    """Add BestEffort/Burstable copies of existing shared-pool pods until the fleet has ``pods``."""
    donors = [p for p in snapshot.pods if p.qos_class != "Guaranteed" and p.phase == "Running" and p.node]
    extra: list[Pod] = []
    i = 0
    while len(snapshot.pods) + len(extra) < pods:
        donor = donors[i % len(donors)]
        node = snapshot.nodes[i % len(snapshot.nodes)].name
        extra.append(
            dataclasses.replace(
                donor,
                name=f"pad-{i:06d}",
                uid=f"00000000-0000-4000-8000-{i:012d}",
                node=node,
                owner=None,
                namespace="bench-padding",
            )
        )
        i += 1
    return dataclasses.replace(snapshot, pods=[*snapshot.pods, *extra])


def timed(argv: list[str], **kw: object) -> tuple[float, subprocess.CompletedProcess[bytes]]:
    start = time.monotonic()
    done = subprocess.run(argv, capture_output=True, check=True, **kw)  # type: ignore[call-overload]
    return time.monotonic() - start, done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=150_000)
    parser.add_argument("--naive-nodes", type=int, default=300, help="nodes in the timed kubectl loop (0 = all)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tmnb-collect-bench-"))

    t = time.monotonic()
    fleet = padded(generate_fleet(args.nodes), args.pods)
    print(f"fleet: {len(fleet.nodes)} nodes, {len(fleet.pods)} pods, generated in {time.monotonic() - t:.0f} s")
    t = time.monotonic()
    # Served from this process; the collector and kubectl run in their own processes.
    with Sandbox(fleet, work / "sandbox", faults=Faults(), node_files=False, controller_interval=3600) as box:
        kubeconfig = box.write_kubeconfig(work / "kubeconfig")
        print(f"sandbox up in {time.monotonic() - t:.0f} s")
        wall, done = timed([sys.executable, "-c", CHILD, str(kubeconfig)])
        got = json.loads(done.stdout)
        rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024  # KiB -> MiB, largest child so far
        kubectl = ["kubectl", "--kubeconfig", str(kubeconfig)]
        pods_s, _ = timed([*kubectl, "get", "pods", "-A", "-o", "json"])
        sample = [n.name for n in fleet.nodes][: args.naive_nodes or None]
        start = time.monotonic()
        for name in sample:
            subprocess.run(
                [*kubectl, "get", "--raw", f"/api/v1/nodes/{name}/proxy/configz"], capture_output=True, check=True
            )
        loop = (time.monotonic() - start) * len(fleet.nodes) / len(sample)
        naive = pods_s + loop
        scaled = "" if len(sample) == len(fleet.nodes) else f" (configz loop timed on {len(sample)} nodes, scaled)"
        print(
            f"tmnb collect_cluster: {wall:.1f} s wall ({got['seconds']:.1f} s collecting), peak RSS {rss:.0f} MiB, "
            f"{got['nodes']} nodes, {got['pods']} pods, {got['issues']} node issues"
        )
        print(f"naive kubectl: {naive:.1f} s = get pods -A {pods_s:.1f} s + configz loop {loop:.1f} s{scaled}")
        print(f"ratio naive / tmnb: {naive / wall:.1f}x")


if __name__ == "__main__":
    main()
