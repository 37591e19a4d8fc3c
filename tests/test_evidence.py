"""Evidence bundles: pack run folders, verify them (exit 0 or 4 with names), open them safely."""

from __future__ import annotations

import gzip
import io
import json
import stat
import subprocess
import tarfile
from pathlib import Path

import pytest

from conftest import require_tool
from factories import node, snapshot
from tmnb.cli.main import main
from tmnb.evidence import unpack
from tmnb.snapshot import save


def _run_folder(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(
        json.dumps({"notebook": "04-rollout.ipynb", "status": "ok", "parameters": {}})
    )
    (folder / "journal.jsonl").write_text('{"time": "2026-12-01T10:00:00Z", "event": "intent"}\n')
    (folder / "report.html").write_text("<html>report</html>")
    save(snapshot([node("w1")], []), folder / "snapshot.json.gz")
    return folder


def _repack(bundle: Path, out: Path, change) -> None:  # type: ignore[no-untyped-def]
    """Copy a bundle member by member, letting ``change(name, data)`` edit, drop (None) or keep it."""
    with tarfile.open(bundle) as src, tarfile.open(out, "w:gz") as dst:
        for member in src.getmembers():
            data = src.extractfile(member).read()  # type: ignore[union-attr]
            data = change(member.name, data)
            if data is None:
                continue
            info = tarfile.TarInfo(member.name)
            info.size = len(data)
            dst.addfile(info, io.BytesIO(data))


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    runs = [_run_folder(tmp_path / "reports", n) for n in ("01-inventory", "04-rollout")]
    out = tmp_path / "evidence.tar.gz"
    assert main(["evidence", "pack", *map(str, runs), "--out", str(out)]) == 0
    return out


def test_pack_then_verify_is_intact(bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["evidence", "verify", str(bundle)]) == 0
    assert "intact: 10 file(s)" in capsys.readouterr().out
    with tarfile.open(bundle) as tar:
        manifest = json.loads(tar.extractfile("MANIFEST.json").read())  # type: ignore[union-attr]
    assert manifest["schema"] == "tmnb.evidence/v1" and [r["name"] for r in manifest["runs"]] == [
        "01-inventory",
        "04-rollout",
    ]
    assert manifest["runs"][1]["notebook"] == "04-rollout.ipynb" and "@" in manifest["created_by"]


@pytest.mark.parametrize(
    ("change", "line"),
    [
        (
            lambda n, d: b"<html>edited</html>" if n.endswith("04-rollout/report.html") else d,
            "modified: runs/04-rollout/report.html",
        ),
        (
            lambda n, d: None if n.endswith("01-inventory/journal.jsonl") else d,
            "missing: runs/01-inventory/journal.jsonl",
        ),
    ],
)
def test_tampering_exits_4_naming_the_file(bundle: Path, tmp_path: Path, capsys, change, line) -> None:  # type: ignore[no-untyped-def]
    bad = tmp_path / "bad.tar.gz"
    _repack(bundle, bad, change)
    assert main(["evidence", "verify", str(bad)]) == 4
    assert line in capsys.readouterr().err


def test_an_extra_file_is_named(bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "extra.tar.gz"
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as dst:
        for member in src.getmembers():
            dst.addfile(member, src.extractfile(member))
        info = tarfile.TarInfo("runs/04-rollout/planted.txt")
        info.size = 3
        dst.addfile(info, io.BytesIO(b"hi\n"))
    assert main(["evidence", "verify", str(bad)]) == 4
    assert "extra: runs/04-rollout/planted.txt" in capsys.readouterr().err


@pytest.mark.notebook
def test_open_unpacks_read_only_and_runs_the_postmortem(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "opened"
    assert main(["evidence", "open", str(bundle), "--to", str(target)]) == 0
    report = target / "runs" / "04-rollout" / "report.html"
    assert report.read_text() == "<html>report</html>"
    assert not report.stat().st_mode & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH)
    out = capsys.readouterr().out
    assert f"report: {report}" in out
    assert "postmortem: " in out and (target / "postmortem" / "06-postmortem.html").exists()


@pytest.mark.parametrize(
    "member",
    [
        tarfile.TarInfo("../escape.txt"),
        tarfile.TarInfo("/etc/evil"),
        (lambda i: (setattr(i, "type", tarfile.SYMTYPE), setattr(i, "linkname", "/etc/passwd"), i)[-1])(
            tarfile.TarInfo("runs/x/link")
        ),
        (lambda i: (setattr(i, "type", tarfile.CHRTYPE), i)[-1])(tarfile.TarInfo("runs/x/dev")),
    ],
    ids=["dotdot", "absolute", "symlink", "device"],
)
def test_unsafe_members_are_refused_on_open(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], member: tarfile.TarInfo
) -> None:
    bad = tmp_path / "unsafe.tar.gz"
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            dst.addfile(m, src.extractfile(m))
        dst.addfile(member, io.BytesIO(b"x" * member.size) if member.isfile() else None)
    assert main(["evidence", "open", str(bad), "--to", str(tmp_path / "out")]) == 2
    assert "refusing member" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not (tmp_path / "escape.txt").exists()


def test_bad_bundles_are_one_line_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "not.tar.gz").write_text("plain text")
    assert main(["evidence", "verify", str(tmp_path / "not.tar.gz")]) == 2
    assert "not a tar archive" in capsys.readouterr().err
    broken = tmp_path / "broken.tar.gz"
    with tarfile.open(broken, "w:gz") as tar:
        info = tarfile.TarInfo("MANIFEST.json")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"{nope"))
    assert main(["evidence", "verify", str(broken)]) == 2
    assert "MANIFEST.json does not parse" in capsys.readouterr().err
    assert main(["evidence", "pack", str(tmp_path), "--out", str(tmp_path / "o.tar.gz")]) == 2
    assert "not a tmnb run folder" in capsys.readouterr().err


