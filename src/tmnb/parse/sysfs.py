"""sysfs NUMA node files (/sys/devices/system/node): cpulist, meminfo, distance, per-size hugepages.

The per-file parsers are pure; ``read_numa_nodes`` reads a directory laid out like sysfs (a live
/sys or a copy in a node bundle). Node ids can be sparse (and go up to 1023: ia64 boxes had 128
nodes, POWER9 numbers its GPU memory nodes 252-255), so a distance row is keyed by the node ids it
refers to, taken from ``online``: the kernel prints one distance per *online* node
(``for_each_online_node`` in drivers/base/node.c ``node_read_distance``).

Real kernels leave files out: old ones have ``cpumap`` but no ``cpulist``, guests may have no
``meminfo`` or ``distance``. A node's CPUs then come from ``cpumap`` or its ``cpuN`` links (which
cadvisor's ``GetCPUsPaths`` lists), and a missing ``meminfo`` or ``distance`` reads as cadvisor's
``getNodeMemInfo`` / ``getDistances`` read it: memory 0 and no distances, with a problem reported.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.files import read_sysfs
from tmnb.parse.numbers import MAX_DIGITS, UINT64_MAX, parse_int
from tmnb.parse.quantity import format_go

_MEMINFO_LINE = re.compile(r"^Node\s+(\d+)\s+([A-Za-z0-9_()]+):\s+(\d+)(?:\s+(kB))?$")
_HUGEPAGE_DIR = re.compile(r"^hugepages-(\d+)kB$")
_NODE_DIR = re.compile(r"^node(\d{1,4})$")
_CPU_LINK = re.compile(r"^cpu(\d{1,5})$")
_HUGEPAGE_FILES = ("nr_hugepages", "free_hugepages", "surplus_hugepages")
#: The kernel's MAX_NUMNODES is 1 << NODES_SHIFT, and NODES_SHIFT is at most 10.
MAX_NUMA_NODES = 1024


@dataclass(frozen=True)
class HugePages:
    """Pages of one size on one NUMA node. ``size`` is named as Kubernetes names it ("2Mi", "1Gi")."""

    size: str
    size_bytes: int
    total: int
    free: int
    surplus: int


@dataclass(frozen=True)
class NumaNode:
    """One NUMA node; ``memory_free`` is None when the node has no readable meminfo."""

    id: int
    cpus: CPUSet
    memory_total: int
    memory_free: int | None
    hugepages: tuple[HugePages, ...]
    distances: dict[int, int]


def parse_node_meminfo(text: str, *, node_id: int, source: str) -> dict[str, int]:
    """``nodeN/meminfo`` → key → bytes (``kB`` lines) or a plain count (``HugePages_*``)."""
    values: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        m = _MEMINFO_LINE.match(raw.strip())
        if not m:
            raise InputError(
                f"expected 'Node {node_id} Key: value [kB]', got {raw.strip()!r}", source=source, line=lineno
            )
        if m.group(1) != str(node_id):
            raise InputError(f"line is for node {m.group(1)[:12]}, expected node {node_id}", source=source, line=lineno)
        unit = 1024 if m.group(4) else 1
        values[m.group(2)] = unit * parse_int(
            m.group(3), hi=UINT64_MAX // unit, what=f"a {m.group(2)} value", source=source, line=lineno
        )
    for key in ("MemTotal", "MemFree"):
        if key not in values:
            raise InputError(f"no {key} line; the file looks truncated", source=source)
    return values


def parse_distance(text: str, *, source: str) -> tuple[int, ...]:
    """``nodeN/distance``: whitespace-separated SLIT distances, one per online node."""
    cells = text.split()
    if not cells or not all(cell.isdigit() and len(cell) <= MAX_DIGITS for cell in cells):
        shown = text.strip()[:60]
        raise InputError(f"expected whitespace-separated integers such as '10 21', got {shown!r}", source=source)
    if len(cells) > MAX_NUMA_NODES:
        raise InputError(
            f"{len(cells)} distances, more than the {MAX_NUMA_NODES} NUMA nodes Linux supports", source=source
        )
    # The kernel prints node_distance() as %d; SLIT entries are one byte (10..254, 255 = unreachable).
    return tuple(parse_int(cell, hi=255, what="a NUMA distance", source=source) for cell in cells)


def hugepage_size(dir_name: str, *, source: str) -> int:
    """``hugepages-2048kB`` → 2097152 bytes."""
    m = _HUGEPAGE_DIR.match(dir_name)
    if not m:
        raise InputError(f"expected a directory named hugepages-<size>kB, got {dir_name!r}", source=source)
    return int(m.group(1)) * 1024


def parse_hugepages(dir_name: str, files: Mapping[str, str], *, source: str) -> HugePages:
    """One ``hugepages-<size>kB`` directory given as file name → content."""
    size = hugepage_size(dir_name, source=source)
    counts: dict[str, int] = {}
    for name in _HUGEPAGE_FILES:
        text = files.get(name)
        if text is None:
            raise InputError(f"missing {name}", source=f"{source}/{dir_name}")
        counts[name] = parse_int(text, what="a page count", source=f"{source}/{dir_name}/{name}")
    return HugePages(
        size=format_go(Decimal(size), binary=True),
        size_bytes=size,
        total=counts["nr_hugepages"],
        free=counts["free_hugepages"],
        surplus=counts["surplus_hugepages"],
    )


def _read(path: Path, what: str = "a sysfs attribute") -> str:
    return read_sysfs(path, what=what)


Report = Callable[[InputError], None]


def _raise(problem: InputError) -> None:
    raise problem


def node_cpus(node_dir: Path) -> CPUSet:
    """The node's CPUs from ``cpulist``, else the older ``cpumap`` mask, else its ``cpuN`` links."""
    cpulist, cpumap = node_dir / "cpulist", node_dir / "cpumap"
    if cpulist.is_file():
        return CPUSet.parse(_read(cpulist, "a CPU list"), source=str(cpulist))
    if cpumap.is_file():
        return CPUSet.from_mask(_read(cpumap, "a CPU mask"), source=str(cpumap))
    links = [int(m.group(1)) for p in node_dir.iterdir() if (m := _CPU_LINK.match(p.name))]
    if links:
        return CPUSet(links)
    raise InputError("no cpulist, cpumap or cpuN entries: the node's CPUs are unknown", source=str(node_dir))


