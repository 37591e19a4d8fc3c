"""The suite's clock-dependent tests (marker ``clock``) run again with the clock years ahead.

A test that takes its expectation from the day it was written (a hard-coded year, a window that
only holds this month) passes today and fails on its own one day. Here every ``clock`` test runs
again in a pytest subprocess under libfaketime (Debian's ``faketime`` package) with the clock five
years ahead, so that day is today. Everything the tests start (``sh``, ``date``, the sandbox's
threads) sees the same fake clock; static Go binaries such as kubectl do not, which is why the
kubectl tests carry no ``clock`` marker. A synthetic test in the shape of the old
``test_klog_lines_since`` shows that the run catches one. Without libfaketime the tests skip, and
fail under TMNB_REQUIRE_ALL=1 (CI installs it)."""

from __future__ import annotations

import glob
import os
import re
import runpy
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from conftest import REQUIRE_ALL, ROOT

AHEAD = "+5y"
#: every file with a ``clock`` test: the run below names them rather than collecting the whole tree
CLOCK_FILES = (
    "tests/rollout/test_rollout_sandbox.py",
    "tests/rollout/test_sandbox.py",
    "tests/twin/sandbox/test_kubelet_restart.py",
    "tests/twin/sandbox/test_kubelet_stop.py",
    "tests/sources/test_node_journal.py",
)
#: the shape of the old test_klog_lines_since: dates of the year it was written, the year read from the clock
HARD_CODED = """
from datetime import UTC, datetime

import pytest

from tmnb.rollout.executors.sandbox import klog_lines_since


@pytest.mark.clock
def test_written_this_year():
    text = 'I1231 23:59:59.000000    7 x] "old"\\nE0101 00:00:01.500000    7 x] "new year"\\n'
    since = datetime({next_year}, 1, 1, tzinfo=UTC)
    assert klog_lines_since(text, since) == 'E0101 00:00:01.500000    7 x] "new year"\\n'
"""


def libfaketime() -> str:
    found = sorted(glob.glob("/usr/lib/*/faketime/libfaketime.so.1") + glob.glob("/usr/lib/faketime/libfaketime.so.1"))
    if found:
        return found[0]
    if REQUIRE_ALL:
        pytest.fail("libfaketime is required (TMNB_REQUIRE_ALL=1) but is not installed (Debian package faketime)")
    pytest.skip("libfaketime is not installed (Debian package faketime)")


def ahead_env() -> dict[str, str]:
    """This environment with the clock ``AHEAD`` for every process started in it."""
    lib = libfaketime()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_XDIST", "PYTEST_CURRENT", "FAKETIME"))}
    # the monotonic clock is faked too (the default): libfaketime 0.9.10 breaks sleep() without it
    env |= {"LD_PRELOAD": " ".join(filter(None, [lib, env.get("LD_PRELOAD")])), "FAKETIME": AHEAD}
    return env


def pytest_ahead(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``clock`` tests of ``args`` in a pytest subprocess with the clock ``AHEAD``."""
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml")]
    return subprocess.run(
        [*argv, "-m", "clock", *args], cwd=ROOT, env=ahead_env(), capture_output=True, text=True, timeout=300
    )


def outcomes(run: subprocess.CompletedProcess[str]) -> dict[str, int]:
    """pytest's closing counts: {"passed": 11, "deselected": 30}."""
    last = run.stdout.strip().splitlines()[-1] if run.stdout.strip() else ""
    return {word: int(n) for n, word in re.findall(r"(\d+) (\w+)", last)}


def test_the_run_names_every_file_with_a_clock_test() -> None:
    marked = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "tests").rglob("*.py")
        if path.name != "test_clock.py" and "pytest.mark.clock" in path.read_text()
    }
    assert marked == set(CLOCK_FILES)


def test_the_fake_clock_is_years_ahead() -> None:
    year = subprocess.run(
        [sys.executable, "-c", "import datetime; print(datetime.datetime.now().year)"],
        env=ahead_env(),
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    shell = subprocess.run(["date", "-u", "+%Y"], env=ahead_env(), capture_output=True, text=True, check=True).stdout
    assert int(year) >= datetime.now(UTC).year + 4 and int(shell) == int(year)


def test_clock_tests_pass_with_the_clock_years_ahead() -> None:
    run = pytest_ahead(*CLOCK_FILES)
    counts = outcomes(run)
    assert run.returncode == 0 and counts.get("passed", 0) > 0, run.stdout[-4000:] + run.stderr[-2000:]
    assert set(counts) <= {"passed", "deselected"}, run.stdout[-4000:]


def test_a_test_that_hard_codes_this_year_fails_with_the_clock_years_ahead(tmp_path: Path) -> None:
    synthetic = tmp_path / "test_hard_coded_year.py"
    synthetic.write_text(HARD_CODED.format(next_year=datetime.now(UTC).year + 1))
    runpy.run_path(str(synthetic))["test_written_this_year"]()  # passes today: the clock is this year's
    run = pytest_ahead(str(synthetic))
    assert run.returncode == 1 and outcomes(run) == {"failed": 1}, run.stdout[-4000:] + run.stderr[-2000:]
    assert "I1231 23:59:59" in run.stdout  # Dec 31 is now after since, and kept
