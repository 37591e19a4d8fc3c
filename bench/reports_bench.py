"""The reports' own work at fleet scale: each step the inventory, occupancy and readiness notebooks
take on a generated fleet, timed in one process (prints figures).

    .venv/bin/python bench/reports_bench.py [--nodes 3000] [--pods-per-node 30] [--snapshot FILE]
        [--steps] [--profile FILE] [--cells] [--notebooks [NAME ...]] [--workers N]

``--pods-per-node`` scales the sample's replicated workloads (not its DaemonSets) so the fleet holds
about that many pods per node (the catalogue alone gives about 22). ``--snapshot`` keeps the
generated fleet in FILE and reads it back on the next run (generating 5,000 nodes takes a minute).
``--steps`` times ``readiness.assess`` step by step (the same calls, in its order); ``--profile``
writes a cProfile of ``assess`` (and with ``--cells``, of the 03 notebook's own cells run in this
process) to FILE and prints the top functions. ``--notebooks`` runs notebooks with ``tmnb run`` on the
same snapshot (default 01, 02 and 03; wall time, and the largest RSS of any run so far; kernel
start and HTML included).

The machine is shared: every figure gives the wall time, the user CPU time of this process and of
its finished children (the what-if's workers, ``tmnb run``), and the 1-minute load average.

Measured at 3,000 nodes / 65,000 pods on 2 cores: ``readiness.assess`` took 134 s while
``Snapshot.pods_on`` scanned every pod per node, then 15 s; 03-readiness ran in 44 s (was 129 s),
01-inventory in 44 s (was 65 s).

At 5,000 nodes / 150,465 pods (``--nodes 5000 --pods-per-node 30``), 2 shared cores, before and after
the drain steps joined the pooled what-if, the validator's findings were remembered per lint run,
``admission_changes`` grouped its rows once, the pool's workers stopped collecting the parent's
objects and load/save paused the collector (wall; user CPU parent + children; load average):
``load`` 15.5 s (13.7 s, 2.3) -> 10.0 s (7.6 s, 2.7); ``readiness.assess`` 31.6 s (14.5 + 14.1 s,
2.9) -> 20.8 s (4.3 + 18.5 s, 3.1); ``tmnb run 03-readiness`` 150.9 s (86.4 s, 4.8) -> 73.0 s (57.1 s,
2.6). At 1,000 nodes / 30,062 pods: assess 6.1 s (3.1 + 2.3 s, 2.5) -> 3.5 s (1.0 + 3.9 s, 2.5);
03 37.0 s (23.0 s, 3.7) -> 17.7 s (17.3 s, 3.3). Session 10 (the standby's one read of the file, the
manifest's byte digest, the kernel's collector settings, headroom through one simulator): 03 at
5,000 nodes 27.7 s wall (median of 3 whole-process runs, 35.7 s CPU).
"""

from __future__ import annotations

import argparse
import cProfile
import dataclasses
import gc
import io
import json
import os
import pstats
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tmnb.analysis import checklist, inventory, occupancy, readiness
from tmnb.snapshot import Snapshot, load, save
from tmnb.twin.sample import generate_fleet

TARGET = {"topologyManagerPolicy": "single-numa-node"}
#: Pods per node of a scaled fleet as the catalogue makes it, and of that the DaemonSets' part
#: (measured at 1,000 nodes: 21.7, and 31.5 with the replicated workloads scaled by 1.6).
CATALOGUE_DENSITY, DAEMON_DENSITY = 21.7, 5.4
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _cpu() -> tuple[float, float]:
    """User CPU seconds of this process and of its waited-for children."""
    return (
        resource.getrusage(resource.RUSAGE_SELF).ru_utime,
        resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime,
    )


def timed(label: str, step: Callable[[], Any]) -> Any:
    """Run ``step``; print its wall time, user CPU (this process + children) and the load average."""
    cpu = _cpu()
    start = time.perf_counter()
    out = step()
    wall = time.perf_counter() - start
    me, kids = (after - before for after, before in zip(_cpu(), cpu, strict=True))
    print(f"{label:<34} {wall:7.1f} s  user {me:6.1f} s + children {kids:6.1f} s  load {os.getloadavg()[0]:4.1f}")
    return out


