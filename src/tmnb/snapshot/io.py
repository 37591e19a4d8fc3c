"""Reading and writing snapshot files (JSON, optionally gzip) with validation and checksums.

A snapshot is evidence: loading must say exactly what is wrong (file, JSON path, what was
expected), and writing leaves a sidecar manifest whose sha256 is computed over the
*canonical* JSON, so re-compressing or re-indenting a file does not change its identity.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from tmnb import __version__
from tmnb.errors import SnapshotError
from tmnb.snapshot.model import SCHEMA_ID, Snapshot

_ADAPTER: TypeAdapter[Snapshot] = TypeAdapter(Snapshot)
_GZIP_MAGIC = b"\x1f\x8b"


def to_dict(snapshot: Snapshot) -> dict[str, Any]:
    return _ADAPTER.dump_python(snapshot, mode="json")


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


def from_dict(data: Any, *, source: str = "<snapshot>") -> Snapshot:
    """Validate a decoded document and build the model; the first problem is reported precisely."""
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
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        more = exc.error_count() - 1
        suffix = f" (and {more} more problem{'s' if more > 1 else ''})" if more else ""
        got = first.get("input")
        got_text = "" if isinstance(got, dict | list) else f", got {got!r}"
        raise SnapshotError(
            f"{first['msg']}{got_text}{suffix}", source=source, where=_json_path(tuple(first["loc"]))
        ) from None


def load(path: str | Path) -> Snapshot:
    """Load a ``.json`` or gzip-compressed snapshot, verifying its sidecar manifest when present."""
    path = Path(path)
    label = str(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise SnapshotError(f"cannot read snapshot: {exc.strerror}", source=label) from None
    if raw.startswith(_GZIP_MAGIC):
        try:
            raw = gzip.decompress(raw)
        except (EOFError, OSError, zlib.error) as exc:
            raise SnapshotError(f"gzip data is truncated or corrupt ({exc})", source=label) from None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError:
        raise SnapshotError("not UTF-8 JSON", source=label) from None
    except json.JSONDecodeError as exc:
        hint = " (the file looks truncated)" if exc.pos >= len(raw.rstrip()) else ""
        raise SnapshotError(f"invalid JSON: {exc.msg}{hint}", source=label, line=exc.lineno) from None
    snapshot = from_dict(data, source=label)
    _verify_manifest(path, data)
    return snapshot


def manifest_path(path: Path) -> Path:
    return path.with_name(path.name + ".manifest.json")


def _verify_manifest(path: Path, data: dict[str, Any]) -> None:
    mpath = manifest_path(path)
    if not mpath.exists():
        return
    try:
        expected = json.loads(mpath.read_text())["sha256"]
    except (OSError, ValueError, KeyError, TypeError):
        raise SnapshotError("manifest is unreadable or has no sha256", source=str(mpath)) from None
    actual = hashlib.sha256(canonical_json(data)).hexdigest()
    if actual != expected:
        raise SnapshotError(
            f"content does not match its manifest (sha256 {actual[:12]}…, manifest says {expected[:12]}…); "
            "the file was modified after it was written",
            source=str(path),
        )


def save(snapshot: Snapshot, path: str | Path, *, indent: int | None = 1) -> dict[str, Any]:
    """Write the snapshot (gzip when the name ends in .gz) and its manifest; return the manifest."""
    path = Path(path)
    data = to_dict(snapshot)
    text = json.dumps(data, indent=indent, ensure_ascii=False, sort_keys=False).encode() + b"\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    body = gzip.compress(text, mtime=0) if path.suffix == ".gz" else text
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(body)
    tmp.replace(path)
    manifest = {
        "schema": SCHEMA_ID,
        "file": path.name,
        "sha256": hashlib.sha256(canonical_json(data)).hexdigest(),
        "file_sha256": hashlib.sha256(body).hexdigest(),
        "captured_at": snapshot.captured_at,
        "source": data["source"],
        "nodes": len(snapshot.nodes),
        "pods": len(snapshot.pods),
        "tmnb_version": __version__,
    }
    manifest_path(path).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest
