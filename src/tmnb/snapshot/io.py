"""Reading and writing snapshot files (JSON, optionally gzip) with validation and checksums.

A snapshot is evidence: loading must say exactly what is wrong (file, JSON path, what was
expected), and writing leaves a sidecar manifest whose sha256 is computed over the
*canonical* JSON, so re-compressing or re-indenting a file does not change its identity.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import json
import math
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tmnb import __version__
from tmnb.collector import paused
from tmnb.errors import ConfigRejected, InputError, SnapshotError
from tmnb.parse.files import MIB, read_capped
from tmnb.parse.kubelet_config import check_field_value
from tmnb.parse.numbers import INT64_MAX, OversizedNumber, json_int
from tmnb.snapshot.identity import duplicate_node, duplicate_pod
from tmnb.snapshot.model import SCHEMA_ID, Snapshot, SnapshotSource
from tmnb.snapshot.values import find_out_of_range

_ADAPTER: TypeAdapter[Snapshot] = TypeAdapter(Snapshot)
_SOURCE_ADAPTER: TypeAdapter[SnapshotSource] = TypeAdapter(SnapshotSource)
_GZIP_MAGIC = b"\x1f\x8b"
#: Largest snapshot read, compressed or not: a fleet of thousands of nodes with their pods stays far
#: below it, and ``/dev/zero`` or a disk image given by mistake stops here instead of at the OOM killer.
MAX_SNAPSHOT_BYTES = 1024 * MIB
_SNIFF = 4096


def to_dict(snapshot: Snapshot) -> dict[str, Any]:
    document: dict[str, Any] = _ADAPTER.dump_python(snapshot, mode="json")
    return document


def canonical_json(data: dict[str, Any]) -> bytes:
    """Sorted keys, no whitespace, UTF-8: the form whose sha256 identifies a snapshot."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(snapshot: Snapshot) -> str:
    return hashlib.sha256(canonical_json(to_dict(snapshot))).hexdigest()


def json_schema() -> dict[str, Any]:
    schema = _ADAPTER.json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "https://tmnb.dev/schemas/snapshot-v1.json"
    return schema


def _json_path(loc: tuple[int | str, ...]) -> str:
    path = "$"
    for part in loc:
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    return path


def from_dict(data: object, *, source: str = "<snapshot>") -> Snapshot:
    """Validate a decoded document and build the model; the first problem is reported precisely."""
    return _validated(data, source, in_range=False)


def _validated(data: object, source: str, *, in_range: bool) -> Snapshot:
    """``from_dict``; ``in_range``: the decoder saw every number fit (``_Numbers``), so the walk of
    every value that finds the one that does not is skipped."""
    if not isinstance(data, dict):
        raise SnapshotError(f"expected a JSON object at the top level, got {type(data).__name__}", source=source)
    schema = data.get("schema")
    if schema != SCHEMA_ID:
        if isinstance(schema, str) and schema.startswith("tmnb.snapshot/"):
            raise SnapshotError(
                f"schema {schema!r} is not supported by tmnb {__version__}, which reads {SCHEMA_ID!r}; "
                "upgrade tmnb to read newer snapshots",
                source=source,
                where="$.schema",
            )
        raise SnapshotError(f"expected {SCHEMA_ID!r}, got {schema!r}", source=source, where="$.schema")
    bad = None if in_range else find_out_of_range(data)
    if bad:
        raise SnapshotError(bad[1], source=source, where=bad[0])
    try:
        snapshot = _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = exc.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        got = first.get("input")
        got_text = "" if isinstance(got, dict | list) else f", got {got!r}"
        raise SnapshotError(
            f"{first['msg']}{got_text}{suffix}", source=source, where=_json_path(tuple(first["loc"]))
        ) from None
    _check_settings(snapshot, source)
    duplicate = duplicate_node(snapshot.nodes, "$.nodes") or duplicate_pod(snapshot.pods, "$.pods")
    if duplicate:
        raise SnapshotError(duplicate[1], source=source, where=duplicate[0])
    return snapshot


