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
from dataclasses import dataclass, replace
from typing import Any

from tmnb.parse.duration import format_go_duration, parse_go_duration
from tmnb.parse.kubelet_config import DropinDir, KubeletConfigDoc, merge_patch
from tmnb.parse.kubelet_fields import DURATION_FIELDS, FIELD_TYPES
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


def same_value(a: Any, b: Any) -> bool:
    """Equality where an omitted field equals an empty one (/configz drops empty maps and strings)."""
    empty = (None, "", {}, [])
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
    for doc in docs:
        _apply_dropin(fields, doc, version)
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


def _apply_dropin(fields: dict[str, Setting], doc: KubeletConfigDoc, version: KubeVersion | None) -> None:
    defaults = defaults_for(version)
    for name, patch in doc.fields.items():
        previous = fields.get(name)
        if patch is None or is_zero_default(name, patch):
            if previous is None:
                continue
            history = (*previous.overridden, previous.as_layer(), Layer("dropin", patch, doc.source))
            if name in defaults:  # the merged JSON is defaulted again
                fields[name] = Setting(defaults[name], "default", None, history)
            else:
                fields[name] = Setting(None, "dropin", doc.source, history[:-1])
            continue
        base = previous.value if previous is not None else None
        _set(fields, name, normalize(name, merge_patch(base, patch)), "dropin", doc.source)


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


def without_configz(settings: KubeletSettings) -> KubeletSettings:
    """The on-disk view (what the kubelet will run after a restart)."""
    if not settings.from_configz:
        return settings
    fields = {}
    for name, setting in settings.fields.items():
        if setting.overridden:
            last = setting.overridden[-1]
            fields[name] = Setting(last.value, last.source, last.detail, setting.overridden[:-1])
    return replace(settings, fields=fields, drift=(), from_configz=False)
