"""Evidence bundles: run folders packed with one manifest of sha256 checksums, verified, re-opened.

A bundle is a gzip tar: ``MANIFEST.json`` at the top (schema, tmnb version, who and when, each
run's notebook, parameters and status, and the sha256 of every file), then each run folder under
``runs/<name>/``. Verification compares the members with the manifest and names every missing,
extra and modified file. Opening refuses members that could escape the target (absolute paths,
``..``, links, devices) and leaves the unpacked files read-only.
"""

from __future__ import annotations

import getpass
import hashlib
import io
import json
import os
import socket
import stat
import tarfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from tmnb import __version__
from tmnb.errors import InputError

if TYPE_CHECKING:
    from tmnb.parse.jsonable import JsonDict

SCHEMA = "tmnb.evidence/v1"
MANIFEST = "MANIFEST.json"
#: a bundle larger than this is not something tmnb wrote (and must not fill the disk on open)
MAX_BYTES = 4 << 30


@dataclass
class Verification:
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)

    @property
    def intact(self) -> bool:
        return not (self.missing or self.extra or self.modified)

    def lines(self) -> list[str]:
        return (
            [f"missing: {p}" for p in self.missing]
            + [f"extra: {p}" for p in self.extra]
            + [f"modified: {p}" for p in self.modified]
        )


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _operator() -> str:
    try:
        user = os.environ.get("TMNB_OPERATOR") or getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user}@{socket.gethostname()}"


def _run_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        raise InputError("not a run folder (not a directory)", source=str(folder))
    files = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise InputError("run folders hold no links: refusing to pack one", source=str(path))
        if path.is_file():
            files.append(path)
    if not (folder / "manifest.json").is_file() and not (folder / "journal.jsonl").is_file():
        raise InputError("not a tmnb run folder: no manifest.json or journal.jsonl", source=str(folder))
    return files


def _run_summary(name: str, folder: Path) -> JsonDict:
    summary: JsonDict = {"name": name}
    manifest = folder / "manifest.json"
    if manifest.is_file():
        try:
            doc = json.loads(manifest.read_text())
        except (ValueError, RecursionError):
            raise InputError("manifest.json is not JSON", source=str(manifest)) from None
        if not isinstance(doc, dict):
            raise InputError("manifest.json is not a JSON object: not a tmnb run manifest", source=str(manifest))
        summary.update({k: doc.get(k) for k in ("notebook", "status", "parameters", "started", "finished")})
    return summary


#: Where a rollout keeps each node's files as they were, byte for byte (``rollout.steps``): the
#: rollback needs their secrets, so a bundle leaves them out unless asked (``node_secrets``).
BACKUP_DIR = "backup"


def pack(run_dirs: list[str | Path], out: str | Path, *, force: bool = False, node_secrets: bool = False) -> JsonDict:
    """Write the bundle; returns its manifest. A rollout's backups are node files as they were,
    credentials and all: they stay out (named in ``left_out``) unless ``node_secrets``, and then the
    manifest says the bundle holds node secrets."""
    target = Path(out)
    if target.exists() and not force:
        raise InputError("refusing to overwrite an existing bundle (evidence is immutable)", source=str(target))
    if not run_dirs:
        raise InputError("name at least one run folder to pack")
    members: dict[str, bytes] = {}
    runs: list[JsonDict] = []
    left_out: list[str] = []
    for run_dir in run_dirs:
        folder = Path(run_dir)
        name = folder.resolve().name
        if any(r["name"] == name for r in runs):
            raise InputError(f"two run folders are named {name!r}: pack them separately", source=str(folder))
        for path in _run_files(folder):
            member = f"runs/{name}/{path.relative_to(folder).as_posix()}"
            if path.relative_to(folder).parts[0] == BACKUP_DIR and not node_secrets:
                left_out.append(member)
                continue
            members[member] = path.read_bytes()
        runs.append(_run_summary(name, folder))
    manifest: JsonDict = {
        "schema": SCHEMA,
        "tmnb_version": __version__,
        "created": datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        "created_by": _operator(),
        "runs": runs,
        "node_secrets": node_secrets,
        "left_out": left_out,
        "files": {name: _sha256(data) for name, data in sorted(members.items())},
    }
    target.parent.mkdir(parents=True, exist_ok=True)
    with tarfile.open(target, "w:gz") as tar:
        for name, data in [(MANIFEST, json.dumps(manifest, indent=2).encode() + b"\n"), *sorted(members.items())]:
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o444, int(datetime.now(UTC).timestamp())
            tar.addfile(info, io.BytesIO(data))
    return manifest


def _open(path: str | Path) -> tarfile.TarFile:
    source = Path(path)
    if not source.is_file():
        raise InputError("no such bundle", source=str(source))
    if source.stat().st_size > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES >> 30} GiB: not a tmnb bundle", source=str(source))
    try:
        return tarfile.open(source, "r:*")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise InputError(f"not a tar archive ({exc.__class__.__name__})", source=str(source)) from None


def _check_member(member: tarfile.TarInfo, source: str) -> None:
    parts = PurePosixPath(member.name).parts
    if member.name.startswith("/") or ".." in parts or not parts:
        raise InputError(f"refusing member {member.name!r}: it points outside the bundle", source=source)
    if not (member.isfile() or member.isdir()):
        raise InputError(f"refusing member {member.name!r}: links and devices are not evidence", source=source)


def _read(path: str | Path) -> tuple[JsonDict, dict[str, bytes]]:
    source = str(path)
    with _open(path) as tar:
        try:
            found = tar.getmembers()
            files: dict[str, bytes] = {}
            for member in found:
                _check_member(member, source)
                if member.isfile():
                    handle = tar.extractfile(member)
                    files[member.name] = handle.read() if handle else b""
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise InputError(f"the archive is damaged ({exc.__class__.__name__})", source=source) from None
    raw = files.pop(MANIFEST, None)
    if raw is None:
        raise InputError(f"no {MANIFEST}: not a tmnb evidence bundle", source=source)
    try:
        manifest = json.loads(raw)
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{MANIFEST} does not parse: {exc}", source=source) from None
    if (
        not isinstance(manifest, dict)
        or manifest.get("schema") != SCHEMA
        or not isinstance(manifest.get("files"), dict)
    ):
        raise InputError(f"{MANIFEST}: expected schema {SCHEMA!r} with a files map", source=source)
    return manifest, files


def _verification(manifest: JsonDict, files: dict[str, bytes]) -> Verification:
    expected: dict[str, str] = manifest["files"]
    return Verification(
        missing=sorted(set(expected) - set(files)),
        extra=sorted(set(files) - set(expected)),
        modified=sorted(n for n in set(expected) & set(files) if _sha256(files[n]) != expected[n]),
    )


def verify(path: str | Path) -> tuple[JsonDict, Verification]:
    manifest, files = _read(path)
    return manifest, _verification(manifest, files)


def unpack(path: str | Path, dest: str | Path) -> tuple[Path, Verification]:
    """Extract into ``dest`` (which must not exist) with every file read-only; the verification says
    whether what was unpacked is what was packed."""
    target = Path(dest)
    if target.exists():
        raise InputError("refusing to unpack into an existing path", source=str(target))
    manifest, files = _read(path)
    for name, data in files.items():
        out = target / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        out.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    (target / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    (target / MANIFEST).chmod(0o444)
    return target, _verification(manifest, files)
