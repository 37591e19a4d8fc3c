"""notebooks/04-rollout.ipynb executed for real (papermill) against the sandbox: plan mode, and
execute mode without an approval. Its approved runs (the canary, the wave after it, a rolled-back
canary and the postmortem of its evidence) are test_rollout_commands', run as a user pastes them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from tmnb.cli.main import main
from tmnb.twin.sandbox import Sandbox

from .test_rollout_sandbox import NODES, box_fixture, digest, kubeconfig_fixture  # noqa: F401  (fixtures)

NOTEBOOK = str(ROOT / "notebooks" / "04-rollout.ipynb")
pytestmark = pytest.mark.notebook


def _run(tmp_path: Path, name: str, *params: tuple[str, str]) -> tuple[int, dict]:  # type: ignore[type-arg]
    argv = ["run", NOTEBOOK, "--out", str(tmp_path / name)]
    for key, value in (("executor", "sandbox"), ("state_dir", str(tmp_path / "state")), *params):
        argv += ["-p", key, value]
    code = main(argv)
    return code, json.loads((tmp_path / name / "manifest.json").read_text())


def test_plan_mode_writes_nothing(box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    before = {n: digest(box, n) for n in NODES}
    code, manifest = _run(tmp_path, "plan", ("change_id", "nb-1"), ("target", "{topologyManagerPolicy: restricted}"))
    assert code == 0 and manifest["status"] == "ok"
    assert manifest["results"]["rollout"]["status"] == "planned"
    assert {n: digest(box, n) for n in NODES} == before
    html = (tmp_path / "plan" / "04-rollout.html").read_text()
    assert "+topologyManagerPolicy: restricted" in html and "canary" in html


def test_execute_without_approval_fails_closed(box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    before = {n: digest(box, n) for n in NODES}
    code, manifest = _run(
        tmp_path,
        "closed",
        ("change_id", "nb-3"),
        ("target", "{topologyManagerPolicy: restricted}"),
        ("mode", "execute"),
    )
    assert code == 5 and manifest["status"] == "pending"
    assert "not approved" in (tmp_path / "closed" / "04-rollout.html").read_text()
    assert {n: digest(box, n) for n in NODES} == before
