"""KubeletConfiguration documents: the ``--config`` file, ``--config-dir`` drop-ins and ``/configz``.

Each parses to a ``KubeletConfigDoc`` holding the fields as written (JSON names), the fields the
kubelet would ignore as unknown, and duplicated keys. Values the kubelet's decoder would refuse
(wrong JSON type, bad duration or quantity, missing apiVersion/kind) raise ``ConfigRejected``:
the kubelet does not start with such a file, so there is no "effective" value to report.

Drop-ins are merged by the kubelet as JSON merge patches (RFC 7386) in ``filepath.WalkDir`` order;
``dropin_order`` and ``merge_patch`` reproduce both.
"""

from __future__ import annotations

import errno
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Literal

from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.documents import load_json, load_yaml
from tmnb.parse.duration import parse_go_duration
from tmnb.parse.files import TEXT_LIMIT, decode_utf8, read_capped, read_text
from tmnb.parse.kubelet_fields import API_VERSION, DURATION_FIELDS, FIELD_SINCE, FIELD_TYPES, KIND
from tmnb.parse.quantity import Quantity

DROPIN_EXTENSION = ".conf"

LayerKind = Literal["file", "dropin", "configz"]


@dataclass(frozen=True)
class KubeletConfigDoc:
    """One configuration layer as written. ``fields`` excludes apiVersion/kind; for drop-ins a
    ``None`` value is a merge-patch deletion."""

    kind: LayerKind
    source: str
    fields: dict[str, Any]
    unknown_fields: tuple[str, ...] = ()
    duplicate_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropinDir:
    """A ``--config-dir`` as the kubelet reads it: the .conf files in merge order, and the rest."""

    root: str
    docs: tuple[KubeletConfigDoc, ...]
    skipped: tuple[str, ...]


def parse_kubelet_config(text: str, *, source: str) -> KubeletConfigDoc:
    """The ``--config`` file (YAML or JSON)."""
    body, duplicates = _load_mapping(text, source=source)
    api_version, kind = body.pop("apiVersion", None), body.pop("kind", None)
    if api_version is None or kind is None:
        raise ConfigRejected(
            f"the kubelet refuses a config file without apiVersion/kind; expected apiVersion: {API_VERSION} "
            f"and kind: {KIND}",
            source=source,
        )
    if (api_version, kind) != (API_VERSION, KIND):
        raise ConfigRejected(
            f"the kubelet refuses apiVersion {api_version!r}, kind {kind!r}; expected {API_VERSION}, {KIND}",
            source=source,
        )
    return _doc("file", source, body, duplicates)


def read_config_file(path: Path, *, source: str) -> KubeletConfigDoc:
    """The ``--config`` file as ``loadConfigFile`` (cmd/kubelet/app/server.go) reads it. A file the
    kubelet cannot read or decode stops it at start, so those failures raise ``ConfigRejected`` with
    what its command prints (``failed to load kubelet config file, path: ...`` around the loader's
    error). Where the loader's words come from Go's YAML library, tmnb's description stands in."""
    unreadable = _unreadable(path, source)
    if unreadable:
        raise _load_failure(source, f'failed to read kubelet config file "{source}", error: {unreadable}')
    data = read_capped(path, limit=TEXT_LIMIT, what="a KubeletConfiguration file", source=source)
    if not data:
        raise _load_failure(source, f'kubelet config file "{source}" was empty')
    try:
        return parse_kubelet_config(decode_utf8(data, what="a KubeletConfiguration file", source=source), source=source)
    except ConfigRejected:
        raise
    except InputError as err:
        line = f" (line {err.line})" if err.line else ""
        raise _load_failure(source, f"failed to decode: {err.message}{line}") from None


def _unreadable(path: Path, source: str) -> str | None:
    """``os.ReadFile``'s error for a path that cannot be read as a file, in Go's words."""
    try:
        if path.is_dir():
            return f"read {source}: is a directory"
        path.stat()
    except FileNotFoundError:
        return f"open {source}: no such file or directory"
    except PermissionError:
        return f"open {source}: permission denied"
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f"open {source}: too many levels of symbolic links"
        raise
    return None


