"""How long each stage of ``tmnb demo`` takes, timed from the stage lines it prints on stderr
(prints a table; the figures are in docs/performance.md).

    .venv/bin/python bench/demo_phases.py [--repeat 1]

A stage lasts from its line to the next one; the metrics line (``demo: metrics through ...``),
printed once the series are backfilled, splits stage 7 into the backfill and 05-compare. The demo
writes into a scratch folder; its exit status (3: the alerts it stages) is printed.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _stages(lines: list[tuple[float, str]], started: float, ended: float) -> dict[str, float]:
    marks = [(t, text) for t, text in lines if text.startswith(("demo [", "demo: metrics"))]
    marks.append((ended, "end"))
    out: dict[str, float] = {}
    previous_time, previous_name = started, "start-up (process, imports)"
    for moment, text in marks:
        out[previous_name] = out.get(previous_name, 0.0) + moment - previous_time
        name = text.split("] ", 1)[1] if text.startswith("demo [") else "05-compare (after the backfill)"
        if text.startswith("demo [7/"):
            name = "metrics: synthetic series and backfill"
        previous_time, previous_name = moment, name
    out["total"] = ended - started
    return out


def measure_once(scratch: Path) -> tuple[dict[str, float], int]:
    tmnb = str(Path(sys.executable).with_name("tmnb"))
    started = time.monotonic()
    child = subprocess.Popen(
        [tmnb, "demo", "--reports-dir", str(scratch)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    lines = [(time.monotonic(), line.strip()) for line in child.stderr]
    status = child.wait()
    return _stages(lines, started, time.monotonic()), status


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=1)
    args = ap.parse_args()
    runs: list[dict[str, float]] = []
    with tempfile.TemporaryDirectory() as scratch:
        for n in range(args.repeat):
            stages, status = measure_once(Path(scratch) / str(n))
            print(f"run {n + 1}: exit {status}, {stages['total']:.1f} s", file=sys.stderr)
            runs.append(stages)
    for name in runs[0]:
        values = [r.get(name, 0.0) for r in runs]
        print(f"{name:<72} {statistics.median(values):7.1f} s")


if __name__ == "__main__":
    main()