def _check_settings(snapshot: Snapshot, source: str) -> None:
    """Kubelet settings hold values the kubelet decoded; one it could not decode (a hand edit) would
    reach the admission model as, say, a reservedMemory entry that is not a mapping."""
    for i, node in enumerate(snapshot.nodes):
        for name, setting in node.kubelet.settings.items():
            layers = [("", setting.value)] + [(f".overridden[{j}]", o.value) for j, o in enumerate(setting.overridden)]
            for at, value in layers:
                try:
                    check_field_value(name, value, source=source)
                except ConfigRejected as err:
                    where = f"$.nodes[{i}].kubelet.settings.{name}{at}.value"
                    raise SnapshotError(err.message, source=source, where=where) from None


def sniff(path: str | Path, label: str | None = None) -> None:
    """Refuse at once what cannot be a snapshot (a directory, a device of zeros, a binary) from its
    first bytes, so a command answers before it loads anything."""
    label = label or str(path)
    try:
        with open(path, "rb") as handle:
            head = handle.read(_SNIFF)
    except IsADirectoryError:
        raise SnapshotError("is a directory; expected a snapshot file (.json or .json.gz)", source=label) from None
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot: {exc.strerror}", source=label) from None
    start = head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1]
    if not head.startswith(_GZIP_MAGIC) and start not in (b"{", b"["):
        what = f"byte 0x{start[0]:02x}" if start else "nothing but whitespace"
        raise SnapshotError(f"not a snapshot: it starts with {what}, expected a JSON object or gzip data", source=label)


def _read_snapshot_bytes(path: Path, label: str, limit: int) -> tuple[bytes, bytes]:
    """The file's bytes and its JSON text (the same bytes unless gzip), refusing early what cannot be
    a snapshot (a device, a binary, a huge file)."""
    sniff(path, label)
    try:
        body = read_capped(path, limit=limit, what="a snapshot file", source=label)
    except InputError as exc:
        raise SnapshotError(exc.message, source=label) from None
    if not body.startswith(_GZIP_MAGIC):
        return body, body
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(body)) as unzipped:
            raw = unzipped.read(limit + 1)
    except (EOFError, OSError, zlib.error) as exc:
        raise SnapshotError(f"gzip data is truncated or corrupt ({exc})", source=label) from None
    if len(raw) > limit:
        raise SnapshotError(f"decompresses to more than {limit // MIB} MiB; expected a snapshot", source=label)
    return body, raw


@dataclass(frozen=True)
class StoredFile:
    """The verified file a snapshot was loaded from: ``save`` of that same (unnarrowed) snapshot
    copies the file, still holding these bytes, instead of encoding 200 MB of JSON again (10 s at
    5,000 nodes). ``sha256`` is the canonical digest its manifest vouched for."""

    path: Path
    file_sha256: str
    sha256: str
    packed: bool


_STORED = "_stored_file"


def load(path: str | Path, *, limit: int = MAX_SNAPSHOT_BYTES) -> Snapshot:
    """Load a ``.json`` or gzip-compressed snapshot, verifying its sidecar manifest when present."""
    path = Path(path)
    label = str(path)
    body, raw = _read_snapshot_bytes(path, label, limit)
    with paused():
        data, in_range = _decoded(raw, label)
        snapshot = _validated(data, label, in_range=in_range)
        file_sha256 = hashlib.sha256(body).hexdigest()
        vouched = _verify_manifest(path, file_sha256, data)
    if vouched is not None:
        snapshot.__dict__[_STORED] = StoredFile(path, file_sha256, vouched, body.startswith(_GZIP_MAGIC))
    return snapshot


class _Numbers:
    """``json.loads`` hooks: integers as ``json_int`` converts them, floats and the constants as
    ``json`` does, noting whether each fits a 64-bit field; when all do, loading skips the walk of every
    value that looks for one that does not (a second of a 5,000-node file)."""

    def __init__(self) -> None:
        self.in_range = True

    def integer(self, text: str) -> int | OversizedNumber:
        value = json_int(text)
        if type(value) is not int or not -INT64_MAX - 1 <= value <= INT64_MAX:
            self.in_range = False
        return value

    def real(self, text: str) -> float:
        value = float(text)
        if not math.isfinite(value):
            self.in_range = False
        return value

    def constant(self, name: str) -> float:
        self.in_range = False  # NaN, Infinity, -Infinity
        return float(name)


