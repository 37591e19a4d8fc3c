"""A person at the notebook: JupyterLab on 127.0.0.1 with a token, Debian's headless Chromium driven
by Playwright (the system browser, no download), 04-rollout against the sandbox. One sandbox, one
JupyterLab server and one browser serve the module; each test has its own change id, notebook and
nodes.

- Approve: Run All, the canary's panel; a click on Approve carries the canary out inside the
  button's callback; a page reload while it runs shows the true state once it is done (verdict,
  step log, summary and the wave-1 panel with the canary's verification); Run All again continues
  at wave-1 with a working panel under Waves.
- Abort: journaled; Run All again offers no gate and says the change is held.
Screenshots are kept under tests/artifacts/."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat
import pytest

from conftest import ROOT, require_tool
from sshd_server import free_port
from tmnb.twin.sandbox import Faults, Sandbox

from .test_rollout_sandbox import config, fleet

ARTIFACTS = ROOT / "tests" / "artifacts"
pytestmark = pytest.mark.browser


@dataclass
class Lab:
    root: Path
    url: str
    token: str
    box: Sandbox
    browser: Any  # a Playwright Browser (no type information)
    expect: Any  # playwright.sync_api.expect

    def notebook(self, name: str, **params: object) -> None:
        """04-rollout with ``params`` set after its parameters cell's defaults."""
        nb = nbformat.read(ROOT / "notebooks" / "04-rollout.ipynb", as_version=4)
        cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
        cell.source += "\n" + "\n".join(f"{key} = {value!r}" for key, value in params.items())
        nbformat.write(nb, self.root / name)

    def open(self, name: str) -> Any:
        page = self.browser.new_page(viewport={"width": 1400, "height": 1000})
        page.errors = []
        page.on("pageerror", lambda exc: page.errors.append(str(exc)))
        page.goto(f"{self.url}/lab/tree/{name}?token={self.token}&reset")
        self.wait_idle(name)
        return page

    def wait_idle(self, name: str, timeout: float = 120.0) -> None:
        """The notebook's kernel connected and idle, asked of the server (the toolbar says idle too early)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with urllib.request.urlopen(f"{self.url}/api/sessions?token={self.token}", timeout=5) as response:
                sessions = json.loads(response.read())
            mine = [s for s in sessions if s.get("path") == name]
            if any((s.get("kernel") or {}).get("execution_state") == "idle" for s in mine):
                time.sleep(1.0)  # the page's own kernel connection settles after the server sees it idle
                return
            time.sleep(0.25)
        pytest.fail(f"no idle kernel for {name} within {timeout:g}s")

    def run_all(self, page: Any) -> None:
        page.get_by_role("menuitem", name="Run", exact=True).click()
        page.get_by_role("menuitem", name="Run All Cells", exact=True).click()

    def verdict(self, page: Any) -> Any:
        """The verdict block at the top of the report (the first one on the page)."""
        return page.locator(".tmnb-verdict").first


def _button(page: Any, text: str) -> Any:
    return page.locator("button.widget-button", has_text=text)


def _cell(page: Any, call: str) -> Any:
    return page.locator(".jp-CodeCell", has_text=call)


def _shown(page: Any) -> str:
    return "\n".join(page.locator(".jp-OutputArea-output").all_inner_texts())


def _truthful(page: Any) -> None:
    """No exit code, no dict's repr, no pointer at a panel that is not there."""
    text = _shown(page)
    assert "exit_code" not in text
    assert "{'" not in text
    assert "offered in the panel above" not in text


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


