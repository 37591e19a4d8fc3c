"""Evidence bundles: run folders packed with one manifest of sha256 checksums, verified, re-opened.

A bundle is a gzip tar: ``MANIFEST.json`` at the top (schema, tmnb version, who and when, each
run's notebook, parameters and status, and the sha256 of every file), then each run folder under
``runs/<name>/``. Verification compares the members with the manifest and names every missing,
extra and modified file. Opening refuses members that could escape the target (absolute paths,
``..``, links, devices) and leaves the unpacked files read-only.
"""

from __future__ import annotations

import getpass
import gzip
import hashlib
import io
import json
import os
import posixpath
import shutil
import socket
import stat
import tarfile
import tempfile
import zlib
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from tmnb import __version__
from tmnb.errors import InputError

if TYPE_CHECKING:
    from tmnb.parse.jsonable import JsonDict

SCHEMA = "tmnb.evidence/v1"
MANIFEST = "MANIFEST.json"
#: a bundle larger than this is not something tmnb wrote (and must not fill the disk on open)
MAX_BYTES = 4 << 30
#: nor does one that unpacks to more
MAX_UNPACKED = MAX_BYTES
MAX_MANIFEST = 64 << 20
#: what a stream reads at a time: under glibc malloc's mmap threshold (128 KiB), where freed buffers are
#: reused; at 1 MiB the heap grew and shrank around every chunk (a page fault per 4 KiB read, most of
#: the time of verifying a bundle whose tar has a pax header)
_CHUNK = 1 << 16


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
            [f"missing: {shown(p)}" for p in self.missing]
            + [f"extra: {shown(p)}" for p in self.extra]
            + [f"modified: {shown(p)}" for p in self.modified]
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
    if not (folder / "manifest.json").is_file() and not (folder / "journal.jsonl").is_file():  # before any walk
        raise InputError("not a tmnb run folder: no manifest.json or journal.jsonl", source=str(folder))
    files = []
    for path in sorted(folder.rglob("*")):
        if path.is_symlink():
            raise InputError("run folders hold no links: refusing to pack one", source=str(path))
        if path.is_file():
            files.append(path)
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


@contextmanager
def _open(path: str | Path) -> Iterator[tarfile.TarFile]:
    """The bundle as a stream: members are read once, in order, a chunk at a time (a member of 8 GiB
    of zeros is 40 MB on disk and must not be 8 GiB in memory). A gzip file may hold several members
    that read as one stream (``cat a.gz b.gz``); tarfile's own stream reader stops at the first, so
    gzip's reader (which also checks each member's CRC) feeds the tar stream; other archives as tarfile
    detects them."""
    source = Path(path)
    if not source.is_file():
        raise InputError("no such bundle", source=str(source))
    if source.stat().st_size > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES >> 30} GiB: not a tmnb bundle", source=str(source))
    with ExitStack() as stack:
        try:
            raw = stack.enter_context(source.open("rb"))
            gzipped = raw.read(2) == b"\x1f\x8b"
            raw.seek(0)
            stream = stack.enter_context(gzip.GzipFile(fileobj=raw, mode="rb")) if gzipped else raw
            tar = stack.enter_context(tarfile.open(fileobj=stream, mode="r|" if gzipped else "r|*", bufsize=_CHUNK))
        except (tarfile.TarError, OSError, EOFError, zlib.error) as exc:
            raise InputError(f"not a tar archive ({exc.__class__.__name__})", source=str(source)) from None
        yield tar