def _load_failure(source: str, detail: str) -> ConfigRejected:
    return ConfigRejected(
        f"failed to load kubelet config file, path: {source}, error: failed to load Kubelet config file {source}, "
        f"error {detail}"
    )


def parse_kubelet_dropin(text: str, *, source: str) -> KubeletConfigDoc:
    """One ``--config-dir`` drop-in; the kubelet requires apiVersion/kind in every one."""
    body, duplicates = _load_mapping(text, source=source)
    api_version, kind = body.pop("apiVersion", None), body.pop("kind", None)
    if not api_version and not kind:
        raise ConfigRejected(f"failed to load kubelet dropin file, path: {source}, no apiVersion/kind", source=source)
    if (api_version, kind) != (API_VERSION, KIND):
        raise ConfigRejected(
            f"failed to load kubelet dropin file, path: {source}, unknown apiVersion/kind: {api_version}, Kind={kind}",
            source=source,
        )
    return _doc("dropin", source, body, duplicates)


def parse_configz(text: str | bytes, *, source: str = "/configz") -> KubeletConfigDoc:
    """``GET /api/v1/nodes/<node>/proxy/configz``: ``{"kubeletconfig": {...}}`` without apiVersion/kind."""
    doc = load_json(text, source=source, expected='a /configz object {"kubeletconfig": {...}}')
    body = doc.get("kubeletconfig") if isinstance(doc, dict) else None
    if not isinstance(body, dict):
        raise InputError('expected a JSON object with a "kubeletconfig" object (the /configz response)', source=source)
    return _doc("configz", source, dict(body), [])


def _load_mapping(text: str, *, source: str) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    data, duplicates = load_yaml(text, source=source, expected="a KubeletConfiguration YAML document")
    if not isinstance(data, dict):
        raise InputError(
            f"expected a KubeletConfiguration mapping, got {type(data).__name__}; "
            "the file looks truncated or malformed",
            source=source,
        )
    return data, duplicates


def _doc(kind: LayerKind, source: str, body: dict[str, Any], duplicates: list[tuple[str, int]]) -> KubeletConfigDoc:
    for name, value in body.items():
        if not isinstance(name, str):
            raise InputError(f"field names must be strings, got {name!r}", source=source)
        check_field_value(name, value, source=source)
    return KubeletConfigDoc(
        kind=kind,
        source=source,
        fields=body,
        unknown_fields=tuple(name for name in body if name not in FIELD_SINCE),
        duplicate_fields=tuple(f"{name} (line {line})" for name, line in duplicates),
    )


# ---------------------------------------------------------------------------------------------
# Value types: what the kubelet's JSON decoder accepts for the fields tmnb reads


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def _reject(field: str, value: Any, expected: str, *, source: str, where: str | None = None) -> ConfigRejected:
    return ConfigRejected(
        f"the kubelet cannot decode a JSON {_json_type(value)} ({value!r}) where KubeletConfiguration.{field} "
        f"needs {expected}",
        source=source,
        where=where or field,
    )


