"""Version-aware validation of kubelet settings: the entry points, and where values come from.

``validate_settings`` combines the provenance checks here (unknown fields, flags that shadow the
configuration or that the kubelet version does not know, /configz drift, drop-in files the kubelet
skips) with the kubelet's own start-up checks (``kubelet.startup.checks``: the model's start is their only
implementation, so every refusal is in the kubelet's words) and tmnb's advice on each manager in
``managers``. Whether the kubelet restores its state files is the model's start (``tmnb.kubelet.checkpoints``).
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Collection
from typing import Any

from tmnb.cpuset import CPUSet
from tmnb.kubelet import gostr
from tmnb.kubelet.node import Machine
from tmnb.kubelet.profiles import KubeletProfile, resolve
from tmnb.kubelet.startup.checks import Start
from tmnb.kubelet.startup.types import Hardware
from tmnb.parse.kubelet_fields import FIELD_SINCE
from tmnb.parse.kubelet_flags import CONFIG_FLAGS
from tmnb.settings.effective import KubeletSettings, same_value
from tmnb.settings.findings import Finding, Findings, show
from tmnb.settings.managers.cpu import check_cpu
from tmnb.settings.managers.memory import check_memory
from tmnb.settings.managers.shared import kubelet_refusals
from tmnb.settings.managers.topology import check_topology
from tmnb.snapshot.model import Layer, Setting
from tmnb.versions import KubeVersion

__all__ = ["Finding", "validate_settings"]

_DEPRECATED_FLAG = (
    "This parameter should be set via the config file specified by the Kubelet's --config flag. "
    "See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information."
)


def validate_settings(
    settings: KubeletSettings,
    *,
    version: KubeVersion | None,
    numa_nodes: Collection[int] | None = None,
    sockets: int | None = None,
    memory_capacity: int | None = None,
    online_cpus: CPUSet | None = None,
    machine: Machine | None = None,
) -> list[Finding]:
    """Check effective settings against a kubelet ``version``: every finding, where the kubelet would
    stop at the first. The kubelet's own refusals come from its start-up steps
    (``kubelet.startup.checks.STEPS``), each run on its own. Hardware facts are optional, and a ``machine``
    gives them all; checks that need a missing one are skipped (NUMA nodes, sockets, memory for a %
    eviction threshold, online CPUs; the CPU topology and the capacity come only with a machine)."""
    out = Findings(version)
    resolved = resolve(version)
    note = resolved.note()
    if note:
        out.add("kubelet.unmodelled", "kubeletVersion", "warning", note)
    kubelet = resolved.profile
    _check_layers(settings, kubelet, out)
    if machine is not None:
        hardware = Hardware.of(machine)
    else:
        hardware = Hardware(
            online_cpus=None if online_cpus is None else frozenset(online_cpus),
            numa_nodes=None if numa_nodes is None else tuple(sorted(numa_nodes)),
            sockets=sockets,
            memory=memory_capacity,
        )
    start = Start.of(kubelet_config(settings), kubelet, hardware)
    kubelet_refusals(start, "config", out)
    check_topology(start, out)
    check_cpu(start, out)
    check_memory(start, out)
    return list(out)


def kubelet_config(settings: KubeletSettings) -> dict[str, Any]:
    """The configuration the kubelet starts with: every field's value, and the one flag its start-up
    reads that is no field (``--experimental-allocatable-ignore-eviction``)."""
    config = {name: s.value for name, s in settings.fields.items() if s.value is not None}
    flag = settings.flags.last("experimental-allocatable-ignore-eviction") if settings.flags is not None else None
    if flag is not None:
        with contextlib.suppress(gostr.GoParseError):  # a bad value: the kubelet refuses the command line itself
            config["experimentalAllocatableIgnoreEviction"] = flag.value is None or gostr.parse_bool(flag.value)
    return config


# ---------------------------------------------------------------------------------------------
# Where values come from


def _layered(setting: Setting) -> tuple[Layer, ...]:
    """Every layer that set the field, lowest first, without /configz."""
    if setting.source == "configz":
        return setting.overridden
    return (*setting.overridden, setting.as_layer())


def _check_layers(settings: KubeletSettings, kubelet: KubeletProfile, out: Findings) -> None:
    _check_fields(settings, kubelet, out)
    _check_dropins(settings, out)
    _check_flags(settings, kubelet, out)
    for drift in settings.drift:
        out.add(
            "configz.drift",
            drift.field,
            "warning",
            f"the running kubelet (/configz) has {drift.field}={show(drift.running)} but "
            f"{_where(drift.configured_by)} sets {show(drift.configured)}; "
            "the kubelet has not been restarted since that change",
        )


def _check_fields(settings: KubeletSettings, kubelet: KubeletProfile, out: Findings) -> None:
    for source, name in settings.unknown_fields:
        close = difflib.get_close_matches(name, list(FIELD_SINCE), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        if source in settings.dropins:
            # A drop-in is decoded into a plain map (DecodeKubeletConfigurationIntoJSON), which takes
            # any key; json.Unmarshal of the merged drop-ins then drops the key without a log line.
            message = (
                f'{source}: unknown field "{name}"{hint}; the kubelet ignores it without logging anything '
                "(drop-ins are merged as plain JSON, and a key that matches no field is dropped)"
            )
        else:
            message = (
                f'{source}: unknown field "{name}"{hint}; the kubelet ignores it after logging '
                '"Using lenient decoding as strict decoding failed" '
                f'err="strict decoding error: unknown field \\"{name}\\""'
            )
        out.add("config.unknown-field", name, "warning", message)
    for name, setting in settings.fields.items():
        configured = [layer for layer in _layered(setting) if layer.source in ("file", "dropin")]
        since = kubelet.field_since(name)
        if configured and since is not None:
            out.add(
                "config.field-too-new",
                name,
                "warning",
                f"{configured[-1].detail}: {name} exists from kubelet 1.{since}; kubelet {kubelet.name} ignores it",
            )
    for source, name in settings.duplicate_fields:
        out.add(
            "config.duplicate-field", name.split(" ")[0], "warning", f"{source}: {name} is set twice; the last one wins"
        )


def _check_dropins(settings: KubeletSettings, out: Findings) -> None:
    """Drop-in files the kubelet skips (``--config-dir`` is on by default in every supported minor)."""
    if settings.dropin_dir_unread:
        out.add("dropin.dir-unread", "configDir", "warning", settings.dropin_dir_unread)
    for path in settings.skipped_dropin_files:
        out.add(
            "dropin.skipped-file",
            "configDir",
            "warning",
            f"{path} is ignored: the kubelet only reads drop-in files whose name ends in .conf",
        )


def _check_flags(settings: KubeletSettings, kubelet: KubeletProfile, out: Findings) -> None:
    flags = settings.flags
    for use in flags.uses if flags is not None else ():
        if use.name not in CONFIG_FLAGS:
            continue
        field = CONFIG_FLAGS[use.name][0]
        if kubelet.field_since(field) is not None:
            out.add(
                "flag.unknown",
                field,
                "error",
                f"failed to parse kubelet flag: unknown flag: --{use.name}",
                kubelet=True,
            )
        else:
            out.add(
                "flag.deprecated",
                field,
                "info",
                f"Flag --{use.name} has been deprecated, {_DEPRECATED_FLAG}",
                kubelet=True,
            )
    for name, setting in settings.fields.items():
        layers = _layered(setting)
        if not layers or layers[-1].source != "flag":
            continue
        flag = layers[-1]
        lost = [
            layer
            for layer in layers[:-1]
            if layer.source in ("file", "dropin") and not same_value(layer.value, flag.value)
        ]
        if lost:
            where = " and ".join(f"{layer.detail} ({show(layer.value)})" for layer in lost)
            out.add(
                "flag.overrides-config",
                name,
                "warning",
                f"{flag.detail}={show(flag.value)} overrides {name} set in {where}; "
                "edits to the configuration have no effect while the flag is set",
            )


def _where(layer: Layer) -> str:
    return {"default": "the default", "flag": f"flag {layer.detail}"}.get(layer.source, str(layer.detail))
