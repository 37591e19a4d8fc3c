"""A person at the notebook: JupyterLab on 127.0.0.1 with a token, Debian's headless Chromium driven
by Playwright (the system browser, no download), 04-rollout against the sandbox: Run All, the canary
gate appears, a click on Approve carries the canary out inside the button's callback, and the
wave-1 gate appears next. The screenshot is kept under tests/artifacts/."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import nbformat
import pytest
import yaml

from conftest import ROOT, require_tool
from sshd_server import free_port
from tmnb.twin.sandbox import Sandbox

from .test_rollout_sandbox import CONFIG, box_fixture, kubeconfig_fixture  # noqa: F401  (fixtures)

ARTIFACTS = ROOT / "tests" / "artifacts"
pytestmark = pytest.mark.browser


def _notebook(target: Path, state: Path) -> None:
    nb = nbformat.read(ROOT / "notebooks" / "04-rollout.ipynb", as_version=4)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    cell.source += (
        '\nexecutor = "sandbox"\nmode = "execute"\nchange_id = "lab-1"\ncanary = "w2"\nwaves = 2\n'
        'target = {"topologyManagerPolicy": "best-effort"}\n'
        f"state_dir = {str(state)!r}\nout_dir = {str(target.parent / 'out')!r}\n"
    )
    nbformat.write(nb, target)


def _wait_http(url: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            time.sleep(0.25)
    pytest.fail(f"JupyterLab did not answer {url} within {timeout:g}s")


def _wait_idle(url: str, timeout: float = 90.0) -> None:
    """The notebook's kernel connected and idle, asked of the server (the toolbar says idle too early)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with urllib.request.urlopen(url, timeout=5) as response:
            sessions = json.loads(response.read())
        if any((s.get("kernel") or {}).get("execution_state") == "idle" for s in sessions):
            time.sleep(1.0)  # the page's own kernel connection settles after the server sees it idle
            return
        time.sleep(0.25)
    pytest.fail(f"no idle kernel within {timeout:g}s")


def test_approve_in_the_browser_runs_the_canary_and_offers_the_next_gate(
    box: Sandbox, kubeconfig: Path, tmp_path: Path
) -> None:
    chromium = require_tool("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    lab_root = tmp_path / "lab"
    lab_root.mkdir()
    _notebook(lab_root / "rollout.ipynb", tmp_path / "state")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "KUBECONFIG": str(kubeconfig),
        "JUPYTER_CONFIG_DIR": str(tmp_path / "jcfg"),
        "JUPYTER_DATA_DIR": str(tmp_path / "jdata"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "jrun"),
    }
    lab = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "jupyterlab",
            "--no-browser",
            "--allow-root",
            "--ip=127.0.0.1",
            f"--port={port}",
            "--ServerApp.port_retries=0",
            f"--IdentityProvider.token={token}",
            f"--ServerApp.root_dir={lab_root}",
        ],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "lab.log").open("w"),
    )
    try:
        _wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
        with sync_api.sync_playwright() as pw:
            browser = pw.chromium.launch(
                executable_path=chromium,
                args=[
                    "--headless",
                    "--no-sandbox",
                    "--disable-gpu",
                    "--disable-background-networking",
                    "--no-first-run",
                ],
            )
            page = browser.new_page(viewport={"width": 1400, "height": 1000})
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(f"http://127.0.0.1:{port}/lab/tree/rollout.ipynb?token={token}&reset")
            _wait_idle(f"http://127.0.0.1:{port}/api/sessions?token={token}")
            page.get_by_role("menuitem", name="Run", exact=True).click()
            page.get_by_role("menuitem", name="Run All Cells", exact=True).click()
            approve = page.locator("button.widget-button", has_text="Approve canary")
            approve.wait_for(timeout=90_000)
            assert (
                yaml.safe_load((box.cluster.kubelets["w2"].root / CONFIG).read_text())["topologyManagerPolicy"]
                == "none"
            )
            approve.click()
            page.locator("button.widget-button", has_text="Approve wave-1").wait_for(timeout=120_000)
            ARTIFACTS.mkdir(exist_ok=True)
            page.screenshot(path=str(ARTIFACTS / "rollout-lab-approve.png"), full_page=False)
            page.locator(".jp-OutputArea-output", has_text="w2: done").first.wait_for(timeout=10_000)
            browser.close()
        assert (
            yaml.safe_load((box.cluster.kubelets["w2"].root / CONFIG).read_text())["topologyManagerPolicy"]
            == "best-effort"
        )
        assert yaml.safe_load((box.cluster.kubelets["w1"].root / CONFIG).read_text())["topologyManagerPolicy"] == "none"
        journal = [json.loads(line) for line in (tmp_path / "state" / "journal.jsonl").read_text().splitlines()]
        assert any(r.get("result") == "approved by a person at the notebook" for r in journal)
        assert not errors, errors
    finally:
        lab.terminate()
        try:
            lab.wait(timeout=20)
        except subprocess.TimeoutExpired:
            lab.kill()
