"""A node's CPUs and NUMA zones from its sysfs, as the kubelet sees them through cadvisor.

cadvisor's ``GetNodesInfo`` walks ``/sys/devices/system/node/nodeN``; for each online CPU of a
node it needs ``core_id`` and ``physical_package_id`` (a CPU missing either is left out, with a
warning) and groups threads into cores by (core id, package id), on s390 also by book and drawer.
The kubelet's ``topology.Discover`` then names each core by its lowest thread. Without any
``nodeN`` directory cadvisor's ``getCPUTopology`` makes one node per physical package, with no
memory figure. Everything missing on the way is an issue on the node, not a lost node.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.sysfs import NumaNode, read_numa_nodes
from tmnb.parse.sysfs_cpu import SysfsCpu, read_cpus
from tmnb.snapshot import Cpu, HugePages, Issue, NumaZone
from tmnb.sources.node_render import CPU_SYSFS, NODE_SYSFS

_NO_PACKAGE = -1
_NODE_DIR = re.compile(r"^node(\d+)$")


def _reporter(issues: list[Issue], step: str, root: Path) -> Callable[[InputError], None]:
    def report(err: InputError) -> None:
        issues.append(Issue(source=step, message=_on_node(str(err), root), severity="warning"))

    return report


def _per_file(problems: list[InputError], root: Path) -> list[Issue]:
    """One issue per problem and file name, listing the nodes it hit (128 nodes without meminfo are
    one finding, not 128), with paths as they are on the node."""
    nodes: dict[tuple[str, str], list[int]] = {}
    other: list[Issue] = []
    for err in problems:
        path = Path(err.source or "")
        m = _NODE_DIR.match(path.parent.name)
        if m is None or err.line is not None:
            other.append(Issue(source="numa", message=_on_node(str(err), root), severity="warning"))
            continue
        nodes.setdefault((path.name, err.message), []).append(int(m.group(1)))
    grouped = [
        Issue(
            source="numa",
            severity="warning",
            message=f"/{NODE_SYSFS}/node{ids[0] if len(ids) == 1 else '{' + str(CPUSet(ids)) + '}'}/{name}: {message}",
        )
        for (name, message), ids in nodes.items()
    ]
    return grouped + other


def _on_node(text: str, root: Path) -> str:
    return text.replace(f"{root}/", "/")


def _zone(n: NumaNode) -> NumaZone:
    return NumaZone(
        id=n.id,
        cpus=str(n.cpus),
        memory_total=n.memory_total,
        memory_free=n.memory_free,
        hugepages=[HugePages(size=h.size, total=h.total, free=h.free) for h in n.hugepages],
        distances=dict(n.distances),
    )


def _zones_by_package(cpus: tuple[SysfsCpu, ...], issues: list[Issue]) -> list[NumaZone]:
    """``getCPUTopology``: no node directory, so one zone per physical package."""
    packages: dict[int, set[int]] = {}
    for c in cpus:
        if c.online and c.package_id is not None:
            packages.setdefault(max(c.package_id, 0), set()).add(c.cpu)
    if not packages:
        issues.append(
            Issue(
                source="numa",
                message="no sys/devices/system/node and no physical_package_id: the kubelet (cadvisor) finds no "
                "NUMA node and no CPU topology on this machine",
            )
        )
        return []
    unknown = any(c.online and c.package_id == _NO_PACKAGE for c in cpus)
    issues.append(
        Issue(
            source="numa",
            severity="info",
            message="no sys/devices/system/node: one NUMA node per physical package, as cadvisor's getCPUTopology "
            "makes them, with no per-node memory figure"
            + ("; physical_package_id -1 (unknown) is counted as package 0" if unknown else ""),
        )
    )
    return [NumaZone(id=p, cpus=str(CPUSet(members)), memory_total=0) for p, members in sorted(packages.items())]


def placed_online(by_id: dict[int, SysfsCpu]) -> CPUSet:
    return CPUSet(c.cpu for c in by_id.values() if c.online and c.core_id is not None and c.package_id is not None)


def _cpu_rows(zones: list[NumaZone], cpus: tuple[SysfsCpu, ...], issues: list[Issue]) -> list[Cpu]:
    by_id = {c.cpu: c for c in cpus}
    rows: list[Cpu] = []
    skipped: list[int] = []
    placed: set[int] = set()
    odd: set[int] = set()
    known = placed_online(by_id)
    for zone in sorted(zones, key=lambda z: z.id):
        cores: dict[tuple[int, int, int | None, int | None], list[int]] = {}
        for cpu in sorted(CPUSet.parse(zone.cpus)):
            c = by_id.get(cpu)
            if c is None or not c.online:
                continue
            placed.add(cpu)
            if c.core_id is None or c.package_id is None:
                skipped.append(cpu)
                continue
            cores.setdefault((c.core_id, c.package_id, c.book_id, c.drawer_id), []).append(cpu)
        for (_, package, _, _), threads in cores.items():
            rows += [Cpu(cpu=t, core=min(threads), socket=package, numa=zone.id) for t in threads]
            for t in threads:
                siblings = by_id[t].thread_siblings
                if siblings is not None and siblings & known != CPUSet(threads):
                    odd.add(t)
    if skipped:
        issues.append(
            Issue(
                source="cpu topology",
                severity="warning",
                message=f"CPUs {CPUSet(skipped)} have no core_id or physical_package_id: cadvisor (getCoresInfo) "
                "leaves them out, so the kubelet's CPU manager does not know them",
            )
        )
    if odd:
        issues.append(
            Issue(
                source="cpu topology",
                severity="warning",
                message=f"CPUs {CPUSet(odd)}: the kubelet groups threads into cores by core_id and "
                "physical_package_id (cadvisor getCoresInfo), and here that is not the kernel's thread_siblings; "
                "the CPU manager's idea of SMT siblings (full-pcpus-only, whole-core allocation) follows core_id",
            )
        )
    stray = CPUSet(c.cpu for c in cpus if c.online) - placed
    if stray and zones:
        issues.append(
            Issue(
                source="cpu topology",
                severity="warning",
                message=f"online CPUs {stray} are in no NUMA node: the kubelet does not know them",
            )
        )
    numa_of = {cpu: z.id for z in zones for cpu in CPUSet.parse(z.cpus)}
    rows += [Cpu(cpu=c.cpu, core=c.cpu, socket=0, numa=numa_of[c.cpu], online=False)
             for c in cpus if not c.online and c.cpu in numa_of]  # fmt: skip
    return sorted(rows, key=lambda r: r.cpu)


def read_topology(root: Path) -> tuple[list[NumaZone], list[Cpu], list[Issue]]:
    """Zones, per-CPU rows and the issues met, from a node root (a copy of the node's files)."""
    issues: list[Issue] = []
    cpu_root, node_root = root / CPU_SYSFS, root / NODE_SYSFS
    cpus: tuple[SysfsCpu, ...] = ()
    if cpu_root.is_dir():
        try:
            cpus = read_cpus(cpu_root, report=_reporter(issues, "cpu topology", root))
        except InputError as err:
            issues.append(Issue(source="cpu topology", message=_on_node(str(err), root)))
    else:
        issues.append(Issue(source="cpu topology", message=f"no {CPU_SYSFS}: per-CPU topology unknown"))
    zones: list[NumaZone] = []
    if node_root.is_dir() and any(p.name.startswith("node") for p in node_root.iterdir()):
        problems: list[InputError] = []
        try:
            zones = [_zone(n) for n in read_numa_nodes(node_root, report=problems.append)]
        except InputError as err:
            issues.append(Issue(source="numa", message=_on_node(str(err), root)))
        issues += _per_file(problems, root)
    if not zones:
        zones = _zones_by_package(cpus, issues)
    return zones, _cpu_rows(zones, cpus, issues), issues
