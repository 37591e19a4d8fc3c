"""KubeletConfiguration documents: the ``--config`` file, ``--config-dir`` drop-ins and ``/configz``.

Each parses to a ``KubeletConfigDoc`` holding the fields as written (JSON names), the fields the
kubelet would ignore as unknown, and duplicated keys. Values the kubelet's decoder would refuse
(wrong JSON type, bad duration or quantity, missing apiVersion/kind) raise ``ConfigRejected``:
the kubelet does not start with such a file, so there is no "effective" value to report.

Drop-ins are merged by the kubelet as JSON merge patches (RFC 7386) in ``filepath.WalkDir`` order;
``read_dropin_dir`` and ``merge_patch`` reproduce both.
"""

from __future__ import annotations

import os
import posixpath
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.documents import go_duplicate_keys, load_json, load_yaml
from tmnb.parse.duration import parse_go_duration
from tmnb.parse.files import TEXT_LIMIT, decode_utf8, go_read_error, read_capped
from tmnb.parse.gojson import fold
from tmnb.parse.kubelet_fields import API_VERSION, DURATION_FIELDS, FIELD_SINCE, FIELD_TYPES, KIND
from tmnb.parse.quantity import Quantity

DROPIN_EXTENSION = ".conf"

LayerKind = Literal["file", "dropin", "configz"]


@dataclass(frozen=True)
class KubeletConfigDoc:
    """One configuration layer as written. ``fields`` excludes apiVersion/kind; for drop-ins a
    ``None`` value is a merge-patch deletion, and keys stay as spelled (``known_name`` says which
    field a drop-in key fills)."""

    kind: LayerKind
    source: str
    fields: dict[str, Any]
    unknown_fields: tuple[str, ...] = ()
    duplicate_fields: tuple[str, ...] = ()


@dataclass(frozen=True)
class DropinDir:
    """A ``--config-dir`` as the kubelet reads it: the .conf files in merge order, and the rest.
    ``unread`` says why the kubelet reads nothing there although the directory has files."""

    root: str
    docs: tuple[KubeletConfigDoc, ...]
    skipped: tuple[str, ...]
    unread: str | None = None


_KNOWN_BY_FOLD = {fold(name): name for name in FIELD_SINCE}


def known_name(key: str, kind: LayerKind) -> str | None:
    """The KubeletConfiguration field a key fills, None when the kubelet ignores it.

    The ``--config`` file is decoded case-sensitively: ``TopologyManagerPolicy`` is an unknown field.
    A drop-in's keys end in ``json.Unmarshal`` of the merged document into the kubelet's internal
    configuration struct (``mergeKubeletConfigurations``, cmd/kubelet/app/server.go), whose Go
    field names match JSON keys case-insensitively: there ``TopologyManagerPolicy`` and
    ``topologymanagerpolicy`` both set the policy. tmnb follows the kubelet in both."""
    if key in FIELD_SINCE:
        return key
    return _KNOWN_BY_FOLD.get(fold(key)) if kind == "dropin" else None


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
    unreadable = go_read_error(path, source)
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


def _load_failure(source: str, detail: str) -> ConfigRejected:
    return ConfigRejected(
        f"failed to load kubelet config file, path: {source}, error: failed to load Kubelet config file {source}, "
        f"error {detail}"
    )


