"""The reports' own work at fleet scale: each step the inventory, occupancy and readiness notebooks
take on a generated fleet, timed in one process (prints figures).

    .venv/bin/python bench/reports_bench.py [--nodes 3000] [--notebooks]

``--notebooks`` also runs 01, 02 and 03 with ``tmnb run`` on the same snapshot (wall time, and the
largest RSS of any run so far; kernel start and HTML included). Measured at 3,000 nodes / 65,000 pods on 2 cores:
``readiness.assess`` took 134 s while ``Snapshot.pods_on`` scanned every pod per node, now 15 s;
03-readiness runs in 44 s (was 129 s), 01-inventory in 44 s (was 65 s).
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tmnb.analysis import checklist, inventory, occupancy, readiness
from tmnb.snapshot import load, save
from tmnb.twin.sample import generate_fleet


def timed(label: str, step: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    out = step()
    print(f"{label:<28} {time.perf_counter() - start:7.1f} s")
    return out


def notebook(name: str, snapshot: Path, folder: Path) -> None:
    start = time.perf_counter()
    done = subprocess.run(
        [
            str(Path(sys.executable).with_name("tmnb")),
            "run",
            name,
            "-p",
            "source",
            str(snapshot),
            "--out",
            str(folder / name),
        ],
        capture_output=True,
        text=True,
    )
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    took = time.perf_counter() - start
    if done.returncode not in (0, 3):  # 3: the report raised its alerts
        print(done.stderr.strip(), file=sys.stderr)
    print(f"tmnb run {name:<19} {took:7.1f} s  exit {done.returncode}  largest child RSS {peak:.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=3000)
    ap.add_argument("--notebooks", action="store_true", help="also run 01, 02 and 03 with tmnb run")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        snap = timed(f"generate {args.nodes} nodes", lambda: generate_fleet(args.nodes))
        print(f"{len(snap.nodes)} nodes, {len(snap.pods)} pods")
        path = folder / "fleet.json.gz"
        timed("save (.json.gz)", lambda: save(snap, path))
        snap = timed("load", lambda: load(path))
        timed("checklist (loads it back)", lambda: checklist.checklist(snap, path))
        timed("inventory tables", lambda: (inventory.settings_matrix(snap), inventory.numa_layout(snap)))
        timed("occupancy", lambda: occupancy.occupancy(snap))
        timed("readiness.assess", lambda: readiness.assess(snap, {"topologyManagerPolicy": "single-numa-node"}))
        if args.notebooks:
            for name in ("01-inventory", "02-numa-occupancy", "03-readiness"):
                notebook(name, path, folder)


if __name__ == "__main__":
    main()
