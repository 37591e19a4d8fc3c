"""Effective kubelet settings with per-field provenance.

Layers, lowest first, as ``NewKubeletCommand`` applies them: defaults → the ``--config`` file →
``--config-dir`` drop-ins (JSON merge patch, WalkDir order) → command-line flags (``featureGates``
merged per key; every other flag replaces the field, maps included). When /configz is available it
is the truth: each field then reads source "configz", keeps the layered history in ``overridden``,
and a difference from the layered result is recorded as ``Drift`` (typically a file edited without
restarting the kubelet).

Values are normalized the way the kubelet holds them, so layers compare by value: durations in Go
form ("1m0s") and reservedMemory quantities canonical ("1Gi").
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.parse.duration import format_go_duration, parse_go_duration
from tmnb.parse.kubelet_config import DropinDir, KubeletConfigDoc, known_name, merge_patch
from tmnb.parse.kubelet_fields import DURATION_FIELDS, FIELD_SINCE, FIELD_TYPES
from tmnb.parse.kubelet_flags import KubeletFlags
from tmnb.parse.quantity import Quantity
from tmnb.settings.defaults import DEFAULT_EVICTION_HARD, RELIABLE_DEFAULTS, defaults_for, is_zero_default
from tmnb.snapshot.model import Layer, Setting, SettingSource
from tmnb.versions import KubeVersion


@dataclass(frozen=True)
class Drift:
    """/configz disagrees with what the files and flags on disk configure."""

    field: str
    configured: Any
    configured_by: Layer
    running: Any


@dataclass(frozen=True)
class KubeletSettings:
    """Every known field with its provenance, plus what the layers said about themselves (drop-in
    files skipped, unknown or duplicated keys) for validation to report."""

    fields: dict[str, Setting]
    config_file: str | None = None
    config_dir: str | None = None
    dropins: tuple[str, ...] = ()
    skipped_dropin_files: tuple[str, ...] = ()
    #: why the kubelet reads no drop-in from ``config_dir`` (a symlink, a file)
    dropin_dir_unread: str | None = None
    unknown_fields: tuple[tuple[str, str], ...] = ()
    duplicate_fields: tuple[tuple[str, str], ...] = ()
    flags: KubeletFlags | None = None
    drift: tuple[Drift, ...] = ()
    from_configz: bool = False

    def setting(self, name: str) -> Setting | None:
        return self.fields.get(name)

    def value(self, name: str, default: Any = None) -> Any:
        found = self.fields.get(name)
        return default if found is None or found.value is None else found.value


def normalize(field: str, value: Any) -> Any:
    """The value as the kubelet holds it (durations in Go form, reservedMemory canonical)."""
    if value is None:
        return None
    if field in DURATION_FIELDS and isinstance(value, str):
        return format_go_duration(parse_go_duration(value))
    if field == "reservedMemory" and isinstance(value, list):
        return [
            {"numaNode": item["numaNode"], "limits": {k: str(Quantity.parse(q)) for k, q in item["limits"].items()}}
            for item in value
        ]
    return copy.deepcopy(value)


def same_value(a: object, b: object) -> bool:
    """Equality where an omitted field equals an empty one (/configz drops empty maps and strings)."""
    empty: tuple[object, ...] = (None, "", {}, [])
    if a in empty and b in empty:
        return True
    return a == b


def effective_settings(
    *,
    file: KubeletConfigDoc | None = None,
    dropins: DropinDir | Sequence[KubeletConfigDoc] = (),
    flags: KubeletFlags | None = None,
    configz: KubeletConfigDoc | None = None,
    version: KubeVersion | None = None,
) -> KubeletSettings:
    """Combine whatever layers were collected; any may be missing. With only /configz there is no
    on-disk view: no default layer and no drift."""
    docs = dropins.docs if isinstance(dropins, DropinDir) else tuple(dropins)
    on_disk = file is not None or bool(docs) or flags is not None
    fields: dict[str, Setting] = {}
    if on_disk or configz is None:
        fields = {name: Setting(value, "default") for name, value in defaults_for(version).items()}

    if file is not None:
        _apply_file(fields, file)
    _apply_dropins(fields, docs)
    if flags is not None:
        for name, value in flags.config_fields.items():
            merge = name == "featureGates"
            _set(fields, name, normalize(name, value), "flag", flags.field_flags[name], merge=merge)

    drift: tuple[Drift, ...] = ()
    if configz is not None:
        fields, drift = _apply_configz(fields, configz)

    layer_docs = [d for d in (file, *docs) if d is not None]
    return KubeletSettings(
        fields=dict(sorted(fields.items())),
        config_file=file.source if file else (flags.config_file if flags else None),
        config_dir=dropins.root if isinstance(dropins, DropinDir) else (flags.config_dir if flags else None),
        dropins=tuple(d.source for d in docs),
        skipped_dropin_files=dropins.skipped if isinstance(dropins, DropinDir) else (),
        dropin_dir_unread=dropins.unread if isinstance(dropins, DropinDir) else None,
        unknown_fields=tuple((d.source, name) for d in layer_docs for name in d.unknown_fields),
        duplicate_fields=tuple((d.source, name) for d in layer_docs for name in d.duplicate_fields),
        flags=flags,
        drift=drift,
        from_configz=configz is not None,
    )


def _set(
    fields: dict[str, Setting], name: str, value: Any, source: SettingSource, detail: str | None, *, merge: bool = False
) -> None:
    previous = fields.get(name)
    history = () if previous is None else (*previous.overridden, previous.as_layer())
    if merge and previous is not None and isinstance(previous.value, dict) and isinstance(value, dict):
        value = {**previous.value, **value}
    fields[name] = Setting(value, source, detail, history)


def _apply_file(fields: dict[str, Setting], doc: KubeletConfigDoc) -> None:
    for name, raw in doc.fields.items():
        if raw is None or is_zero_default(name, raw):
            continue  # SetDefaults fills nulls and zero values
        value = normalize(name, raw)
        if name == "evictionHard" and doc.fields.get("mergeDefaultEvictionSettings") is True:
            value = {**DEFAULT_EVICTION_HARD, **value}
        _set(fields, name, value, "file", doc.source)


#: Internal (Go) field names that are not the JSON name with its first letter capitalised.
_GO_PREFIXES = (
    ("cpu", "CPU"),
    ("http", "HTTP"),
    ("tls", "TLS"),
    ("oom", "OOM"),
    ("qos", "QOS"),
    ("iptables", "IPTables"),
)
_GO_NAMES = {"resolvConf": "ResolverConfig"}


def go_field_name(name: str) -> str:
    """The field's name in the kubelet's internal KubeletConfiguration struct (no json tags), the
    key ``json.Marshal`` gives it in the document drop-ins are merged into."""
    if name in _GO_NAMES:
        return _GO_NAMES[name]
    for prefix, go in _GO_PREFIXES:
        if name.startswith(prefix) and name[len(prefix) : len(prefix) + 1].isupper():
            return go + name[len(prefix) :]
    return name[:1].upper() + name[1:]


def _onto(current: Any, value: Any) -> Any:
    """``json.Unmarshal`` of ``value`` into a field already holding ``current``: a map or struct
    keeps what the JSON does not mention, anything else is replaced."""
    if isinstance(current, dict) and isinstance(value, dict):
        out = dict(current)
        for key, item in value.items():
            out[key] = _onto(out.get(key), item)
        return out
    return copy.deepcopy(value)


def _apply_dropins(fields: dict[str, Setting], docs: Sequence[KubeletConfigDoc]) -> None:
    """The drop-ins as ``mergeKubeletConfigurations`` (cmd/kubelet/app/server.go) applies them.

    The configuration loaded from the ``--config`` file (defaults filled) is marshalled to JSON under
    its internal Go field names (``CPUManagerPolicy``); each drop-in, keys as written, is merged
    into that document as an RFC 7386 merge patch; the result is unmarshalled back into the same
    struct, keys in sorted order. What follows, and tmnb follows:

    * a drop-in's ``null`` removes only what an earlier drop-in set: the file's value stays (it is
      still in the struct), and nothing is defaulted again: a zero value (``""``, ``0``, ``{}``) in
      a drop-in is the value, not "the default";
    * maps keep the file's keys and take the drop-in's (the struct's map is filled, not replaced);
      lists replace;
    * keys match the struct's fields case-insensitively, so ``TopologyManagerPolicy`` in a drop-in
      sets the policy, where the same key in the file is an ignored unknown field; a spelling that
      sorts before the Go field name is overwritten by the file's value when that key follows it;
    * a key that matches no field is dropped without a word (no lenient-decoding log line)."""
    merged: dict[str, Any] = {}
    origin: dict[str, str] = {}
    for doc in docs:
        for key, patch in doc.fields.items():
            if patch is None:
                merged.pop(key, None)
                origin.pop(key, None)
            else:
                merged[key] = merge_patch(merged.get(key), patch)
                origin[key] = doc.source
    by_field: dict[str, list[str]] = {}
    for key in merged:
        by_field.setdefault(known_name(key, "dropin") or key, []).append(key)
    for name, keys in sorted(by_field.items()):
        previous = fields.get(name)
        base = previous.value if previous is not None else None
        value, last = base, None
        base_key = go_field_name(name) if name in FIELD_SINCE else None
        for key in sorted({*keys, *([base_key] if base_key else [])}):  # encoding/json assigns in key order
            if key in merged:
                value, last = _onto(value, merged[key]), key
            elif base is not None:
                value, last = _onto(value, base), None
        if last is None and not isinstance(base, dict):
            continue  # every spelling sorted before the Go name: the file's value was assigned last
        _set(fields, name, normalize(name, value), "dropin", origin[last] if last else origin[keys[-1]])


def _apply_configz(fields: dict[str, Setting], doc: KubeletConfigDoc) -> tuple[dict[str, Setting], tuple[Drift, ...]]:
    result: dict[str, Setting] = {}
    drift: list[Drift] = []
    for name in sorted(set(fields) | set(doc.fields)):
        running = normalize(name, doc.fields.get(name))
        layered = fields.get(name)
        if layered is None:
            result[name] = Setting(running, "configz")
            continue
        result[name] = Setting(running, "configz", None, (*layered.overridden, layered.as_layer()))
        # Only modelled fields: for the rest tmnb does not know the defaults that fill the gaps. A
        # default missing from /configz is a field the running kubelet predates, not drift.
        trusted = name in FIELD_TYPES and (
            layered.source != "default" or (name in RELIABLE_DEFAULTS and name in doc.fields)
        )
        if trusted and not same_value(layered.value, running):
            drift.append(Drift(name, layered.value, layered.as_layer(), running))
    return result, tuple(drift)


def snapshot_settings(
    fields: dict[str, Setting], *, config_file: str | None = None, config_dir: str | None = None
) -> KubeletSettings:
    """``KubeletSettings`` for a snapshot node's settings. A snapshot keeps every field its files
    set, known to the kubelet or not, with the file as provenance: the unknown ones (and which
    files are drop-ins) are read back from there, so validation still reports them."""
    dropins: dict[str, None] = {}
    unknown: list[tuple[str, str]] = []
    for name, setting in fields.items():
        layers = setting.overridden if setting.source == "configz" else (*setting.overridden, setting.as_layer())
        for layer in layers:
            if layer.source == "dropin" and layer.detail:
                dropins[layer.detail] = None
            if name not in FIELD_SINCE and layer.source in ("file", "dropin") and layer.detail:
                unknown.append((layer.detail, name))
    return KubeletSettings(
        fields=fields,
        config_file=config_file,
        config_dir=config_dir,
        dropins=tuple(dropins),
        unknown_fields=tuple(dict.fromkeys(unknown)),
    )