def _quote(text: str) -> str:
    """Go's ``%q`` for the plain paths and keys these messages hold."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _dropin_failure(source: str, detail: str) -> ConfigRejected:
    # mergeKubeletConfigurations wraps what loadDropinConfigFileIntoJSON returns for one file
    return ConfigRejected(f"failed to load kubelet dropin file, path: {source}, error: {detail}")


def _load_dropin(text: str, *, source: str) -> tuple[dict[str, Any], list[tuple[str, int]]]:
    """A drop-in as ``fsLoader.LoadIntoJSON`` decodes it (pkg/kubelet/kubeletconfig/configfiles):
    ``DecodeKubeletConfigurationIntoJSON`` (pkg/kubelet/kubeletconfig/util/codec) runs the *strict*
    decoder into an ``unstructured.Unstructured``, with no lenient fallback.

    Decoding into a plain map cannot tell an unknown field (the map takes any key), so a misspelled
    field passes here and is dropped later, without a log line, when the merged document is
    unmarshalled into the configuration struct. What strictness does catch is a duplicated key: that
    is an error, and the kubelet does not start. The kind must be set (the serializer's missing-kind
    check); Go's words are reproduced where they are the serializer's own, and where they come from
    Go's YAML library tmnb's description stands in."""
    if text == "":
        absolute = source if source.startswith("/") else "/" + source  # loader.kubeletFile is absolute
        raise _dropin_failure(source, f"kubelet config file {_quote(absolute)} was empty")
    data: Any = None
    if text.strip():
        try:
            data, duplicates = load_yaml(text, source=source, expected="a KubeletConfiguration YAML document")
        except InputError as err:
            line = f" (line {err.line})" if err.line else ""
            raise _dropin_failure(source, f"{err.message}{line}") from None
    else:
        duplicates = []
    if data is None:
        data = {}  # YAML with nothing but comments and blanks converts to JSON null: no kind
    if not isinstance(data, dict):
        raise _dropin_failure(
            source,
            f"couldn't get version/kind; json parse error: the document is a {type(data).__name__}, "
            "not a mapping of fields",
        )
    kind = data.get("kind")
    if kind is None or kind == "":
        # runtime.NewMissingKindErr quotes the file as it was read
        raise _dropin_failure(source, f"Object 'Kind' is missing in '{text}'")
    if not isinstance(kind, str):
        raise _dropin_failure(source, f"couldn't get version/kind; json parse error: kind {kind!r} is not a string")
    strict = go_duplicate_keys(text)
    if strict:
        raise _dropin_failure(source, "strict decoding error: " + ", ".join(strict))
    return data, duplicates


def parse_kubelet_dropin(text: str, *, source: str) -> KubeletConfigDoc:
    """One ``--config-dir`` drop-in; the kubelet requires a kind in every one."""
    body, duplicates = _load_dropin(text, source=source)
    api_version, kind = body.pop("apiVersion", None), body.pop("kind", None)
    if (api_version, kind) != (API_VERSION, KIND):
        raise _dropin_failure(source, f"unknown apiVersion/kind: {api_version}, Kind={kind}")
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
        check_field_value(known_name(name, kind) or name, value, source=source)
    return KubeletConfigDoc(
        kind=kind,
        source=source,
        fields=body,
        unknown_fields=tuple(name for name in body if known_name(name, kind) is None),
        duplicate_fields=tuple(f"{name} (line {line})" for name, line in duplicates),
    )


# ---------------------------------------------------------------------------------------------
# Value types: what the kubelet's JSON decoder accepts for the fields tmnb reads


def _json_type(value: object) -> str:
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


def _reject(field: str, value: object, expected: str, *, source: str, where: str | None = None) -> ConfigRejected:
    return ConfigRejected(
        f"the kubelet cannot decode a JSON {_json_type(value)} ({value!r}) where KubeletConfiguration.{field} "
        f"needs {expected}",
        source=source,
        where=where or field,
    )


def check_field_value(field: str, value: object, *, source: str) -> None:
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


def _check_reserved_memory(value: object, *, source: str) -> None:
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


def read_dropin_dir(root: Path, *, shown: str | None = None) -> DropinDir:
    """Read a ``--config-dir`` (live or from a bundle) as ``mergeKubeletConfigurations``
    (cmd/kubelet/app/server.go) walks it; ``shown`` is the flag's value, naming paths as on the node.

    Anything that stops the walk stops the kubelet: the error is ``ConfigRejected`` in the words the
    kubelet prints (``failed to merge kubelet configs: failed to walk through kubelet dropin
    directory ...``). ``filepath.WalkDir`` follows no symlink, not even the directory given: a
    ``--config-dir`` that is a symlink (without a trailing slash) is a single entry whose name does
    not end in .conf, so the kubelet reads no drop-in at all and says nothing. tmnb follows it."""
    root = Path(root)
    shown = shown or str(root)

    def refused(detail: str) -> ConfigRejected:
        return ConfigRejected(
            f"failed to merge kubelet configs: failed to walk through kubelet dropin directory {_quote(shown)}: "
            f"{detail}"
        )

    try:
        info = os.stat(root) if shown.endswith("/") else os.lstat(root)  # a trailing slash follows a symlink
    except FileNotFoundError:
        raise refused(f"lstat {shown}: no such file or directory") from None
    except OSError as err:
        raise refused(f"lstat {shown}: {err.strerror}") from None
    files: list[tuple[Path, str]] = []
    skipped: list[str] = []
    unread = None
    if stat.S_ISDIR(info.st_mode):
        _walk(root, shown, files, skipped, refused)
    elif posixpath.basename(shown.rstrip("/")).endswith(DROPIN_EXTENSION):
        files.append((root, shown))  # WalkDir hands the callback the root itself: it is loaded as a drop-in
    elif os.path.isdir(root):
        unread = (
            f"--config-dir {shown} is a symlink: the kubelet's directory walk does not follow it, so no drop-in in "
            f"it is read (give the directory itself, or end the flag's value with a slash)"
        )
    else:
        unread = f"--config-dir {shown} is a file, not a directory: the kubelet reads no drop-in from it"
    loaded = []
    for path, name in files:
        absolute = name if name.startswith("/") else "/" + name  # the kubelet runs from /
        unreadable = go_read_error(path, absolute)
        if unreadable:
            raise refused(
                f"failed to load kubelet dropin file, path: {name}, error: failed to read drop-in kubelet config "
                f"file {_quote(absolute)}, error: {unreadable}"
            )
        data = read_capped(path, limit=TEXT_LIMIT, what="a KubeletConfiguration drop-in", source=name)
        try:
            text = decode_utf8(data, what="a KubeletConfiguration drop-in", source=name)
            body, duplicates = _load_dropin(text, source=name)
        except ConfigRejected as err:
            raise refused(err.message) from None
        except InputError as err:
            raise refused(f"failed to load kubelet dropin file, path: {name}, error: {err.message}") from None
        loaded.append((name, body, duplicates))
    docs = []
    for name, body, duplicates in loaded:
        api_version, kind = body.pop("apiVersion", None), body.pop("kind", None)
        if (api_version, kind) != (API_VERSION, KIND):
            raise refused(f"failed to load kubelet dropin file, path: {name}, error: unknown apiVersion/kind: "
                          f"{api_version}, Kind={kind}")  # fmt: skip
        try:
            docs.append(_doc("dropin", name, body, duplicates))
        except InputError as err:
            # Values are decoded once every file is merged: json.Unmarshal of the merged document
            raise ConfigRejected(
                "failed to merge kubelet configs: failed to unmarshal merged JSON into kubelet configuration: "
                f"{err.message} (set in {name})"
            ) from None
    return DropinDir(root=shown, docs=tuple(docs), skipped=tuple(skipped), unread=unread)


def _walk(
    path: Path,
    shown: str,
    files: list[tuple[Path, str]],
    skipped: list[str],
    refused: Callable[[str], ConfigRejected],
) -> None:
    """``filepath.WalkDir`` below the root: entries sorted by name, real directories entered where
    they sort, every other entry (a symlink to a directory included) read if it ends in .conf."""
    try:
        entries = sorted(os.scandir(path), key=lambda e: e.name)
    except PermissionError:
        raise refused(f"open {shown}: permission denied") from None
    for entry in entries:
        name = posixpath.normpath(posixpath.join(shown, entry.name))  # filepath.Join cleans the path
        if entry.is_dir(follow_symlinks=False):
            _walk(Path(entry.path), name, files, skipped, refused)
        elif entry.name.endswith(DROPIN_EXTENSION):
            files.append((Path(entry.path), name))
        else:
            skipped.append(name)


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