def shown(name: str) -> str:
    """A member name as printed: control characters escaped, so a crafted name cannot drive the terminal."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii") for ch in name)


def _check_member(member: tarfile.TarInfo, source: str, files: set[str], dirs: set[str]) -> str | None:
    """The member's name inside the bundle, as the manifest spells it; None for the bundle's own top
    folder. A bundle unpacked and packed again with ``tar -czf b.tar.gz -C dir .`` names its members
    ``./runs/...`` and adds a ``.`` entry: both stay inside, so both are read. Refused: a name that
    resolves above the top (absolute, or ``..`` past it), links, devices, a name twice, and a file that
    another member treats as a folder (``x`` and ``x/y``)."""
    name = posixpath.normpath(member.name) if member.name else ""
    if not name or member.name.startswith("/") or name == ".." or name.startswith("../"):
        raise InputError(f"refusing member {shown(member.name)!r}: it points outside the bundle", source=source)
    if not (member.isfile() or member.isdir()):
        raise InputError(f"refusing member {shown(member.name)!r}: links and devices are not evidence", source=source)
    if name == ".":
        if member.isdir():
            return None
        raise InputError(f"refusing member {shown(member.name)!r}: a file cannot be the bundle itself", source=source)
    parts = name.split("/")
    parents = {"/".join(parts[:i]) for i in range(1, len(parts))}
    clash = (parents & files) or ({name} & (files | dirs) if member.isfile() else {name} & files)
    if clash:
        raise InputError(
            f"refusing member {shown(member.name)!r}: it collides with member {shown(sorted(clash)[0])!r} "
            "(a name used twice, or a file used as a folder)",
            source=source,
        )
    (files if member.isfile() else dirs).add(name)
    dirs.update(parents)
    return name


@dataclass
class _Scan:
    manifest: JsonDict
    digests: dict[str, str]


def _members(tar: tarfile.TarFile, source: str, limit: int | None) -> Iterator[tuple[str, IO[bytes] | None]]:
    """Each checked member's name and, for files, its reader; ``limit``: the bytes they may add up to."""
    files: set[str] = set()
    dirs: set[str] = set()
    total = 0
    for member in tar:
        name = _check_member(member, source, files, dirs)
        if name is None:
            continue
        total += member.size
        if limit is not None and total > limit:
            raise InputError(f"unpacks to more than {limit >> 30} GiB: not a tmnb bundle", source=source)
        yield name, tar.extractfile(member) if member.isfile() else None


def _copy(handle: IO[bytes], sink: Callable[[bytes], object]) -> str:
    """Stream ``handle`` into ``sink`` a chunk at a time; its sha256."""
    digest = hashlib.sha256()
    for chunk in iter(lambda: handle.read(_CHUNK), b""):
        digest.update(chunk)
        sink(chunk)
    return digest.hexdigest()


def _manifest(raw: bytes | None, source: str) -> JsonDict:
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
    return manifest


def _scan(path: str | Path, write: Path | None = None, limit: int | None = None) -> _Scan:
    """One pass over the bundle: every member checked and hashed, files written under ``write`` if given."""
    source = str(path)
    digests: dict[str, str] = {}
    raw: bytes | None = None
    with _open(path) as tar:
        try:
            for name, handle in _members(tar, source, limit):
                if handle is None:
                    continue
                if name == MANIFEST:
                    raw = handle.read(MAX_MANIFEST + 1)
                    if len(raw) > MAX_MANIFEST:
                        raise InputError(f"{MANIFEST} is larger than {MAX_MANIFEST >> 20} MiB", source=source)
                    continue
                if write is None:
                    digests[name] = _copy(handle, lambda _: None)
                    continue
                out = write / name
                out.parent.mkdir(parents=True, exist_ok=True)
                with out.open("xb") as f:
                    digests[name] = _copy(handle, f.write)
                out.chmod(stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
        except (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile) as exc:
            raise InputError(f"the archive is damaged ({exc.__class__.__name__})", source=source) from None
    return _Scan(_manifest(raw, source), digests)


def _verification(manifest: JsonDict, digests: dict[str, str]) -> Verification:
    expected: dict[str, str] = manifest["files"]
    return Verification(
        missing=sorted(set(expected) - set(digests)),
        extra=sorted(set(digests) - set(expected)),
        modified=sorted(n for n in set(expected) & set(digests) if digests[n] != expected[n]),
    )


def verify(path: str | Path, *, limit: int | None = None) -> tuple[JsonDict, Verification]:
    """The manifest and how the members match it, read as a stream (any size; ``limit``: refuse members
    adding up to more bytes, as ``unpack`` does)."""
    scan = _scan(path, limit=limit)
    return scan.manifest, _verification(scan.manifest, scan.digests)


def unpack(path: str | Path, dest: str | Path) -> tuple[Path, JsonDict, Verification]:
    """Extract an intact bundle into ``dest`` (which must not exist) with every file read-only. A bundle
    that does not match its manifest is not unpacked (the verification says why), and a failure part
    way leaves nothing behind: the files go to a hidden sibling first, renamed into place at the end."""
    target = Path(dest)
    if target.exists():
        raise InputError("refusing to unpack into an existing path", source=str(target))
    manifest, result = verify(path, limit=MAX_UNPACKED)
    if not result.intact:
        return target, manifest, result
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        scan = _scan(path, write=partial, limit=MAX_UNPACKED)
        result = _verification(scan.manifest, scan.digests)  # the file may have changed since the first pass
        (partial / MANIFEST).write_text(json.dumps(scan.manifest, indent=2) + "\n")
        (partial / MANIFEST).chmod(0o444)
        partial.rename(target)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        raise
    return target, scan.manifest, result
