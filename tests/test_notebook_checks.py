"""Every notebook's parameters are checked before a kernel starts (issue 25, item 4), by the checks
of its ``tmnb`` subcommand: exit 2 (4 for a tampered bundle, as ``tmnb evidence verify``), one line
naming the parameter, capped in length. No run folder is made: papermill never started a kernel."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from tmnb.cli.main import main
from tmnb.cli.run.runner import run
from tmnb.errors import InputError
from tmnb.report.places import notebooks_dir

HUGE = "a" * 100_000


def _bundle(path: Path, members: dict[str, bytes], *, listed: dict[str, bytes] | None = None) -> Path:
    """A gzip tar with a manifest listing ``listed`` (default: the members) by sha256."""
    listed = members if listed is None else listed
    manifest = {
        "schema": "tmnb.evidence/v1",
        "runs": [],
        "files": {n: hashlib.sha256(d).hexdigest() for n, d in listed.items()},
    }
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [("MANIFEST.json", json.dumps(manifest).encode()), *members.items()]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


def _bundles(tmp: Path) -> dict[str, Path]:
    run = {"runs/r/manifest.json": b'{"notebook": "01-inventory.ipynb"}'}
    good = _bundle(tmp / "good.tar.gz", run)
    truncated = tmp / "truncated.tar.gz"
    truncated.write_bytes(good.read_bytes()[: good.stat().st_size // 2])
    non_tar = tmp / "non-tar.tar.gz"
    non_tar.write_bytes(b"this is not a tar archive\n" * 10)
    return {
        "truncated": truncated,
        "tampered": _bundle(tmp / "tampered.tar.gz", {"runs/r/manifest.json": b"{}"}, listed=run),
        "dotdot": _bundle(tmp / "dotdot.tar.gz", {**run, "runs/../../escape": b"x"}),
        "non-tar": non_tar,
    }


@pytest.fixture
def no_kubeconfig(monkeypatch, tmp_path):
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "no-such-kubeconfig"))
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)


SAMPLE = ["-p", "source", "sample"]
CASES = [
    ("04", [*SAMPLE, "-p", "nodes", "[nosuch]"], "parameter nodes: no node named 'nosuch' in this snapshot"),
    ("04", [*SAMPLE, "-p", "canary", "nosuch"], "parameter canary: no node named 'nosuch' in this snapshot"),
    ("04", [*SAMPLE, "-p", "target", "{topologyManagerPolcy: x}"], "parameter target.topologyManagerPolcy: unknown"),
    ("04", [*SAMPLE, "-p", "options", "{bogus: 1}"], "parameter options: unknown option 'bogus'"),
    ("04", [*SAMPLE, "-p", "options", "{drain_timeout: fast}"], "parameter options.drain_timeout: expected a positive"),
    ("04", [*SAMPLE, "-p", "change_id", "../x"], "parameter change_id: expected a DNS-1123 name"),
    ("04", [*SAMPLE, "-p", "waves", "-1"], "parameter waves: expected a wave size of at least 1, got -1"),
    ("04", [*SAMPLE, "-p", "mode", "execute"], "parameter executor: mode='execute' writes through an executor"),
    ("04", [*SAMPLE, "-p", "change_id", HUGE], "parameter change_id: expected a DNS-1123 name"),
    ("04", [], "parameter source: no kubeconfig: $KUBECONFIG names"),
    ("04", [*SAMPLE, "-p", "state_dir", "/dev/null"], "/dev/null: parameter state_dir: is not a folder"),
    ("03", ["-p", "node_selector", "a=b=c"], "parameter node_selector: invalid label selector requirement"),
    ("03", ["-p", "node_selector", "kubernetes.io/hostname=nosuch"], "parameter node_selector: matches no node"),
    ("03", ["-p", "target", "{cpuManagerPolicy: 7}"], "parameter target"),
    ("05", ["-p", "change", "yesterday"], "yesterday: parameter change: no such file; expected a rollout journal"),
    (
        "05",
        ["-p", "change", "2026-13-01T10:00Z"],
        "parameter change: no such file; expected a rollout journal (JSONL) or",
    ),
    ("05", ["-p", "window", " -5h"], "parameter window: invalid duration ' -5h'"),
    ("05", ["-p", "change", "/no/such/journal.jsonl"], "/no/such/journal.jsonl: parameter change: no such file"),
    ("01", ["-p", "source", "/dev/zero"], "/dev/zero: parameter source: not a snapshot: it starts with byte 0x00"),
    ("01", ["-p", "node_files", "carrier-pigeon"], "parameter node_files: node_files applies to source='live' only"),
    ("02", ["-p", "node_selector", "x in (a"], "parameter node_selector: invalid label selector requirement"),
    ("02", ["-p", "nodes", "[nosuch]"], "parameter nodes: no node named 'nosuch' in this snapshot"),
    ("06", ["-p", "evidence", "/no/such/evidence"], "/no/such/evidence: parameter evidence: no such file or folder"),
]


@pytest.mark.parametrize(("notebook", "params", "expected"), CASES)
def test_a_wrong_parameter_is_one_line_before_any_kernel(tmp_path, capsys, no_kubeconfig, notebook, params, expected):
    out = tmp_path / "run"
    assert main(["run", notebook, "--out", str(out), *params]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("tmnb: error: ") and expected in err[0], err[0]
    assert len(err[0]) < 1200  # a 100,000-character value is cut, not echoed
    assert not out.exists()


@pytest.mark.parametrize("kind", ["truncated", "tampered", "dotdot", "non-tar"])
def test_06_on_a_broken_bundle_exits_as_evidence_verify_does(tmp_path, capsys, kind):
    bundle = _bundles(tmp_path)[kind]
    verify = main(["evidence", "verify", str(bundle)])
    capsys.readouterr()
    out = tmp_path / "run"
    assert main(["run", "06", "--out", str(out), "-p", "evidence", str(bundle)]) == verify
    assert verify == (4 if kind == "tampered" else 2)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and str(bundle) in err[0], err
    assert not out.exists()


def test_the_demos_parameters_are_checked_the_same_way(tmp_path):
    out = tmp_path / "run"
    with pytest.raises(InputError, match="parameter waves: expected a wave size of at least 1"):
        run(notebooks_dir() / "04-rollout.ipynb", params={"source": "sample", "waves": 0}, out=out)
    assert not out.exists()


def test_every_notebook_has_its_checks():
    from tmnb.cli.run.checks import CHECKS

    assert sorted(CHECKS) == sorted(nb.stem for nb in notebooks_dir().glob("*.ipynb"))


def test_tmnb_rollout_meets_the_same_checks(capsys):
    argv = ["rollout", "plan", "--change-id", "c", "--source", "sample", "--state-dir", "/dev/null", "--set"]
    assert main([*argv, "topologyManagerPolicy=restricted"]) == 2
    expected = "tmnb: error: /dev/null: state_dir: is not a folder: the state folder holds the change's plan, journal"
    assert capsys.readouterr().err == f"{expected} and backups\n"