@pytest.mark.parametrize("top", [".", "./"], ids=["dot", "dot-slash"])
def test_a_bundle_repacked_the_usual_way_verifies(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], top: str
) -> None:
    """Unpacked and packed again with ``tar -czf b.tar.gz -C dir .``: './' names and a '.' entry
    stay inside the bundle, so it verifies and opens (only a name that climbs out is refused)."""
    tar = require_tool("tar")
    unpacked = tmp_path / "unpacked"
    unpacked.mkdir()
    subprocess.run([tar, "-xzf", str(bundle), "-C", str(unpacked)], check=True)
    repacked = tmp_path / "repacked.tar.gz"
    subprocess.run([tar, "-czf", str(repacked), "-C", str(unpacked), top], check=True)
    with tarfile.open(repacked) as check:
        names = check.getnames()
    assert "./MANIFEST.json" in names and ("." in names or "./" in names), names
    assert main(["evidence", "verify", str(repacked)]) == 0
    assert "intact: 10 file(s)" in capsys.readouterr().out
    # opened as ``tmnb evidence open`` unpacks (its postmortem run: test_open_unpacks_read_only_...)
    target, _, result = unpack(repacked, tmp_path / "out")
    assert result.intact and (target / "runs" / "04-rollout" / "journal.jsonl").is_file()


def test_a_bundle_of_several_gzip_members_is_read_to_its_end(bundle: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Gzip members written one after the other are one stream (``cat a.gz b.gz``, or a compressor
    that works in blocks): every member of the tar inside is read, not only those of the first."""
    data = gzip.decompress(bundle.read_bytes())
    cut = tarfile.BLOCKSIZE * 3  # inside the tar: the manifest's header and body, then the rest
    split = tmp_path / "split.tar.gz"
    split.write_bytes(gzip.compress(data[:cut]) + gzip.compress(data[cut:]))
    assert main(["evidence", "verify", str(split)]) == 0
    assert "intact: 10 file(s)" in capsys.readouterr().out


def test_a_name_that_climbs_out_through_a_folder_is_refused(bundle: Path, tmp_path: Path) -> None:
    bad = tmp_path / "climb.tar.gz"
    with tarfile.open(bundle) as src, tarfile.open(bad, "w:gz") as dst:
        for m in src.getmembers():
            dst.addfile(m, src.extractfile(m))
        info = tarfile.TarInfo("./runs/../../escape.txt")
        info.size = 1
        dst.addfile(info, io.BytesIO(b"x"))
    assert main(["evidence", "verify", str(bad)]) == 2
    assert not (tmp_path / "escape.txt").exists()


def test_rollout_backups_stay_out_unless_asked_and_then_the_manifest_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A backup is the node's file byte for byte, credentials and all: packed only on request."""
    state = _run_folder(tmp_path, "tm-1")
    kept = state / "backup" / "w1" / "var/lib/kubelet/config.yaml"
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"staticPodURLHeader:\n  Authorization:\n  - Bearer plantedBackupToken99\n")
    member = "runs/tm-1/backup/w1/var/lib/kubelet/config.yaml"
    assert main(["evidence", "pack", str(state), "--out", str(tmp_path / "plain.tar.gz")]) == 0
    assert "1 backup file(s) left out" in capsys.readouterr().out
    with tarfile.open(tmp_path / "plain.tar.gz") as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
        assert member not in tar.getnames()
    assert (manifest["node_secrets"], manifest["left_out"]) == (False, [member])
    assert main(["evidence", "verify", str(tmp_path / "plain.tar.gz")]) == 0  # left out is not missing
    assert "node secrets" not in capsys.readouterr().out

    assert main(["evidence", "pack", str(state), "--out", str(tmp_path / "all.tar.gz"), "--with-node-secrets"]) == 0
    with tarfile.open(tmp_path / "all.tar.gz") as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
        assert tar.extractfile(member).read() == kept.read_bytes()  # type: ignore[union-attr]
    assert (manifest["node_secrets"], manifest["left_out"]) == (True, [])
    capsys.readouterr()
    assert main(["evidence", "verify", str(tmp_path / "all.tar.gz")]) == 0
    assert capsys.readouterr().out.rstrip().endswith("; holds node secrets (rollout backups)")
