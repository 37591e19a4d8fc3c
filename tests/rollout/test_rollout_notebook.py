"""notebooks/04-rollout.ipynb executed for real (papermill) against the sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from tmnb.cli import main
from tmnb.twin.sandbox import Faults, Sandbox

from .test_rollout_sandbox import CONFIG, NODES, box_fixture, digest, kubeconfig_fixture  # noqa: F401  (fixtures)

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


def test_execute_approved_canary_then_waits_at_the_wave(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    params = [("change_id", "nb-2"), ("target", "{topologyManagerPolicy: best-effort}"), ("canary", "w2")]
    code, manifest = _run(tmp_path, "canary", *params, ("mode", "execute"), ("approve", "[canary]"))
    assert code == 5 and manifest["status"] == "pending"
    outcome = manifest["results"]["rollout"]
    assert outcome["nodes"] == {"w2": "done", "w1": "pending", "w3": "pending"}
    assert outcome["next_gate"] == "wave-1"
    assert (
        yaml.safe_load((box.cluster.kubelets["w2"].root / CONFIG).read_text())["topologyManagerPolicy"] == "best-effort"
    )
    assert yaml.safe_load((box.cluster.kubelets["w1"].root / CONFIG).read_text())["topologyManagerPolicy"] == "none"
    assert (tmp_path / "canary" / "journal.jsonl").exists()  # the evidence travels with the run folder
    code, manifest = _run(tmp_path, "waves", *params, ("mode", "execute"), ("approve", "[canary, wave-1]"))
    assert code == 0 and manifest["results"]["rollout"]["status"] == "completed"
    html = (tmp_path / "waves" / "04-rollout.html").read_text()
    assert "wave-1: w1: done" in html


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


def test_postmortem_from_the_bundle_of_a_rollout(box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    box.api.set_faults(Faults(reject_pods={"w1"}))  # verification fails: the canary is rolled back
    params = [("change_id", "pm-1"), ("target", "{topologyManagerPolicy: restricted}"), ("canary", "w1")]
    code, _ = _run(tmp_path, "rollout", *params, ("mode", "execute"), ("approve", "[canary]"))
    assert code == 3
    bundle = tmp_path / "evidence.tar.gz"
    assert main(["evidence", "pack", str(tmp_path / "rollout"), str(tmp_path / "state"), "--out", str(bundle)]) == 0
    assert main(["evidence", "verify", str(bundle)]) == 0
    box.stop()  # the postmortem needs no cluster
    assert main(["run", str(ROOT / "notebooks" / "06-postmortem.ipynb"), "-p", "evidence", str(bundle),
                 "--out", str(tmp_path / "pm")]) == 0  # fmt: skip
    manifest = json.loads((tmp_path / "pm" / "manifest.json").read_text())
    assert manifest["results"]["journal_records"] > 10
    html = (tmp_path / "pm" / "06-postmortem.html").read_text()
    assert "verify failed" in html and "rollback done" in html and "disagrees with the prediction" in html
    assert (tmp_path / "pm" / "timeline.png").exists()
    # the kubelet's own start of each node, from the journal excerpts in the before snapshot
    assert manifest["results"]["kubelet_records"] >= 3 * len(NODES)
    assert "Creating topology manager with none policy" in html and "kubelet_version" in html