def _node_memory(node_id: int, node_dir: Path, report: Report) -> tuple[int, int | None]:
    path = node_dir / "meminfo"
    if not path.exists():
        report(InputError("no meminfo: the node's memory is unknown; cadvisor (getNodeMemInfo) counts it as 0",
                          source=str(path)))  # fmt: skip
        return 0, None
    try:
        mem = parse_node_meminfo(_read(path, "a node meminfo"), node_id=node_id, source=str(path))
    except InputError as err:
        report(err)
        return 0, None
    return mem["MemTotal"], mem["MemFree"]


def _node_distances(node_dir: Path, order: Sequence[int], report: Report) -> dict[int, int]:
    path = node_dir / "distance"
    if not path.exists():
        report(InputError("no distance file: NUMA distances unknown (cadvisor's getDistances leaves them empty)",
                          source=str(path)))  # fmt: skip
        return {}
    try:
        row = parse_distance(_read(path, "a NUMA distance row"), source=str(path))
    except InputError as err:
        report(err)
        return {}
    if len(row) != len(order):
        report(InputError(f"{len(row)} distances for {len(order)} online nodes {list(order)}", source=str(path)))
        return {}
    return dict(zip(order, row, strict=True))


def _node_hugepages(node_dir: Path, report: Report) -> list[HugePages]:
    pages = []
    hp_root = node_dir / "hugepages"
    if hp_root.is_dir():
        for size_dir in sorted(hp_root.iterdir()):
            try:
                files = {name: _read(size_dir / name, "a page count") for name in _HUGEPAGE_FILES}
                pages.append(parse_hugepages(size_dir.name, files, source=str(hp_root)))
            except InputError as err:
                report(err)
    return sorted(pages, key=lambda h: h.size_bytes)


def read_numa_nodes(node_root: Path, *, report: Report | None = None) -> tuple[NumaNode, ...]:
    """Read a directory shaped like ``/sys/devices/system/node`` (``online`` plus ``nodeN/``).

    Without ``report`` the first problem raises. With it, each problem is handed to ``report`` and
    the node is kept with what could be read: memory 0 without meminfo, no distances without a
    valid distance row, no CPUs when none can be found. No ``nodeN`` directory at all still raises.
    """
    sink: Report = report or _raise
    node_root = Path(node_root)
    if not node_root.is_dir():
        raise InputError("expected a directory shaped like /sys/devices/system/node", source=str(node_root))
    found = sorted(int(m.group(1)) for p in node_root.iterdir() if (m := _NODE_DIR.match(p.name)) and p.is_dir())
    present = [n for n in found if any((node_root / f"node{n}").iterdir())]
    for n in sorted(set(found) - set(present)):  # the kernel never makes one empty: a broken copy or link
        sink(
            InputError(
                "empty directory: not a NUMA node's (no cpulist, meminfo or distance)",
                source=str(node_root / f"node{n}"),
            )
        )
    if not present:
        raise InputError("no nodeN directories", source=str(node_root))
    online_file = node_root / "online"
    order = present
    if online_file.exists():
        try:
            order = sorted(CPUSet.parse(_read(online_file, "a node list"), source=str(online_file)))
        except InputError as err:
            sink(err)
    nodes = []
    for node_id in present:
        if node_id >= MAX_NUMA_NODES:
            sink(
                InputError(
                    f"node id {node_id} is beyond the kernel's {MAX_NUMA_NODES} NUMA nodes", source=str(node_root)
                )
            )
            continue
        node_dir = node_root / f"node{node_id}"
        try:
            cpus = node_cpus(node_dir)
        except InputError as err:
            sink(err)
            cpus = CPUSet()
        total, free = _node_memory(node_id, node_dir, sink)
        nodes.append(
            NumaNode(
                id=node_id,
                cpus=cpus,
                memory_total=total,
                memory_free=free,
                hugepages=tuple(_node_hugepages(node_dir, sink)),
                distances=_node_distances(node_dir, order, sink),
            )
        )
    return tuple(nodes)
