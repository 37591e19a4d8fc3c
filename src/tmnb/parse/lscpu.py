"""lscpu's summary, as plain text or ``-J``: the node collector's check of the sysfs NUMA map.

The summary gives online/offline CPUs and the NUMA node → CPU map (node ids may be sparse). Labels
are translated by gettext, so the summary must be captured with ``LC_ALL=C``; a translated capture
is rejected rather than half-parsed.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.documents import load_json

_NUMA_NODE = re.compile(r"^NUMA node(\d+) CPU\(s\)$")
_NUMA_LIKE = re.compile(r"NUMA|Knoten|Nœud|ノード|节点", re.IGNORECASE)
_C_LOCALE_HINT = "capture it with `LC_ALL=C lscpu` so the labels are the untranslated English ones"


@dataclass(frozen=True)
class CpuModel:
    """One "Model name:" block. Heterogeneous machines (ARM big.LITTLE: Cortex-A510 + A710 + X3, Intel
    P- and E-cores) print one block per core type, each with its own per-socket counts."""

    name: str | None
    threads_per_core: int | None
    cores_per_socket: int | None
    sockets: int | None


@dataclass(frozen=True)
class LscpuSummary:
    """What the lscpu summary says about CPUs and NUMA; ``fields`` keeps every label (the first of
    each) for display. ``sockets``/``cores_per_socket``/``threads_per_core`` count every model block:
    the core types share the sockets, so cores add up and sockets and threads are the largest."""

    cpus: int
    online: CPUSet | None
    offline: CPUSet
    sockets: int | None
    cores_per_socket: int | None
    threads_per_core: int | None
    numa_nodes: dict[int, CPUSet]
    vendor: str | None
    model_name: str | None
    fields: dict[str, str | None]
    models: tuple[CpuModel, ...] = ()


# ---------------------------------------------------------------------------------------------
# Summary: plain text and JSON


def parse_lscpu_summary(text: str, *, source: str = "lscpu") -> LscpuSummary:
    """``LC_ALL=C lscpu`` or ``LC_ALL=C lscpu -J`` (flat, or hierarchical with ``children``)."""
    if text.lstrip().startswith("{"):
        return _summarize(list(_json_fields(text, source)), source)
    return _summarize(list(_text_fields(text, source)), source)


def _text_fields(text: str, source: str) -> Iterator[tuple[str, str | None, int]]:
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        label, sep, value = raw.strip().partition(":")
        if not sep:
            label, sep, value = raw.strip().partition("：")  # zh_CN full-width colon
            if sep:
                raise InputError(f"lscpu output is translated (label {label!r}); {_C_LOCALE_HINT}", source=source)
            raise InputError(
                f"expected 'Label: value' lines of lscpu output, got {raw.strip()!r}", source=source, line=lineno
            )
        yield label, value.strip() or None, lineno


def _json_fields(text: str, source: str) -> Iterator[tuple[str, str | None, int | None]]:
    doc = load_json(text, source=source, expected='lscpu -J output ({"lscpu": [{"field": ..., "data": ...}]})')
    entries = doc.get("lscpu") if isinstance(doc, dict) else None
    if not isinstance(entries, list):
        raise InputError('expected a JSON object with an "lscpu" list (output of lscpu -J)', source=source)
    yield from _walk_json(entries, source, "lscpu")


def _walk_json(entries: list[object], source: str, path: str) -> Iterator[tuple[str, str | None, None]]:
    for i, entry in enumerate(entries):
        where = f"{path}[{i}]"
        if not isinstance(entry, dict) or not isinstance(entry.get("field"), str):
            raise InputError('expected {"field": "Label:", "data": ...}', source=source, where=where)
        data = entry.get("data")
        if data is not None and not isinstance(data, str):
            raise InputError(f"expected a string or null, got {data!r}", source=source, where=f"{where}.data")
        label = entry["field"]
        if not label.endswith(":"):
            if label.endswith("："):
                raise InputError(f"lscpu output is translated (label {label!r}); {_C_LOCALE_HINT}", source=source)
            raise InputError(f"expected a label ending in ':', got {label!r}", source=source, where=f"{where}.field")
        yield label[:-1], data, None
        children = entry.get("children")
        if children is not None:
            if not isinstance(children, list):
                raise InputError("expected a list", source=source, where=f"{where}.children")
            yield from _walk_json(children, source, f"{where}.children")


def _check_c_locale(fields: list[tuple[str, str | None, int | None]], source: str) -> None:
    labels = [label for label, _, _ in fields]
    for label, _, line in fields:
        if label != label.rstrip() or not label.isascii():
            raise InputError(
                f"lscpu output is translated (label {label!r}); {_C_LOCALE_HINT}", source=source, line=line
            )
        if _NUMA_LIKE.search(label) and label != "NUMA node(s)" and label != "NUMA" and not _NUMA_NODE.match(label):
            raise InputError(
                f"lscpu output is translated (label {label!r}); {_C_LOCALE_HINT}", source=source, line=line
            )
    if "Architecture" not in labels:
        found = labels[0] if labels else "nothing"
        raise InputError(
            f"expected lscpu output starting with 'Architecture:', found {found!r}; if this is lscpu, {_C_LOCALE_HINT}",
            source=source,
        )


def _int_field(values: dict[str, str | None], label: str, source: str) -> int | None:
    text = values.get(label)
    if text is None or text == "-":  # "-": lscpu could not tell (e.g. Socket(s) on some ARM boards)
        return None
    if not text.isdigit() or len(text) > 6:
        raise InputError(f"expected a number for {label!r}, got {text[:40]!r}", source=source, where=label)
    return int(text)


_MODEL_COUNTS = ("Thread(s) per core", "Core(s) per socket", "Socket(s)")


def _models(fields: list[tuple[str, str | None, int | None]], source: str) -> tuple[CpuModel, ...]:
    blocks: list[dict[str, str | None]] = []
    for label, value, _ in fields:
        if label == "Model name" or (label in _MODEL_COUNTS and not blocks):
            blocks.append({"Model name": value} if label == "Model name" else {})
        if label in _MODEL_COUNTS and blocks:
            blocks[-1].setdefault(label, value)
    return tuple(
        CpuModel(
            name=b.get("Model name"),
            threads_per_core=_int_field(b, "Thread(s) per core", source),
            cores_per_socket=_int_field(b, "Core(s) per socket", source),
            sockets=_int_field(b, "Socket(s)", source),
        )
        for b in blocks
    )


def _total(values: list[int | None], combine: str) -> int | None:
    known = [v for v in values if v is not None]
    if not known:
        return None
    return sum(known) if combine == "sum" else max(known)


def _summarize(fields: list[tuple[str, str | None, int | None]], source: str) -> LscpuSummary:
    _check_c_locale(fields, source)
    values: dict[str, str | None] = {}
    numa: dict[int, CPUSet] = {}
    for label, value, line in fields:
        values.setdefault(label, value)
        m = _NUMA_NODE.match(label)
        if m:
            node = int(m.group(1))
            if node in numa:
                raise InputError(f"NUMA node{node} is listed twice", source=source, line=line)
            if value is None:  # a CPU-less node (memory only: HBM, CXL)
                numa[node] = CPUSet()
                continue
            if value.lower().startswith("0x"):
                raise InputError(
                    f"NUMA node{node} CPUs given as a hex mask; capture lscpu without --hex", source=source
                )
            # lscpu prints strides where they fit ("0-62:2": util-linux cpulist_create)
            numa[node] = CPUSet.parse(value, source=f"{source}: {label}", strided=True)
    cpus = _int_field(values, "CPU(s)", source)
    if cpus is None:
        raise InputError("no 'CPU(s):' line; expected complete lscpu output", source=source)
    online_text = values.get("On-line CPU(s) list")
    online = CPUSet.parse(online_text, source=f"{source}: On-line CPU(s) list", strided=True) if online_text else None
    offline = CPUSet.parse(
        values.get("Off-line CPU(s) list") or "", source=f"{source}: Off-line CPU(s) list", strided=True
    )
    if online is not None and online & offline:
        raise InputError(f"CPUs {online & offline} are listed both on-line and off-line", source=source)
    if online is not None and len(online) + len(offline) > cpus:
        raise InputError(f"CPU(s) says {cpus} but {len(online) + len(offline)} CPUs are listed", source=source)
    declared = _int_field(values, "NUMA node(s)", source)
    if declared is not None and declared != len(numa):
        raise InputError(
            f"'NUMA node(s): {declared}' but {len(numa)} 'NUMA nodeN CPU(s):' lines; the output looks truncated",
            source=source,
        )
    models = _models(fields, source)
    return LscpuSummary(
        cpus=cpus,
        online=online,
        offline=offline,
        sockets=_total([m.sockets for m in models], "max"),
        cores_per_socket=_total([m.cores_per_socket for m in models], "sum"),
        threads_per_core=_total([m.threads_per_core for m in models], "max"),
        numa_nodes=dict(sorted(numa.items())),
        vendor=values.get("Vendor ID"),
        model_name=values.get("Model name"),
        fields=values,
        models=models,
    )
