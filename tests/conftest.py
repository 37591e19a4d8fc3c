"""Shared test plumbing. With TMNB_REQUIRE_ALL=1 (set by CI) a skipped test is a failed test,
so a missing real component (kubectl, prometheus, chromium) can never pass silently."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
REQUIRE_ALL = os.environ.get("TMNB_REQUIRE_ALL") == "1"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The browser files (the demo behind the report checks, JupyterLab driving 04) are the longest
    on one worker under ``--dist loadfile``: they start first, so they do not finish last while the
    other worker idles. Every worker sorts the same way, as xdist requires."""
    items.sort(key=lambda item: item.get_closest_marker("browser") is None)  # stable: order kept otherwise


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
