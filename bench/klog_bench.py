"""What kubelet journal excerpts cost: parsing, the postmortem timeline, snapshot size. One run.

A full excerpt (the collector's default 256 KiB cap) is built from the test fixtures' lines with
rising times; then
1. parse: ``tmnb.parse.klog.parse_kubelet_log`` on it (lines/s, ms per excerpt);
2. timeline: ``tmnb.postmortem.timeline.build`` over a before and an after snapshot of ``--nodes``
   nodes, each with a full excerpt (so every record is seen twice and kept once);
3. size: the gzip snapshot bytes per node that the excerpt adds.

    .venv/bin/python bench/klog_bench.py --nodes 100
"""

from __future__ import annotations

import argparse
import dataclasses
import gzip
import json
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

from tmnb.parse.klog import parse_kubelet_log
from tmnb.postmortem import timeline
from tmnb.postmortem.evidence import open_evidence
from tmnb.snapshot import KubeletJournal, save, to_dict
from tmnb.twin.sample import generate_fleet

FIXTURE = Path(__file__).parents[1] / "tests" / "fixtures" / "node" / "journal" / "short-iso.txt"
CAP = 256 << 10


def excerpt_lines(host: str, start: datetime) -> list[str]:
    """Fixture lines re-stamped one second apart until the byte cap, as the collector would keep them."""
    body = [line.split(": ", 1)[1] for line in FIXTURE.read_text().splitlines() if not line.startswith("--")]
    out, size, i = [], 0, 0
    while True:
        when = start + timedelta(seconds=i)
        payload = body[i % len(body)]
        if payload[:1] in "IWEF" and payload[1:5].isdigit():  # re-stamp the klog header too
            payload = payload[0] + when.strftime("%m%d %H:%M:%S.%f") + payload[21:]
        ident = "kubelet[4501]" if payload[:1] in "IWEF" else "systemd[1]"
        line = f"{when:%Y-%m-%dT%H:%M:%S+0000} {host} {ident}: {payload}"
        if size + len(line) + 1 > CAP:
            return out
        out.append(line)
        size += len(line) + 1
        i += 1


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100)
    args = ap.parse_args()
    start = datetime(2026, 12, 2, 8, tzinfo=UTC)
    lines = excerpt_lines("w1", start)
    runs = []
    for _ in range(5):  # the machine is shared: the best of five, in CPU seconds of this process
        t = time.process_time()
        log = parse_kubelet_log(lines, reference=start + timedelta(days=1))
        runs.append(time.process_time() - t)
    parse_s = min(runs)
    result: dict[str, object] = {
        "excerpt_lines": len(lines),
        "excerpt_bytes": sum(len(x) + 1 for x in lines),
        "named": len(log.named()),
        "unreadable": log.unreadable,
        "parse_cpu_ms": round(parse_s * 1000, 1),
        "parse_lines_per_s": round(len(lines) / parse_s),
    }
    fleet = generate_fleet(args.nodes, seed=1)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        nodes = []
        for n in fleet.nodes:
            excerpt = KubeletJournal(source="journalctl -u kubelet", since="-24h", max_bytes=CAP,
                                     lines=excerpt_lines(n.name, start), read_at="2026-12-03T08:00:00Z")  # fmt: skip
            nodes.append(dataclasses.replace(n, kubelet_journal=excerpt))
        with_journal = dataclasses.replace(fleet, nodes=nodes, captured_at="2026-12-03T08:00:00Z")
        save(with_journal, root / "run" / "snapshots" / "before.json.gz")
        save(dataclasses.replace(with_journal, captured_at="2026-12-03T09:00:00Z"), root / "run" / "snapshot.json.gz")
        plain = len(gzip.compress(json.dumps(to_dict(fleet)).encode(), mtime=0))
        full = (root / "run" / "snapshot.json.gz").stat().st_size
        t = time.process_time()
        found = open_evidence(root / "run")
        open_s = time.process_time() - t
        t, wall = time.process_time(), time.perf_counter()
        frame = timeline.build(found)
        build_s, build_wall = time.process_time() - t, time.perf_counter() - wall
    result.update(
        nodes=args.nodes,
        snapshot_gz_bytes_without=plain,
        snapshot_gz_bytes_with=full,
        gz_bytes_per_node_excerpt=round((full - plain) / args.nodes),
        open_evidence_cpu_s=round(open_s, 2),
        timeline_build_cpu_s=round(build_s, 2),
        timeline_build_wall_s=round(build_wall, 2),
        timeline_rows=len(frame),
    )
    json.dump(result, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
