"""Hostile input answered in one line, never a traceback (issue 25, item 6): paths the system
refuses, self-referencing and exploding YAML, bundles whose members collide or carry terminal
escapes, a pasted 120,000-character selector."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest

from bounded import run_bounded
from tmnb.cli.main import main

LAUGHS = "\n".join(
    ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    + [f"{chr(97 + i)}: &{chr(97 + i)} [{','.join(['*' + chr(96 + i)] * 9)}]" for i in range(1, 9)]
)


def _one_line(capsys, expected: str) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("tmnb: error: ") and expected in lines[0], lines
    return lines[0]


def _bundle(path: Path, members: list[tuple[str, bytes]]) -> Path:
    manifest = {"schema": "tmnb.evidence/v1", "files": {n: hashlib.sha256(d).hexdigest() for n, d in members}}
    with tarfile.open(path, "w:gz") as tar:
        for name, data in [("MANIFEST.json", json.dumps(manifest).encode()), *members]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "03", "-p", "target", "&a {topologyManagerPolicyOptions: *a}"],
        ["run", "04", "-p", "options", "{soak: &s {minutes: 1}, node_files: *s}"],
        ["run", "03", "-p", "target", LAUGHS],
        ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicyOptions=&a {x: *a}"],
        ["rollout", "execute", "--change-id", "c", "--set", "topologyManagerPolicy=none", "--soak", LAUGHS],
    ],
)
def test_yaml_aliases_are_refused_in_every_parameter(tmp_path, capsys, argv):
    out = ["--out", str(tmp_path / "run")] if argv[0] == "run" else []
    assert main([*argv[:2], *out, *argv[2:]]) == 2
    _one_line(capsys, "YAML aliases (*name) are not accepted in a parameter")


def test_a_billion_laughs_is_refused_without_expanding(tmp_path):
    """Under 256 MiB of address space the expansion could not even be held; the deadline only stops a hang."""
    code = f"""
        import sys
        from tmnb.cli.main import main
        sys.exit(main(["run", "03", "--out", {str(tmp_path / "run")!r}, "-p", "target", {LAUGHS!r}]))
    """
    done = run_bounded(code, memory=1 << 30, timeout=120)
    assert done.returncode == 2, done.stderr
    assert done.stderr.startswith("tmnb: error: parameter target: YAML aliases")


def test_out_under_proc_is_one_line(tmp_path, capsys):
    evidence = tmp_path / "ev"
    evidence.mkdir()
    assert main(["run", "06", "--out", "/proc/tmnb-run", "-p", "evidence", str(evidence)]) == 2
    _one_line(capsys, "/proc/tmnb-run: cannot make the run folder here")


def test_colliding_members_are_refused_and_nothing_is_left_behind(tmp_path, capsys):
    bundle = _bundle(tmp_path / "b.tar.gz", [("runs/r/x", b"file"), ("runs/r/x/y", b"under a file")])
    assert main(["evidence", "verify", str(bundle)]) == 2
    _one_line(capsys, "refusing member 'runs/r/x/y': it collides with member 'runs/r/x'")
    target = tmp_path / "opened" / "bundle"
    assert main(["evidence", "open", str(bundle), "--to", str(target)]) == 2
    _one_line(capsys, "it collides with member")
    assert not target.exists()
    assert not [p for p in tmp_path.rglob("*") if p.name.startswith(".bundle")]


def test_a_member_named_twice_is_refused(tmp_path, capsys):
    bundle = _bundle(tmp_path / "b.tar.gz", [("runs/r/x", b"one"), ("runs/r/x", b"two")])
    assert main(["evidence", "verify", str(bundle)]) == 2
    _one_line(capsys, "refusing member 'runs/r/x': it collides with member 'runs/r/x'")


def test_member_names_are_printed_escaped(tmp_path, capsys):
    listed = [("runs/r/manifest.json", b"{}")]
    manifest = {"schema": "tmnb.evidence/v1", "files": {n: hashlib.sha256(d).hexdigest() for n, d in listed}}
    bundle = tmp_path / "b.tar.gz"
    with tarfile.open(bundle, "w:gz") as tar:
        for name, data in [("MANIFEST.json", json.dumps(manifest).encode()), *listed, ("runs/r/\x1b]0;pwned\x07", b"")]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert main(["evidence", "verify", str(bundle)]) == 4
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\x07" not in err
    assert f"{bundle}: extra: runs/r/\\x1b]0;pwned\\x07" in err.splitlines()


def test_evidence_pack_refuses_a_folder_that_is_no_run_before_walking_it(tmp_path, capsys, monkeypatch):
    def no_walk(self, pattern):
        raise AssertionError(f"walked {self} before checking it is a run folder")

    monkeypatch.setattr(Path, "rglob", no_walk)
    assert main(["evidence", "pack", "/", "--out", str(tmp_path / "b.tar.gz")]) == 2
    _one_line(capsys, "/: not a tmnb run folder: no manifest.json or journal.jsonl")


def test_rollout_state_dir_on_a_device_is_one_line(capsys):
    argv = ["rollout", "execute", "--change-id", "c", "--source", "sample", "--state-dir", "/dev/null"]
    assert main([*argv, "--set", "topologyManagerPolicy=restricted"]) == 2
    _one_line(capsys, "/dev/null: state_dir: is not a folder")


def test_sandbox_run_dir_on_a_file_is_one_line(tmp_path, capsys):
    afile = tmp_path / "afile"
    afile.write_text("")
    assert main(["sandbox", "up", "--run-dir", str(afile), "--kubeconfig", str(tmp_path / "kc")]) == 2
    _one_line(capsys, f"{afile}: not a folder")


@pytest.mark.parametrize("background", [[], ["--background"]])
def test_sandbox_kubeconfig_under_proc_is_one_line(tmp_path, capsys, background):
    argv = ["sandbox", "up", "--run-dir", str(tmp_path / "box"), "--kubeconfig", "/proc/tmnb-kubeconfig"]
    assert main([*argv, *background]) == 2
    _one_line(capsys, "/proc/tmnb-kubeconfig: cannot write the sandbox's kubeconfig here")
    assert not (tmp_path / "box" / "server.log").exists()  # refused before any child started


def test_a_120000_character_selector_is_refused(tmp_path, capsys):
    out = tmp_path / "run"
    assert main(["run", "02", "--out", str(out), "-p", "node_selector", "a" * 120_000]) == 2
    line = _one_line(capsys, "parameter node_selector: a label selector of 120,000 characters")
    assert len(line) < 200
    assert not out.exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "03", "-p", "target", "{topologyManagerPolicy: \x01}"],
        ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicyOptions=\x07"],
    ],
)
def test_control_characters_in_a_yaml_parameter_are_one_line(tmp_path, capsys, argv):
    out = ["--out", str(tmp_path / "run")] if argv[0] == "run" else []
    assert main([*argv[:2], *out, *argv[2:]]) == 2
    _one_line(capsys, "expected a YAML value: unacceptable character")
