"""sysfs CPU files (/sys/devices/system/cpu): which CPUs exist, which are online, their topology.

As real kernels write them, not as one x86 box does:

* ``present`` lists the CPUs that exist; ``possible`` also counts hot-plug slots that may never be
  filled (a VM with ``possible`` 0-255 and four CPUs), so offline CPUs are ``present - online``;
* kernels built without CPU hot-plug have no ``online`` file: each ``cpuN/online`` then says it
  (and a CPU without one, usually cpu0, cannot go offline, so it is online);
* ``physical_package_id`` is -1 where the firmware does not say (POWER, s390, sparc, RISC-V);
* old kernels give only the ``thread_siblings`` mask, not ``thread_siblings_list``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tmnb.cpuset import MAX_CPUS, CPUSet
from tmnb.errors import InputError
from tmnb.parse.files import read_sysfs
from tmnb.parse.numbers import parse_int

_CPU_DIR = re.compile(r"^cpu(\d{1,5})$")
#: Ids a topology file may hold; -1 means "not known" (topology_physical_package_id's default).
_ID_MAX = 2**31 - 1

Report = Callable[[InputError], None]


@dataclass(frozen=True)
class SysfsCpu:
    """One logical CPU as sysfs describes it; ``None`` where a file is absent (offline CPUs have no
    topology directory)."""

    cpu: int
    online: bool
    core_id: int | None = None
    package_id: int | None = None
    book_id: int | None = None
    drawer_id: int | None = None
    thread_siblings: CPUSet | None = None


def _cpu_list(path: Path) -> CPUSet:
    return CPUSet.parse(read_sysfs(path, what="a CPU list"), source=str(path))


def _id(path: Path, what: str) -> int | None:
    if not path.is_file():
        return None
    return parse_int(read_sysfs(path, what=what), lo=-1, hi=_ID_MAX, what=what, source=str(path))


def _siblings(topo: Path) -> CPUSet | None:
    listed, mask = topo / "thread_siblings_list", topo / "thread_siblings"
    if listed.is_file():
        return _cpu_list(listed)
    if mask.is_file():
        return CPUSet.from_mask(read_sysfs(mask, what="a CPU mask"), source=str(mask))
    return None


def present_cpus(cpu_root: Path) -> CPUSet:
    """``present``, else ``possible``, else the ``cpuN`` directories (dumps of very old kernels)."""
    for name in ("present", "possible"):
        if (cpu_root / name).is_file():
            return _cpu_list(cpu_root / name)
    return CPUSet(
        int(m.group(1)) for p in cpu_root.iterdir() if (m := _CPU_DIR.match(p.name)) and int(m.group(1)) < MAX_CPUS
    )


def online_cpus(cpu_root: Path, present: CPUSet) -> CPUSet:
    """``online``, else each present CPU's own ``cpuN/online`` (absent: the CPU cannot go offline)."""
    if (cpu_root / "online").is_file():
        return _cpu_list(cpu_root / "online")
    online = set()
    for cpu in present:
        flag = cpu_root / f"cpu{cpu}" / "online"
        if not flag.is_file() or parse_int(read_sysfs(flag, what="0 or 1"), hi=1, what="0 or 1", source=str(flag)):
            online.add(cpu)
    return CPUSet(online)


def read_cpus(cpu_root: Path, *, report: Report) -> tuple[SysfsCpu, ...]:
    """Every present CPU with its online state and, when online, its topology ids."""
    cpu_root = Path(cpu_root)
    present = present_cpus(cpu_root)
    online = online_cpus(cpu_root, present)
    rows = []
    for cpu in sorted(present | online):
        topo = cpu_root / f"cpu{cpu}" / "topology"
        if cpu not in online or not topo.is_dir():
            rows.append(SysfsCpu(cpu=cpu, online=cpu in online))
            continue
        try:
            rows.append(
                SysfsCpu(
                    cpu=cpu,
                    online=True,
                    core_id=_id(topo / "core_id", "a core id"),
                    package_id=_id(topo / "physical_package_id", "a package id"),
                    book_id=_id(topo / "book_id", "a book id"),
                    drawer_id=_id(topo / "drawer_id", "a drawer id"),
                    thread_siblings=_siblings(topo),
                )
            )
        except InputError as err:
            report(err)
            rows.append(SysfsCpu(cpu=cpu, online=True))
    return tuple(rows)
