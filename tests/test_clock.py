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
import runpy
import subprocess
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from xml.etree import ElementTree

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
SYNTHETIC = "test_written_this_year"
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


@dataclass
class Ahead:
    """One pytest run with the clock ``AHEAD``: its process and each test's outcome by name."""

    run: subprocess.CompletedProcess[str]
    outcomes: dict[str, str]  #: "test_x[param]" -> passed, failed, error or skipped
    failures: dict[str, str]  #: the failure report of each test that did not pass


def outcomes(junit: Path) -> tuple[dict[str, str], dict[str, str]]:
    """Each test case's outcome and failure text from pytest's JUnit XML."""
    got, texts = {}, {}
    for case in ElementTree.parse(junit).iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        bad = [child for child in case if child.tag in ("failure", "error", "skipped")]
        got[name] = {"failure": "failed"}.get(bad[0].tag, bad[0].tag) if bad else "passed"
        if bad:
            texts[name] = f"{bad[0].get('message', '')}\n{bad[0].text or ''}"
    return got, texts


def run_ahead(tmp: Path) -> Ahead:
    """The ``clock`` tests of ``CLOCK_FILES`` and the synthetic hard-coded-year test, in one pytest
    subprocess (one interpreter start and one collection) with the clock ``AHEAD``."""
    synthetic = tmp / "test_hard_coded_year.py"
    synthetic.write_text(HARD_CODED.format(next_year=datetime.now(UTC).year + 1))
    runpy.run_path(str(synthetic))[SYNTHETIC]()  # passes today: the clock is this year's
    junit = tmp / "junit.xml"
    argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-c", str(ROOT / "pyproject.toml")]
    argv += ["-m", "clock", f"--junitxml={junit}", *CLOCK_FILES, str(synthetic)]
    run = subprocess.run(argv, cwd=ROOT, env=ahead_env(), capture_output=True, text=True, timeout=300)
    assert junit.exists(), run.stdout[-4000:] + run.stderr[-2000:]
    return Ahead(run, *outcomes(junit))


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


def test_clock_tests_pass_and_a_hard_coded_year_fails_with_the_clock_years_ahead(tmp_path: Path) -> None:
    """One test, so that the run is one child on one xdist worker."""
    run = run_ahead(tmp_path)
    clock_tests_pass(run)
    a_test_that_hard_codes_this_year_fails(run)


def clock_tests_pass(ahead: Ahead) -> None:
    ours = {name: outcome for name, outcome in ahead.outcomes.items() if SYNTHETIC not in name}
    assert ours and set(ours.values()) == {"passed"}, ahead.failures or ahead.run.stdout[-4000:]
    assert {name.split("::")[0].rsplit(".", 1)[-1] for name in ours} == {Path(f).stem for f in CLOCK_FILES}


def a_test_that_hard_codes_this_year_fails(ahead: Ahead) -> None:
    (name,) = [name for name in ahead.outcomes if name.endswith(f"::{SYNTHETIC}")]
    assert ahead.outcomes[name] == "failed" and ahead.run.returncode == 1, ahead.run.stdout[-4000:]
    assert "I1231 23:59:59" in ahead.run.stdout  # Dec 31 is now after since, and kept
