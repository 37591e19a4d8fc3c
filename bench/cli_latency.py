"""How long ``tmnb`` takes to answer what its arguments alone reveal: help, version, user errors.

Each command runs ``--repeat`` times as a fresh process (as a user types it); the median and the
slowest wall time are printed with the exit status. Target (issue): under 0.3 s each, because
these answers come before pandas, papermill and the kubelet model are imported.

    .venv/bin/python bench/cli_latency.py --repeat 7
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READINESS = str(ROOT / "notebooks" / "03-readiness.ipynb")
SET = ["--set", "topologyManagerPolicy=restricted"]
COMMANDS: dict[str, list[str]] = {
    "--help": ["--help"],
    "--version": ["--version"],
    "whatif: missing snapshot": ["whatif", "--snapshot", "missing.json", *SET],
    "whatif: unknown setting": ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolcy=restricted"],
    "whatif: --node-root without --pods": ["whatif", "--node-root", ".", *SET],
    "run: missing notebook": ["run", "missing.ipynb"],
    "run: -p mode bogus": ["run", READINESS, "-p", "mode", "bogus"],
    "run: -p fail_on 3 (not a level)": ["run", READINESS, "-p", "fail_on", "3"],
    "run: --timeout -1": ["run", READINESS, "--timeout", "-1"],
    "snapshot: unknown source": ["snapshot", "--source", "elsewhere", "--out", "x.json"],
    "sandbox up: missing snapshot": ["sandbox", "up", "--from", "gone.json.gz", "--kubeconfig", "k"],
    "rollout plan: unknown setting": ["rollout", "plan", "--change-id", "c", "--set", "topologyManagerPolcy=x"],
    "rollout plan: missing snapshot": ["rollout", "plan", "--change-id", "c", "--source", "gone.json", *SET],
}


def _time(argv: list[str], cwd: str) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "tmnb.cli", *argv], capture_output=True, cwd=cwd, check=False)
    return time.perf_counter() - start, done.returncode


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as cwd:
        interpreter = [_time_python(cwd) for _ in range(args.repeat)]
        print(f"{'command':40} {'median s':>9} {'max s':>7} exit")
        print(f"{'(python -c pass)':40} {statistics.median(interpreter):9.3f} {max(interpreter):7.3f}")
        for name, argv in COMMANDS.items():
            runs = [_time(argv, cwd) for _ in range(args.repeat)]
            times = [t for t, _ in runs]
            print(f"{name:40} {statistics.median(times):9.3f} {max(times):7.3f} {runs[0][1]:4}")


def _time_python(cwd: str) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], cwd=cwd, check=True)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