def check_field_value(field: str, value: Any, *, source: str) -> None:
    """Raise ``ConfigRejected`` if the kubelet could not decode ``value`` into ``field``."""
    gotype = FIELD_TYPES.get(field) or ("duration" if field in DURATION_FIELDS else None)
    if value is None or gotype is None:
        return
    if gotype in ("string", "duration"):
        if not isinstance(value, str):
            raise _reject(field, value, "a string", source=source)
        if gotype == "duration":
            try:
                parse_go_duration(value, source=source, where=field)
            except InputError as err:
                raise ConfigRejected(err.message, source=source, where=field) from None
    elif gotype == "bool":
        if not isinstance(value, bool):
            raise _reject(field, value, "true or false", source=source)
    elif gotype in ("int32", "int64"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise _reject(field, value, "an integer", source=source)
        bits = 31 if gotype == "int32" else 63
        if not -(2**bits) <= value < 2**bits:
            # encoding/json: "cannot unmarshal number ... into Go struct field ... of type int32"
            shown = value if abs(value) < 10**30 else f"a {len(str(abs(value)))}-digit number"
            raise ConfigRejected(
                f"the kubelet cannot decode {shown} into KubeletConfiguration.{field}, a {gotype} "
                f"(from {-(2**bits)} to {2**bits - 1})",
                source=source,
                where=field,
            )
    elif gotype == "[]string":
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _reject(field, value, "a list of strings", source=source)
    elif gotype.startswith("map["):
        want_bool = gotype == "map[string]bool"
        if not isinstance(value, dict):
            raise _reject(field, value, "a mapping", source=source)
        for key, item in value.items():
            ok = item is None or isinstance(item, bool if want_bool else str)  # null: merge-patch delete
            if not ok:
                expected = "true or false" if want_bool else 'a string (quote it: "true", "8")'
                raise _reject(field, item, expected, source=source, where=f"{field}.{key}")
    elif gotype == "[]MemoryReservation":
        _check_reserved_memory(value, source=source)


def _check_reserved_memory(value: Any, *, source: str) -> None:
    if not isinstance(value, list):
        raise _reject("reservedMemory", value, "a list of {numaNode, limits}", source=source)
    for i, item in enumerate(value):
        where = f"reservedMemory[{i}]"
        if not isinstance(item, dict):
            raise _reject("reservedMemory", item, "{numaNode: <int>, limits: {...}}", source=source, where=where)
        node = item.get("numaNode")
        if isinstance(node, bool) or not isinstance(node, int):
            raise _reject("reservedMemory", node, "an integer numaNode", source=source, where=f"{where}.numaNode")
        limits = item.get("limits")
        if not isinstance(limits, dict):
            raise _reject("reservedMemory", limits, "a limits mapping", source=source, where=f"{where}.limits")
        for name, quantity in limits.items():
            try:
                Quantity.parse(quantity, source=source, where=f"{where}.limits.{name}")
            except InputError as err:
                raise ConfigRejected(err.message, source=source, where=err.where) from None


# ---------------------------------------------------------------------------------------------
# Drop-in directory: order and merge


def dropin_order(paths: Iterable[str], *, root: str) -> tuple[list[str], list[str]]:
    """Split files under ``root`` into (.conf files in the kubelet's merge order, skipped files).

    The kubelet walks the directory with ``filepath.WalkDir``: entries sorted by name at each level,
    subdirectories entered where they sort. That is lexical order of the path *components*, which
    differs from sorting whole path strings ("a/x.conf" comes before "a-b.conf").
    """
    base = PurePosixPath(root)
    keyed = []
    for path in paths:
        try:
            rel = PurePosixPath(path).relative_to(base)
        except ValueError:
            raise InputError(f"{path} is not under the drop-in directory", source=root) from None
        keyed.append((rel.parts, path))
    ordered = [path for _, path in sorted(keyed)]
    return (
        [p for p in ordered if p.endswith(DROPIN_EXTENSION)],
        [p for p in ordered if not p.endswith(DROPIN_EXTENSION)],
    )


def read_dropin_dir(root: Path) -> DropinDir:
    """Read a ``--config-dir`` (live or from a bundle) and parse every .conf file in merge order."""
    root = Path(root)
    if not root.is_dir():
        raise InputError("the --config-dir is not a directory", source=str(root))
    # filepath.WalkDir (mergeKubeletConfigurations in cmd/kubelet/app/server.go) enters directories
    # and reads every other entry ending in .conf: a dangling or looping symlink fails the kubelet.
    files = [p.as_posix() for p in root.rglob("*") if p.is_symlink() or not p.is_dir()]
    ordered, skipped = dropin_order(files, root=root.as_posix())
    docs = tuple(
        parse_kubelet_dropin(read_text(p, what="a KubeletConfiguration drop-in", source=p), source=p) for p in ordered
    )
    return DropinDir(root=str(root), docs=docs, skipped=tuple(skipped))


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch: objects merge per key, ``null`` deletes, anything else replaces."""
    if not isinstance(patch, Mapping):
        return patch
    result = dict(target) if isinstance(target, Mapping) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result