def _decoded(raw: bytes, label: str) -> tuple[Any, bool]:
    """The decoded document, and whether every number in it fits a 64-bit field."""
    numbers = _Numbers()
    try:
        data = json.loads(raw, parse_int=numbers.integer, parse_float=numbers.real, parse_constant=numbers.constant)
    except UnicodeDecodeError:
        raise SnapshotError("not UTF-8 JSON", source=label) from None
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(raw.rstrip()) else ""
        raise SnapshotError(f"invalid JSON: {exc.msg}{hint}", source=label, line=exc.lineno) from None
    except (ValueError, RecursionError) as exc:
        raise SnapshotError(f"invalid JSON: {exc}", source=label) from None
    return data, numbers.in_range


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".manifest.json")


def _verify_manifest(path: Path, file_sha256: str, data: dict[str, Any]) -> str | None:
    """The canonical digest the sidecar manifest names, once the file is shown to hold what it
    describes; None without a manifest.

    A file whose bytes are the ones its manifest's ``file_sha256`` names is the file written with
    that manifest, so its canonical digest is the manifest's: the canonical JSON (4 s at 5,000 nodes)
    is computed only for a file that was re-compressed, re-indented or edited since."""
    mpath = manifest_path(path)
    if not mpath.exists():
        return None
    try:
        manifest = json.loads(mpath.read_text())
        expected = manifest["sha256"]
        if not isinstance(expected, str):
            raise TypeError(expected)
    except (OSError, ValueError, KeyError, TypeError):
        raise SnapshotError("manifest is unreadable or has no sha256", source=str(mpath)) from None
    if manifest.get("file_sha256") == file_sha256:
        return expected
    actual = hashlib.sha256(canonical_json(data)).hexdigest()
    if actual != expected:
        raise SnapshotError(
            f"content does not match its manifest (sha256 {actual[:12]}…, manifest says {expected[:12]}…); "
            "the file was modified after it was written",
            source=str(path),
        )
    return expected


def save(snapshot: Snapshot, path: str | Path) -> dict[str, Any]:
    """Write the snapshot (gzip when the name ends in .gz) and its manifest; return the manifest.

    A plain .json file is indented for a person who opens it; a .gz one is compact, because
    indenting makes ``json`` use its Python encoder (10 s instead of 1 s at 3,000 nodes) and
    nobody reads a gzip file in an editor. Level 6 instead of 9 compresses three times faster
    (0.6 s instead of 1.8 s there) for a file 8 % larger."""
    path = Path(path)
    with paused():
        return _saved(snapshot, path)


def _saved(snapshot: Snapshot, path: Path) -> dict[str, Any]:
    packed = path.suffix == ".gz"
    copied = _stored_body(snapshot.__dict__.get(_STORED), packed)
    if copied:
        body, sha256 = copied
    else:
        data = to_dict(snapshot)
        text = json.dumps(data, indent=None if packed else 1, ensure_ascii=False, sort_keys=False).encode() + b"\n"
        body = gzip.compress(text, compresslevel=6, mtime=0) if packed else text
        sha256 = hashlib.sha256(canonical_json(data)).hexdigest()
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(body)
        tmp.replace(path)
    except (OSError, ValueError) as exc:  # a directory of that name, a read-only place, a name too long or with NUL
        with contextlib.suppress(OSError, ValueError):
            tmp.unlink(missing_ok=True)
        problem = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise InputError(f"cannot write the snapshot here: {problem}", source=repr(str(path))) from None
    manifest = {
        "schema": SCHEMA_ID,
        "file": path.name,
        "sha256": sha256,
        "file_sha256": hashlib.sha256(body).hexdigest(),
        "captured_at": snapshot.captured_at,
        "source": _SOURCE_ADAPTER.dump_python(snapshot.source, mode="json"),
        "nodes": len(snapshot.nodes),
        "pods": len(snapshot.pods),
        "tmnb_version": __version__,
    }
    manifest_path(path).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _stored_body(stored: StoredFile | None, packed: bool) -> tuple[bytes, str] | None:
    """The bytes of the file the snapshot was loaded from and its canonical digest, when it is
    compressed as the new file will be and still holds what was verified at load."""
    if stored is None or stored.packed != packed:
        return None
    try:
        body = read_capped(stored.path, limit=MAX_SNAPSHOT_BYTES, what="a snapshot file")
    except InputError:
        return None
    return (body, stored.sha256) if hashlib.sha256(body).hexdigest() == stored.file_sha256 else None
