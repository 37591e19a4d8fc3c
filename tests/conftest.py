"""Shared test plumbing. With TMNB_REQUIRE_ALL=1 (set by CI) a skipped test is a failed test,
so a missing real component (kubectl, prometheus, chromium) can never pass silently."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tmnb.cli.run.warmup import without_iri_grammar

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ALL = os.environ.get("TMNB_REQUIRE_ALL") == "1"
#: The tests marked ``slow`` run only when asked for (``make test-slow``): deselected, not skipped,
#: so TMNB_REQUIRE_ALL does not count them as missing.
SLOW = os.environ.get("TMNB_SLOW") == "1"
#: a tmpfs for the tests' scratch files, when it has room for them
MEMORY_FS, MEMORY_FS_ROOM = Path("/dev/shm"), 4 << 30


def pytest_configure(config: pytest.Config) -> None:
    """Before the test modules are imported, in every process: no IRI grammar, and the assertion-
    rewritten test modules kept as bytecode. Then once, in the process that starts the workers (or
    the only one), before any temporary path exists: the scratch files of every test and of every
    process it starts go to a tmpfs, and the files run in the order ``pytest_collection_modifyitems``
    gives."""
    # test_manifests' kubernetes-validate imports jsonschema, which compiles an RFC 3987 grammar
    # (2 s per worker); the suite's processes go without it, as every tmnb process does
    without_iri_grammar()
    # pytest rewrites the asserts of every test module (3 s per worker) and keeps the result as
    # bytecode next to it, unless bytecode writing is off, as PYTHONDONTWRITEBYTECODE sets it here
    # for every process; the tmnb commands and kernels the tests start keep that setting
    sys.dont_write_bytecode = False
    if hasattr(config, "workerinput"):
        return
    scratch_in_memory(config)
    if hasattr(config.option, "loadscopereorder"):
        # xdist's loadfile otherwise starts the files with the most tests first, whatever their
        # length: the one-test pipelines came last, and one of them ran on while the other worker idled
        config.option.loadscopereorder = False


def scratch_in_memory(config: pytest.Config) -> None:
    """Temporary files in memory rather than on disk: the suite creates and removes tens of thousands
    of small files (sandbox node trees, each node collection's unpacked bundle, run folders), and on
    a virtual disk each create or unlink costs about a millisecond of system time (tmpfs: 20 us).
    Through TMPDIR (inherited by the workers, kernels, tmnb commands and the node collector's
    ``mktemp``), so ``tmp_path`` lands there too. Left as it is when TMPDIR or ``--basetemp`` is set,
    or when the tmpfs is missing or small (a container's 64 MiB /dev/shm)."""
    if os.environ.get("TMPDIR") or config.option.basetemp:
        return
    try:
        room = os.statvfs(MEMORY_FS)
    except OSError:
        return
    if room.f_bavail * room.f_frsize < MEMORY_FS_ROOM:
        return
    scratch = MEMORY_FS / f"tmnb-tests-{os.getuid()}"
    scratch.mkdir(mode=0o700, exist_ok=True)
    if scratch.is_symlink() or scratch.stat().st_uid != os.getuid():
        return  # /dev/shm is everyone's: a directory planted there by someone else is not ours
    os.environ["TMPDIR"] = str(scratch)
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again


#: After the browser files, the files that take longest on one worker, longest first (each 7 s or
#: more with ``--durations`` on 2 cores). The rest, a few seconds each, follow in collection order.
LONGEST = (
    "deploy/test_install.py",
    "rollout/test_rollout_commands.py",
    "test_redaction.py",
    "rollout/test_rollout_sandbox.py",
    "test_runner.py",
    "test_runner_equivalence.py",
    "test_notebooks.py",
    "rollout/test_rollout_kill.py",
    "plots/test_plots.py",
    "twin/sandbox/test_kubectl.py",
    "twin/test_sample.py",
    "test_metrics_prometheus.py",
    "test_compare.py",
    "deploy/test_nightly.py",
    "rollout/test_ssh.py",
    "test_evidence_streaming.py",
    "rollout/test_rollout_notebook.py",
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The ``slow`` tests left out unless TMNB_SLOW=1; then the longest first under ``--dist loadfile``,
    where a file runs on one worker: the browser files (the demo behind the report checks, JupyterLab
    driving 04), then ``LONGEST``, so that the short
    files fill the end of the run on both workers instead of one long file finishing while the other
    worker idles (loadfile keeps this order: see ``pytest_configure``). Every worker sorts the same
    way, as xdist requires; the sort is stable, so the order is kept otherwise."""

    def rank(item: pytest.Item) -> int:
        if item.get_closest_marker("browser"):
            return 0
        path = item.path.relative_to(ROOT / "tests").as_posix() if item.path.is_relative_to(ROOT / "tests") else ""
        return 1 + LONGEST.index(path) if path in LONGEST else 1 + len(LONGEST)

    if not SLOW:
        slow = [item for item in items if item.get_closest_marker("slow")]
        config.hook.pytest_deselected(items=slow)
        items[:] = [item for item in items if not item.get_closest_marker("slow")]
    items.sort(key=rank)


def require_tool(name: str) -> str:
    """Path of a real tool the test needs; skip (or fail under TMNB_REQUIRE_ALL) when absent."""
    path = shutil.which(name)
    if path:
        return path
    if REQUIRE_ALL:
        pytest.fail(f"{name} is required (TMNB_REQUIRE_ALL=1) but is not installed")
    pytest.skip(f"{name} is not installed")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):  # type: ignore[no-untyped-def]
    outcome = yield
    report = outcome.get_result()
    if REQUIRE_ALL and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        report.longrepr = f"skipped under TMNB_REQUIRE_ALL=1: {report.longrepr}"


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT
