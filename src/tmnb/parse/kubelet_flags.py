"""The kubelet's command line → flag uses → the KubeletConfiguration fields those flags set.

Parsing follows pflag as the kubelet configures it (``_`` in names normalized to ``-``; ``--f=v``,
``--f v``, bare booleans; ``-v`` shorthand; leftover words are "unknown command"). Values follow
each flag type's ``Set``: map flags start from an empty map at their first use and accumulate over
repeats (so ``--kube-reserved`` replaces the file's whole map), scalars keep the last value, and
``--reserved-memory`` appends. Flags tmnb does not map to a config field are listed, not guessed.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.errors import ConfigRejected, InputError
from tmnb.parse.duration import format_go_duration, parse_go_duration
from tmnb.parse.quantity import Quantity

DEFAULT_ROOT_DIR = "/var/lib/kubelet"

# flag → (KubeletConfiguration field, value kind)
CONFIG_FLAGS: dict[str, tuple[str, str]] = {
    "cpu-manager-policy": ("cpuManagerPolicy", "string"),
    "cpu-manager-policy-options": ("cpuManagerPolicyOptions", "map-nosplit"),
    "cpu-manager-reconcile-period": ("cpuManagerReconcilePeriod", "duration"),
    "memory-manager-policy": ("memoryManagerPolicy", "string"),
    "reserved-memory": ("reservedMemory", "reserved-memory"),
    "topology-manager-policy": ("topologyManagerPolicy", "string"),
    "topology-manager-scope": ("topologyManagerScope", "string"),
    "topology-manager-policy-options": ("topologyManagerPolicyOptions", "map-nosplit"),
    "reserved-cpus": ("reservedSystemCPUs", "string"),
    "kube-reserved": ("kubeReserved", "map"),
    "system-reserved": ("systemReserved", "map"),
    "kube-reserved-cgroup": ("kubeReservedCgroup", "string"),
    "system-reserved-cgroup": ("systemReservedCgroup", "string"),
    "enforce-node-allocatable": ("enforceNodeAllocatable", "string-slice"),
    "eviction-hard": ("evictionHard", "langle-map"),
    "feature-gates": ("featureGates", "map-bool"),
    "cgroup-driver": ("cgroupDriver", "string"),
    "cgroups-per-qos": ("cgroupsPerQOS", "bool"),
    "cgroup-root": ("cgroupRoot", "string"),
    "container-runtime-endpoint": ("containerRuntimeEndpoint", "string"),
    "fail-swap-on": ("failSwapOn", "bool"),
    "max-pods": ("maxPods", "int32"),
    "pod-max-pids": ("podPidsLimit", "int64"),
}

#: Boolean flags of the kubelet (options.go, logging); pflag never consumes the next word for these.
BOOL_FLAGS = frozenset(
    {
        "enable-server", "fail-swap-on", "anonymous-auth", "authentication-token-webhook",
        "rotate-server-certificates", "rotate-certificates", "enable-debugging-handlers", "contention-profiling",
        "cgroups-per-qos", "runonce", "cpu-cfs-quota", "enable-controller-attach-detach",
        "make-iptables-util-chains", "kernel-memcg-notification", "local-storage-capacity-isolation",
        "serialize-image-pulls", "protect-kernel-defaults", "register-node", "seccomp-default",
        "exit-on-lock-contention", "register-schedulable", "keep-terminated-pod-volumes",
        "experimental-allocatable-ignore-eviction", "help", "version", "windows-service",
        "log-json-split-stream", "log-text-split-stream",
    }
)  # fmt: skip

_SHORTHANDS = {"v": "v", "h": "help"}
_FLAG_ONLY = ("config", "config-dir", "root-dir")


@dataclass(frozen=True)
class FlagUse:
    """One flag on the command line. ``value`` is None for a bare boolean flag."""

    name: str
    value: str | None
    origin: str


@dataclass(frozen=True)
class KubeletFlags:
    """The kubelet's flags and what they set. ``config_fields`` holds typed values as the kubelet
    would hold them (durations in Go form, reservedMemory quantities canonical)."""

    source: str
    uses: tuple[FlagUse, ...]
    config_fields: dict[str, Any]
    field_flags: dict[str, str]
    config_file: str | None
    config_dir: str | None
    root_dir: str
    unmodelled: tuple[str, ...]

    def last(self, name: str) -> FlagUse | None:
        """The last use of ``name`` (without dashes), which is the one that counts for scalars."""
        found = None
        for use in self.uses:
            if use.name == name:
                found = use
        return found


def split_proc_cmdline(data: bytes | str, *, source: str) -> list[str]:
    """``/proc/<pid>/cmdline``: NUL-separated words with a trailing NUL."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8")
        except UnicodeDecodeError:
            raise InputError("not UTF-8 text; expected a NUL-separated command line", source=source) from None
    if not data.strip("\0"):
        raise InputError("empty command line (the process may have exited)", source=source)
    if "\0" not in data:
        raise InputError("no NUL separators; expected the raw bytes of /proc/<pid>/cmdline", source=source)
    return data[:-1].split("\0") if data.endswith("\0") else data.split("\0")


def parse_kubelet_args(argv: Sequence[str], *, source: str, origins: Sequence[str] | None = None) -> KubeletFlags:
    """Parse a full kubelet command line (``argv[0]`` is the program) as the kubelet does."""
    if not argv or argv[0].startswith("-"):
        raise InputError("expected the kubelet program path first, then its flags", source=source)
    where = list(origins) if origins is not None else [source] * len(argv)
    if len(where) != len(argv):
        raise InputError("origins must be parallel to argv", source=source)
    uses: list[FlagUse] = []
    i = 1
    while i < len(argv):
        word, origin = argv[i], where[i]
        value: str | None
        if word == "--":
            if i + 1 < len(argv):
                raise ConfigRejected(f"unknown command {argv[i + 1]}", source=source)
            break
        if not word.startswith("-") or word == "-":
            raise ConfigRejected(f"unknown command {word}", source=source)
        if word.startswith("--"):
            name, eq, value = word[2:].partition("=")
            name = name.replace("_", "-")
            if not name:
                raise ConfigRejected(f"failed to parse kubelet flag: bad flag syntax: {word}", source=source)
        else:
            letter, rest = word[1], word[2:]
            if letter not in _SHORTHANDS:
                raise ConfigRejected(
                    f"failed to parse kubelet flag: unknown shorthand flag: {letter!r} in {word}", source=source
                )
            name = _SHORTHANDS[letter]
            eq, value = ("=", rest[1:]) if rest.startswith("=") else ("=" if rest else "", rest)
        if not eq:
            if name in BOOL_FLAGS:
                value = None
            elif i + 1 < len(argv):
                i += 1
                value = argv[i]
            else:
                raise ConfigRejected(f"failed to parse kubelet flag: flag needs an argument: --{name}", source=source)
        uses.append(FlagUse(name=name, value=value, origin=origin))
        i += 1
    return _build(tuple(uses), source)


def _build(uses: tuple[FlagUse, ...], source: str) -> KubeletFlags:
    fields: dict[str, Any] = {}
    field_flags: dict[str, str] = {}
    initialized: set[str] = set()
    unmodelled: list[str] = []
    for use in uses:
        if use.name in CONFIG_FLAGS:
            field, kind = CONFIG_FLAGS[use.name]
            if kind == "reserved-memory" and not use.value:
                continue  # ReservedMemoryVar.Set("") leaves the target untouched
            fields[field] = _set(kind, fields.get(field) if field in initialized else None, use, source)
            initialized.add(field)
            field_flags[field] = f"--{use.name}"
        elif use.name not in _FLAG_ONLY and use.name not in unmodelled:
            unmodelled.append(use.name)
    config = next((u.value for u in reversed(uses) if u.name == "config"), None)
    config_dir = next((u.value for u in reversed(uses) if u.name == "config-dir"), None)
    root_dir = next((u.value for u in reversed(uses) if u.name == "root-dir"), None)
    return KubeletFlags(
        source=source,
        uses=uses,
        config_fields=fields,
        field_flags=field_flags,
        config_file=config or None,
        config_dir=config_dir or None,
        root_dir=root_dir or DEFAULT_ROOT_DIR,
        unmodelled=tuple(unmodelled),
    )


def _invalid(use: FlagUse, reason: str, source: str) -> ConfigRejected:
    return ConfigRejected(
        f'failed to parse kubelet flag: invalid argument "{use.value}" for "--{use.name}" flag: {reason}',
        source=source,
        where=use.origin,
    )


_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def _parse_bool(text: str) -> bool | None:
    """``strconv.ParseBool``; None when Go would reject the text."""
    return True if text in _TRUE else False if text in _FALSE else None


def _bool(use: FlagUse, source: str) -> bool:
    if use.value is None:
        return True
    parsed = _parse_bool(use.value)
    if parsed is None:
        raise _invalid(use, f'strconv.ParseBool: parsing "{use.value}": invalid syntax', source)
    return parsed


def _set(kind: str, current: Any, use: FlagUse, source: str) -> Any:
    """Apply one flag use to the field value accumulated so far (None before the first use)."""
    value = use.value or ""
    if kind == "bool":
        return _bool(use, source)
    if kind == "string":
        return value
    if kind == "duration":
        try:
            return format_go_duration(parse_go_duration(value))
        except InputError:
            raise _invalid(use, f'time: invalid duration "{value}"', source) from None
    if kind in ("int32", "int64"):
        try:
            return int(value, 10)
        except ValueError:
            raise _invalid(use, f'strconv.ParseInt: parsing "{value}": invalid syntax', source) from None
    if kind == "string-slice":
        items = next(csv.reader([value])) if value else []
        return [*(current or []), *items]
    if kind == "reserved-memory":
        return [*(current or []), *_reserved_memory(use, source)]
    result = dict(current or {})
    if kind == "map-nosplit":
        key, val = _pair(value, "=", use, source, "string=string")
        result[key] = val
        return result
    sep, expect = {"langle-map": ("<", "string<string"), "map-bool": ("=", "string=bool")}.get(
        kind, ("=", "string=string")
    )
    for item in value.split(","):
        if not item:
            continue
        key, val = _pair(item, sep, use, source, expect)
        if kind == "map-bool":
            parsed = _parse_bool(val)
            if parsed is None:
                reason = f'invalid value of {key}: {val}, err: strconv.ParseBool: parsing "{val}": invalid syntax'
                raise _invalid(use, reason, source)
            result[key] = parsed
        else:
            result[key] = val
    return result


def _pair(item: str, sep: str, use: FlagUse, source: str, expect: str) -> tuple[str, str]:
    key, found, val = item.partition(sep)
    if not found:
        raise _invalid(use, f"malformed pair, expect {expect}", source)
    return key.strip(), val.strip()


def _reserved_memory(use: FlagUse, source: str) -> list[dict[str, Any]]:
    """``--reserved-memory 0:memory=1Gi,hugepages-1Gi=2Gi;1:memory=2Gi`` (flags.go ReservedMemoryVar)."""
    out = []
    for reservation in (use.value or "").split(";"):
        node, colon, limits_text = reservation.partition(":")
        if not colon or ":" in limits_text:
            raise _invalid(
                use,
                "the reserved memory has incorrect format, expected numaNodeID:type=quantity[,type=quantity...], "
                f"got {reservation}",
                source,
            )
        if not node.isdigit():
            raise _invalid(use, f"failed to convert the NUMA node ID, exptected integer, got {node}", source)
        limits: dict[str, str] = {}
        for limit in limits_text.split(","):
            name, eq, qty = limit.partition("=")
            if not eq or "=" in qty:
                raise _invalid(
                    use, f"the reserved limit has incorrect value, expected type=quantatity, got {limit}", source
                )
            if name != "memory" and not name.startswith("hugepages-"):
                raise _invalid(use, f'memory type conversion error, unknown type: "{name}"', source)
            try:
                limits[name] = str(Quantity.parse(qty))
            except InputError:
                raise _invalid(use, f"failed to parse the quantatity, expected quantatity, got {qty}", source) from None
        out.append({"numaNode": int(node), "limits": limits})
    return out
