"""Where the wall time of one ``tmnb run`` goes, phase by phase, for each notebook on the embedded
sample (prints a table; the same table is in docs/performance.md).

    .venv/bin/python bench/notebook_phases.py [--repeat 3] [--notebooks 01 02 03]

Each run is a fresh ``tmnb``-like process (this script re-executes itself per run, so nothing is
warm that a user's run would not have warm). The phases follow the run's critical path:

- ``start``: process start to the runner's first line (interpreter, ``tmnb`` CLI imports);
- ``to papermill``: parameter checks, papermill's own import, and whatever the runner does before
  papermill records its start (reading and parameterising the notebook);
- ``kernel ready``: papermill's start to the first cell's start (kernel boot, handshake);
- ``first cell``: the first code cell after the parameters (the notebook's imports and its input);
- ``other cells``: the remaining cells, with the share spent in cells that draw tables (``show``)
  and figures (``figure``/``plot``) printed apart;
- ``shutdown``: the last cell's end to papermill's return (kernel info, the final save, shutdown);
- ``html``: nbconvert's rendering of the report;
- ``manifest``: the rest of the runner (results, checksums, manifest.json).

The medians over ``--repeat`` runs are printed; ``total`` is the process's wall time.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

PHASES = ("start", "to papermill", "kernel ready", "first cell", "other cells", "shutdown", "html", "manifest")


def _stamp(text: str) -> float:
    return datetime.fromisoformat(text).timestamp()


def _cell_kind(source: str) -> str:
    if "show(" in source:
        return "tables"
    if any(word in source for word in ("figure", "plot", "draw")):
        return "figures"
    return "other"


def measure_once(notebook: str, out: Path, launched: float) -> dict[str, float]:
    """Run ``notebook`` once in this process with the runner's steps timed (wall clock)."""
    from tmnb.cli.run import runner
    from tmnb.report import html as html_module

    marks: dict[str, float] = {"runner": time.time()}
    execute, render = runner._execute, html_module.render_html

    def timed_execute(*args: Any, **kwargs: Any) -> str | None:
        failure = execute(*args, **kwargs)
        marks["executed"] = time.time()
        return failure

    def timed_render(*args: Any, **kwargs: Any) -> Path:
        marks["html start"] = time.time()
        target = render(*args, **kwargs)
        marks["html end"] = time.time()
        return target

    runner._execute, html_module.render_html = timed_execute, timed_render
    try:
        result = runner.run(notebook, out=out)
    except Exception as exc:  # the bench reports a failed run and goes on
        print(f"{notebook}: {exc}", file=sys.stderr)
        return {}
    finished = time.time()
    nb = json.loads(result.notebook.read_text())
    meta = nb["metadata"]["papermill"]
    code = [c for c in nb["cells"] if c["cell_type"] == "code" and c["metadata"]["papermill"].get("start_time")]
    body = [c for c in code if "parameters" not in c["metadata"].get("tags", [])]
    body = [c for c in body if "injected-parameters" not in c["metadata"].get("tags", [])]
    first_start = _stamp(code[0]["metadata"]["papermill"]["start_time"])
    last_end = _stamp(code[-1]["metadata"]["papermill"]["end_time"])
    heavy_end = _stamp(body[0]["metadata"]["papermill"]["end_time"])
    kinds = {"tables": 0.0, "figures": 0.0}
    for cell in body[1:]:
        kind = _cell_kind("".join(cell["source"]))
        if kind in kinds:
            kinds[kind] += cell["metadata"]["papermill"]["duration"] or 0.0
    return {
        "start": marks["runner"] - launched,
        "to papermill": _stamp(meta["start_time"]) - marks["runner"],
        "kernel ready": first_start - _stamp(meta["start_time"]),
        "first cell": heavy_end - _stamp(body[0]["metadata"]["papermill"]["start_time"]),
        "other cells": last_end - heavy_end,
        "tables": kinds["tables"],
        "figures": kinds["figures"],
        "shutdown": marks["executed"] - last_end,
        "html": marks["html end"] - marks["html start"],
        "manifest": finished - marks["html end"],
        "total": finished - launched,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--notebooks", nargs="+", default=["01", "02", "03", "05", "06"])
    ap.add_argument("--child", nargs=3, metavar=("NOTEBOOK", "OUT", "LAUNCHED"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        notebook, out, launched = args.child
        print(json.dumps(measure_once(notebook, Path(out), float(launched))))
        return
    print(f"{'notebook':<9}" + "".join(f"{p:>13}" for p in (*PHASES, "total")) + "   (of cells: tables, figures)")
    with tempfile.TemporaryDirectory() as scratch:
        for notebook in args.notebooks:
            runs: list[dict[str, float]] = []
            for n in range(args.repeat):
                out = Path(scratch) / f"{notebook}-{n}"
                child = [sys.executable, __file__, "--child", notebook, str(out), repr(time.time())]
                done = subprocess.run(child, capture_output=True, text=True, check=False)
                lines = done.stdout.strip().splitlines()
                if done.returncode or not lines or lines[-1] == "{}":
                    print(f"{notebook}: run failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
                    continue
                runs.append(json.loads(lines[-1]))
            if not runs:
                continue
            median = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
            cells = f"   ({median['tables']:.2f}, {median['figures']:.2f})"
            print(f"{notebook:<9}" + "".join(f"{median[p]:>13.2f}" for p in (*PHASES, "total")) + cells)


if __name__ == "__main__":
    main()