def fleet(nodes: int, pods_per_node: float | None) -> Snapshot:
    """The scaled sample; with ``pods_per_node``, its replicated workloads scaled to about that density."""
    if pods_per_node is None:
        return generate_fleet(nodes)
    import tmnb.twin.sample.fleet as fleet_module
    import tmnb.twin.sample.pods as pods_module

    # DaemonSets give every node the same few pods; the replicated workloads carry the rest of the density.
    factor = (pods_per_node - DAEMON_DENSITY) / (CATALOGUE_DENSITY - DAEMON_DENSITY)
    original = pods_module.WORKLOADS
    scaled = tuple(
        w if w.kind == "DaemonSet" else dataclasses.replace(w, per_node=w.per_node * factor) for w in original
    )
    pods_module.WORKLOADS = fleet_module.WORKLOADS = scaled
    try:
        return generate_fleet(nodes)
    finally:
        pods_module.WORKLOADS = fleet_module.WORKLOADS = original


def assess_steps(snap: Snapshot, workers: int) -> None:
    """``readiness.assess`` one step at a time (the same calls, in its order)."""
    from tmnb.analysis.lint import lint, to_frame
    from tmnb.analysis.upgrade.admission import admission_changes
    from tmnb.analysis.whatif import common_sizes, frames, node_rows, pooled
    from tmnb.replay import drain_steps, plans_for

    nodes = snap.nodes
    plans = timed("  plans_for", lambda: plans_for(nodes, TARGET))
    sizes = timed("  common_sizes", lambda: common_sizes(snap))

    def replays(i: int) -> Any:
        name = nodes[i].name
        return drain_steps(plans[name], snap.pods_on(name)), node_rows(snap, i, TARGET, "drain", sizes, plans)

    done = timed("  drain steps + what-if, pooled", lambda: list(pooled(len(nodes), replays, workers)))
    steps = {n.name: s for n, (s, _) in zip(nodes, done, strict=True)}
    findings = timed("  lint", lambda: lint(snap, TARGET, plans=plans, steps=steps))
    pods, _ = timed("  frames", lambda: frames(rows for _, rows in done))
    table = timed("  verdicts", lambda: readiness.verdicts(snap, findings, pods))
    excluded = timed("  not_canary", lambda: readiness.not_canary(snap, table, findings, steps))
    timed("  to_frame (lint)", lambda: to_frame(findings))
    timed("  plan_table", lambda: readiness.plan_table(snap, TARGET, findings, plans))
    timed("  recommend_canary", lambda: readiness.recommend_canary(snap, excluded))
    timed("  steps_table", lambda: readiness.steps_table(snap, steps))
    timed("  admission_changes", lambda: admission_changes(snap, plans, pods))