@pytest.fixture(name="lab", scope="module")
def lab_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    chromium = require_tool("chromium")
    sync_api = pytest.importorskip("playwright.sync_api")
    base = tmp_path_factory.mktemp("lab")
    root = base / "lab"
    root.mkdir()
    with Sandbox(fleet(), base / "run", controller_interval=0.1) as box:
        box.cluster.ready_after = 0.2
        port, token = free_port(), secrets.token_hex(16)
        env = {
            **os.environ,
            "KUBECONFIG": str(box.write_kubeconfig(base / "kubeconfig")),
            "JUPYTER_CONFIG_DIR": str(base / "jcfg"),
            "JUPYTER_DATA_DIR": str(base / "jdata"),
            "JUPYTER_RUNTIME_DIR": str(base / "jrun"),
        }
        argv = [
            sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
            "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        ]  # fmt: skip
        server = subprocess.Popen(
            argv,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=(base / "lab.log").open("w"),
        )
        pw = sync_api.sync_playwright().start()
        try:
            _wait_http(f"http://127.0.0.1:{port}/api/status?token={token}")
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
            yield Lab(root, f"http://127.0.0.1:{port}", token, box, browser, sync_api.expect)
            browser.close()
        finally:
            pw.stop()
            server.terminate()
            try:
                server.wait(timeout=20)
            except subprocess.TimeoutExpired:
                server.kill()


def _journal(lab: Lab, change_id: str) -> list[dict[str, Any]]:
    path = lab.root.parent / change_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@dataclass
class Held(Faults):
    """Every Kubernetes API request waits until ``go`` is set: a change that has begun stays in the
    middle for as long as the test needs (the sandbox answers in a millisecond, so a canary is over
    before a page could reload)."""

    go: threading.Event = field(default_factory=threading.Event)

    def apply(self, path: str) -> None:
        self.go.wait(timeout=120)
        super().apply(path)


def _journaled(lab: Lab, change_id: str, node: str, timeout: float = 90.0) -> None:
    """Wait for the first journal record of ``node``."""
    deadline = time.monotonic() + timeout
    while not any(r["node"] == node for r in _journal(lab, change_id)):
        if time.monotonic() > deadline:
            pytest.fail(f"no journal record of {node} within {timeout:g}s")
        time.sleep(0.05)


def test_approve_then_reload_then_run_all_continues_at_the_wave_gate(lab: Lab) -> None:
    change = "lab-1"
    lab.notebook(
        "approve.ipynb", executor="sandbox", mode="execute", change_id=change, canary="w2", waves=2,
        target={"topologyManagerPolicy": "best-effort"}, state_dir=str(lab.root.parent / change),
        out_dir=str(lab.root.parent / "out-1"),
    )  # fmt: skip
    page = lab.open("approve.ipynb")
    lab.run_all(page)
    _button(page, "Approve canary").wait_for(timeout=90_000)
    lab.expect(lab.verdict(page)).to_contain_text("Waiting at gate canary", timeout=10_000)
    assert config(lab.box, "w2")["topologyManagerPolicy"] == "none"
    held = Held()
    lab.box.api.set_faults(held)
    try:
        _button(page, "Approve canary").click()
        _journaled(lab, change, "w2")  # the canary has begun; its first API request waits
        # reload while the callback runs: the saved page reconnects to the kernel's widgets
        page.keyboard.press("Control+s")
        page.wait_for_timeout(500)
        journal = _journal(lab, change)
        assert any(r["node"] == "w2" for r in journal) and not any(r["step"] == "node" for r in journal)  # mid-canary
        page.reload()
    finally:
        held.go.set()
        lab.box.api.set_faults(Faults())
    lab.wait_idle("approve.ipynb", timeout=180)
    verdict = lab.verdict(page)
    lab.expect(verdict).to_contain_text("Waiting at gate wave-1", timeout=120_000)
    lab.expect(verdict).to_contain_text("w2: verification done: configz shows the target")
    lab.expect(_cell(page, "runbook.canary(session, board)")).to_contain_text("w2: done")
    lab.expect(_cell(page, "runbook.summary(session, board)")).to_contain_text("awaiting approval")
    panel = page.locator(".widget-vbox", has=_button(page, "Approve wave-1")).last
    lab.expect(panel).to_contain_text("What the canary showed")
    lab.expect(panel).to_contain_text("w2: verification done")
    assert "Waiting at gate canary" not in _shown(page)
    _truthful(page)
    assert config(lab.box, "w2")["topologyManagerPolicy"] == "best-effort"
    # Run All again: the state comes from the journal, the panel of wave-1 is under Waves
    lab.run_all(page)
    waves = _cell(page, "runbook.waves(session, board)")
    _button(waves, "Approve wave-1").wait_for(timeout=90_000)
    lab.wait_idle("approve.ipynb")
    assert _button(page, "Approve canary").count() == 0
    lab.expect(waves).to_contain_text("What the canary showed")
    lab.expect(lab.verdict(page)).to_contain_text("Waiting at gate wave-1")
    lab.expect(_cell(page, "runbook.canary(session, board)")).to_contain_text("gate canary: done")
    _truthful(page)
    ARTIFACTS.mkdir(exist_ok=True)
    lab.verdict(page).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "rollout-lab-rerun.png"), full_page=False)
    for name in ("w1", "w3"):
        assert config(lab.box, name)["topologyManagerPolicy"] == "none"
    journal = _journal(lab, change)
    assert [r["result"] for r in journal if r["step"] == "gate" and r["event"] == "info" and "gate" in r][:1] == [
        "approved by a person at the notebook"
    ]
    assert not page.errors, page.errors
    page.close()


def test_abort_is_journaled_and_holds_on_run_all(lab: Lab) -> None:
    change = "lab-2"
    lab.notebook(
        "abort.ipynb", executor="sandbox", mode="execute", change_id=change, nodes=["w1"], canary="w1",
        target={"topologyManagerPolicy": "restricted"}, state_dir=str(lab.root.parent / change),
        out_dir=str(lab.root.parent / "out-2"),
    )  # fmt: skip
    before = (lab.box.cluster.kubelets["w1"].root / "var/lib/kubelet/config.yaml").read_bytes()
    page = lab.open("abort.ipynb")
    lab.run_all(page)
    _button(page, "Abort").wait_for(timeout=90_000)
    _button(page, "Abort").click()
    lab.expect(lab.verdict(page)).to_contain_text("Held", timeout=30_000)
    lab.expect(_cell(page, "runbook.summary(session, board)")).to_contain_text("Resume and go on")
    lab.run_all(page)
    lab.expect(_cell(page, "runbook.canary(session, board)")).to_contain_text("held at gate canary", timeout=90_000)
    lab.wait_idle("abort.ipynb")
    assert _button(page, "Approve").count() == 0
    lab.expect(lab.verdict(page)).to_contain_text("Held: held at gate canary")
    _truthful(page)
    ARTIFACTS.mkdir(exist_ok=True)
    lab.verdict(page).scroll_into_view_if_needed()
    page.screenshot(path=str(ARTIFACTS / "rollout-lab-held.png"), full_page=False)
    assert (lab.box.cluster.kubelets["w1"].root / "var/lib/kubelet/config.yaml").read_bytes() == before
    journal = _journal(lab, change)
    assert [(r["gate"], r.get("hold")) for r in journal if r["step"] == "gate"] == [("canary", "abort")]
    assert not [r for r in journal if r["node"] is not None]  # nothing was done on the node
    assert not page.errors, page.errors
    page.close()