def notebook_cells(path: Path, folder: Path) -> None:
    """The 03 notebook's code cells run in this process, each timed (its parameters: the snapshot
    ``path``; outside a kernel ``display`` prints a repr, so the HTML a table renders is built but
    not shown, and no papermill, nbconvert or kernel start is counted; "collector": the time in
    Python's cyclic garbage collector, which walks every object the kernel holds)."""
    import contextlib

    source = json.loads((NOTEBOOKS / "03-readiness.ipynb").read_text())
    cells = ["".join(c["source"]) for c in source["cells"] if c["cell_type"] == "code"]
    scope: dict[str, Any] = {}
    exec(cells[0], scope)  # the parameters cell's defaults
    scope.update(source=str(path), out_dir=str(folder / "cells"))
    collecting = [0.0, 0.0]  # when the running collection started; seconds in the collector so far

    def collector(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collecting[0] = time.perf_counter()
        else:
            collecting[1] += time.perf_counter() - collecting[0]

    gc.callbacks.append(collector)
    try:
        for i, cell in enumerate(cells[1:], start=2):
            label = f"  cell {i}: " + cell.strip().splitlines()[-1][:40]
            with contextlib.redirect_stdout(io.StringIO()):
                start, cpu, before = time.perf_counter(), _cpu(), collecting[1]
                exec(cell, scope)
                wall, me = time.perf_counter() - start, _cpu()[0] - cpu[0]
            print(f"{label:<60} {wall:6.1f} s  user {me:6.1f} s  collector {collecting[1] - before:5.1f} s")
    finally:
        gc.callbacks.remove(collector)


def profiled(label: str, out: Path, step: Callable[[], Any]) -> None:
    """Run ``step`` under cProfile; write the stats to ``out`` and print the top functions."""
    prof = cProfile.Profile()
    prof.runcall(step)
    prof.dump_stats(str(out))
    text = io.StringIO()
    pstats.Stats(prof, stream=text).sort_stats("cumulative").print_stats(40)
    print(f"--- cProfile of {label} (cumulative; stats in {out})")
    print("\n".join(line for line in text.getvalue().splitlines() if line.strip()))


def notebook(name: str, snapshot: Path, folder: Path) -> None:
    def run() -> subprocess.CompletedProcess[str]:
        command = [str(Path(sys.executable).with_name("tmnb")), "run", name, "-p", "source", str(snapshot)]
        return subprocess.run([*command, "--out", str(folder / name)], capture_output=True, text=True)

    done = timed(f"tmnb run {name}", run)
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if done.returncode not in (0, 3):  # 3: the report raised its alerts
        print(done.stderr.strip(), file=sys.stderr)
    print(f"  exit {done.returncode}, largest child RSS so far {peak:.0f} MiB")
    for report in sorted((folder / name).glob("**/*.ipynb")) + sorted((folder / name).glob("**/*.html")):
        print(f"  {report.relative_to(folder)} {report.stat().st_size / 1e6:.1f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=3000)
    ap.add_argument("--pods-per-node", type=float, default=None, help="about this many pods per node")
    ap.add_argument("--snapshot", type=Path, help="keep the fleet here (read back when it exists)")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="what-if processes")
    ap.add_argument("--steps", action="store_true", help="time readiness.assess step by step")
    ap.add_argument("--profile", type=Path, help="cProfile assess (serial what-if) into this file")
    ap.add_argument("--cells", action="store_true", help="time the 03 notebook's cells in this process")
    ap.add_argument("--skip-other", action="store_true", help="skip checklist, inventory and occupancy")
    ap.add_argument("--notebooks", nargs="*", help="also run these notebooks with tmnb run (default 01, 02, 03)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = args.snapshot or folder / "fleet.json.gz"
        if not path.exists():
            snap = timed(f"generate {args.nodes} nodes", lambda: fleet(args.nodes, args.pods_per_node))
            timed("save (.json.gz)", lambda: save(snap, path))
        snap = timed("load", lambda: load(path))
        print(f"{len(snap.nodes)} nodes, {len(snap.pods)} pods ({len(snap.pods) / len(snap.nodes):.1f} per node)")
        if not args.skip_other:
            timed("checklist (loads it back)", lambda: checklist.checklist(snap, path))
            timed("inventory tables", lambda: (inventory.settings_matrix(snap), inventory.numa_layout(snap)))
            timed("occupancy", lambda: occupancy.occupancy(snap))
        timed("readiness.assess", lambda: readiness.assess(snap, TARGET, workers=args.workers))
        if args.steps:
            assess_steps(snap, args.workers)
        if args.cells:
            timed("03's cells in this process", lambda: notebook_cells(path, folder))
        if args.profile:
            profiled("readiness.assess, serial", args.profile, lambda: readiness.assess(snap, TARGET, workers=1))
            if args.cells:
                cells = args.profile.with_suffix(".cells" + args.profile.suffix)
                profiled("the 03 notebook's cells", cells, lambda: notebook_cells(path, folder))
        if args.notebooks is not None:
            for name in args.notebooks or ("01-inventory", "02-numa-occupancy", "03-readiness"):
                notebook(name, path, folder)


if __name__ == "__main__":
    main()
