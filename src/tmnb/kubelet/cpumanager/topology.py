"""The CPU manager's view of the machine: logical CPUs with their core, socket, NUMA node and uncore cache.

CPU sets are Python ints (bit i = CPU i) so the allocator's many "CPUs of this core/socket/NUMA
node that are still free" questions are one AND and one popcount. Core ids must be unique across
the machine, as the kubelet makes them (it names a core after its lowest thread id).

Ports pkg/kubelet/cm/cpumanager/topology/topology.go (1.33–1.37); the memos are tmnb's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import NamedTuple

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.memo import HINT_MEMO_BUDGET, Memo
from tmnb.kubelet.topologymanager.bitmask import bits_of, masks_reaching, subset_sums
from tmnb.kubelet.topologymanager.hints import TopologyHint

#: Weight budget of each topology's pick memo, one per pick (its hint memo has ``memo.HINT_MEMO_BUDGET``).
MEMO_BUDGET = 1 << 18


def mask_of_cpus(cpus: Iterable[int]) -> int:
    mask = 0
    for cpu in cpus:
        mask |= 1 << cpu
    return mask


@lru_cache(maxsize=4096)
def to_cpuset(mask: int) -> CPUSet:
    """The CPUSet of a mask, shared (it is immutable): every admitted container reports one."""
    return CPUSet(bits_of(mask))


class CPUInfo(NamedTuple):
    """One logical CPU. A named tuple, not a frozen dataclass: a fleet replay builds one per CPU of
    every node, and the topology memo hashes and compares them, all in C this way."""

    cpu: int
    core: int
    socket: int
    numa: int
    #: last-level (L3) cache id as cadvisor reports it for the core, ``None`` when it reports none: the
    #: kubelet then uses the socket id (topology.go's ``getUncoreCacheID``), as ``uncore_of`` does
    uncore_cache: int | None = None

    @property
    def uncore_of(self) -> int:
        """The uncore cache id the kubelet's CPU topology holds for this CPU."""
        return self.socket if self.uncore_cache is None else self.uncore_cache


@dataclass(frozen=True)
class CPUTopology:
    """Immutable topology with per-core/socket/NUMA CPU masks precomputed once."""

    cpus: tuple[CPUInfo, ...]
    all_mask: int = field(init=False)
    core_mask: Mapping[int, int] = field(init=False)
    socket_mask: Mapping[int, int] = field(init=False)
    numa_mask: Mapping[int, int] = field(init=False)
    info: Mapping[int, CPUInfo] = field(init=False)
    #: group id -> ids of the finer groups inside it, for the allocator's per-level orderings
    cores_in_socket: Mapping[int, tuple[int, ...]] = field(init=False)
    cores_in_numa: Mapping[int, tuple[int, ...]] = field(init=False)
    sockets_in_numa: Mapping[int, tuple[int, ...]] = field(init=False)
    numas_in_socket: Mapping[int, tuple[int, ...]] = field(init=False)
    #: pure results on this topology, shared by every node of this shape (``of`` shares the topology):
    #: CPU hints by (free CPUs per NUMA node or free mask and reusable mask, request, align-by-socket),
    #: packed picks by (free mask, count)
    hint_memo: Memo[tuple[TopologyHint, ...]] = field(init=False, repr=False, compare=False)
    #: CPU mask by NUMA mask, for ``cpus_in_numa_mask``
    _numa_mask_cpus: dict[int, int] = field(init=False, repr=False, compare=False)
    #: the NUMA nodes' CPU masks in ascending node order, for ``free_per_numa``
    _numa_masks: tuple[int, ...] = field(init=False, repr=False, compare=False)
    pick_memo: Memo[int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        info: dict[int, CPUInfo] = {}
        cores: dict[int, int] = {}
        sockets: dict[int, int] = {}
        numas: dict[int, int] = {}
        for c in self.cpus:
            cpu, core, socket, numa = c.cpu, c.core, c.socket, c.numa
            if not (
                type(cpu) is int
                and type(core) is int
                and type(socket) is int
                and type(numa) is int
                and cpu >= 0
                and core >= 0
                and socket >= 0
                and numa >= 0
            ):  # the plain case checked at once; anything else field by field, for the message
                for name in ("cpu", "core", "socket", "numa"):
                    value = getattr(c, name)
                    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                        raise InputError(f"cpu {c.cpu!r}: {name} must be a non-negative integer, got {value!r}")
            uncore = c.uncore_cache
            if uncore is not None and (type(uncore) is not int or uncore < 0):
                raise InputError(f"cpu {c.cpu!r}: uncore_cache must be a non-negative integer or null, got {uncore!r}")
            if c.cpu in info:
                raise InputError(f"cpu {c.cpu} is listed twice")
            info[c.cpu] = c
            bit = 1 << c.cpu
            cores[c.core] = cores.get(c.core, 0) | bit
            sockets[c.socket] = sockets.get(c.socket, 0) | bit
            numas[c.numa] = numas.get(c.numa, 0) | bit
        object.__setattr__(self, "info", info)
        object.__setattr__(self, "all_mask", mask_of_cpus(info))
        object.__setattr__(self, "core_mask", cores)
        object.__setattr__(self, "socket_mask", sockets)
        object.__setattr__(self, "numa_mask", numas)

        def inside(outer: dict[int, int], inner: dict[int, int]) -> dict[int, tuple[int, ...]]:
            return {o: tuple(sorted(i for i, m in inner.items() if m & om)) for o, om in outer.items()}

        object.__setattr__(self, "cores_in_socket", inside(sockets, cores))
        object.__setattr__(self, "cores_in_numa", inside(numas, cores))
        object.__setattr__(self, "sockets_in_numa", inside(numas, sockets))
        object.__setattr__(self, "numas_in_socket", inside(sockets, numas))
        object.__setattr__(self, "_numa_mask_cpus", {})
        object.__setattr__(self, "_numa_masks", tuple(numas[n] for n in sorted(numas)))
        object.__setattr__(self, "hint_memo", Memo(HINT_MEMO_BUDGET))
        object.__setattr__(self, "pick_memo", Memo(MEMO_BUDGET))

    @property
    def uncore(self) -> UncoreCaches:
        """The CPUs of each uncore cache, built on first use: only ``prefer-align-cpus-by-uncorecache``
        allocations ask, so machines without it never pay for it."""
        caches: UncoreCaches | None = self.__dict__.get("_uncore")
        if caches is None:
            caches = self.__dict__["_uncore"] = UncoreCaches.of(self)
        return caches

    def smallest_takeable(self, level: str) -> int:
        """Smallest whole group of a level ("numa", "socket", "core") the allocator could ever take;
        a request below it skips that step without changing the result (cached)."""
        cache: dict[str, int] = self.__dict__.setdefault("_smallest", {})
        if level not in cache:
            masks = {"numa": self.numa_mask, "socket": self.socket_mask, "core": self.core_mask}[level]
            floor = {"numa": 0, "socket": self.cpus_per_socket(), "core": self.cpus_per_core()}[level]
            sizes = [m.bit_count() for m in masks.values() if m.bit_count() >= floor]
            cache[level] = min(sizes) if sizes else 1 << 30
        return cache[level]

    @staticmethod
    def of(cpus: tuple[CPUInfo, ...]) -> CPUTopology:
        """Shared instance per CPU list: fleets repeat a few machine shapes thousands of times. The
        very tuple seen last time is recognised by identity first: hashing a machine's CPUs calls
        each CPUInfo's ``__hash__``, for every node of a fleet that shares one machine object."""
        seen = _BY_IDENTITY.get(id(cpus))
        if seen is not None and seen[0] is cpus:
            return seen[1]
        topology = _shared_topology(cpus)
        if len(_BY_IDENTITY) >= 64:
            _BY_IDENTITY.clear()
        _BY_IDENTITY[id(cpus)] = (cpus, topology)  # the tuple is kept, so its id is not reused
        return topology

    @classmethod
    def from_json(cls, rows: object, where: str = "cpus") -> CPUTopology:
        """The topology in decoded JSON: a list of {cpu, core, socket, numa[, uncore_cache]} objects,
        checked here (an absent or null ``uncore_cache``: cadvisor saw none, the socket stands in)."""
        if not isinstance(rows, Sequence) or isinstance(rows, str | bytes):
            raise InputError("expected a list of {cpu, core, socket, numa}", where=where)
        out = []
        for i, row in enumerate(rows):
            try:
                uncore = row.get("uncore_cache")
                out.append(
                    CPUInfo(
                        int(row["cpu"]),
                        int(row["core"]),
                        int(row["socket"]),
                        int(row["numa"]),
                        None if uncore is None else int(uncore),
                    )
                )
            except (KeyError, TypeError, ValueError, AttributeError) as err:
                raise InputError(
                    f"expected {{cpu, core, socket, numa}} integers and an optional uncore_cache ({err})",
                    where=f"{where}[{i}]",
                ) from None
        return cls(tuple(out))

    @property
    def num_cpus(self) -> int:
        return len(self.info)

    @property
    def num_cores(self) -> int:
        return len(self.core_mask)

    @property
    def num_sockets(self) -> int:
        return len(self.socket_mask)

    @property
    def num_numa_nodes(self) -> int:
        return len(self.numa_mask)

    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0

    def numa_nodes(self) -> list[int]:
        """NUMA nodes that own CPUs, ascending (what the CPU manager iterates masks over)."""
        return sorted(self.numa_mask)

    def free_per_numa(self, cpus: int) -> tuple[int, ...]:
        """How many of ``cpus`` each NUMA node holds (ascending node ids), then how many lie outside
        the topology: all that CPU hints read of a free mask without reusable CPUs."""
        counts = [(cpus & mask).bit_count() for mask in self._numa_masks]
        counts.append((cpus & ~self.all_mask).bit_count())
        return tuple(counts)

    def cpus_in_numa_mask(self, numa_mask: int) -> int:
        """CPU mask of the NUMA nodes in a NUMA mask (cached: hint generation asks for every mask)."""
        cpus = self._numa_mask_cpus.get(numa_mask)
        if cpus is None:
            cpus = self._numa_mask_cpus[numa_mask] = self.cpus_in_numa_nodes(
                n for n in self.numa_mask if numa_mask >> n & 1
            )
        return cpus

    def narrowest_mask_size(self, request: int) -> int:
        """The fewest NUMA nodes whose CPUs together number ``request`` (all nodes when none do):
        the size a CPU hint must have to be preferred. Cached per request, from every mask's count."""
        cache: dict[int, int] = self.__dict__.setdefault("_narrowest", {})
        if request not in cache:
            nodes = self.numa_nodes()
            totals = subset_sums(nodes, {n: self.numa_mask[n].bit_count() for n in nodes})
            reaching = masks_reaching(totals, request)
            reaching.discard(0)
            cache[request] = min(map(int.bit_count, reaching), default=len(nodes))
        return cache[request]

    def cpus_in_numa_nodes(self, nodes: Iterable[int]) -> int:
        mask = 0
        for node in nodes:
            mask |= self.numa_mask.get(node, 0)
        return mask

    def sockets_in_numa_nodes(self, nodes: Iterable[int]) -> set[int]:
        cpus = self.cpus_in_numa_nodes(nodes)
        return {s for s, m in self.socket_mask.items() if m & cpus}

    def siblings(self, cpu_mask: int) -> int:
        """All threads of every core touched by ``cpu_mask``."""
        out = 0
        for m in self.core_mask.values():
            if m & cpu_mask:
                out |= m
        return out


@dataclass(frozen=True)
class UncoreCaches:
    """The uncore (last-level) caches of a topology, for ``prefer-align-cpus-by-uncorecache``: CPU mask
    per cache id, the caches with CPUs in each NUMA node and the cores with CPUs in each cache (ids
    ascending), and ``cpus_per_uncore`` as the kubelet divides it (all CPUs over distinct cache ids)."""

    mask: Mapping[int, int]
    in_numa: Mapping[int, tuple[int, ...]]
    cores: Mapping[int, tuple[int, ...]]
    cpus_per_uncore: int

    @staticmethod
    def of(topo: CPUTopology) -> UncoreCaches:
        masks: dict[int, int] = {}
        in_numa: dict[int, set[int]] = {}
        cores: dict[int, set[int]] = {}
        for c in topo.cpus:
            uncore = c.uncore_of
            masks[uncore] = masks.get(uncore, 0) | 1 << c.cpu
            in_numa.setdefault(c.numa, set()).add(uncore)
            cores.setdefault(uncore, set()).add(c.core)
        return UncoreCaches(
            mask=masks,
            in_numa={n: tuple(sorted(u)) for n, u in in_numa.items()},
            cores={u: tuple(sorted(cs)) for u, cs in cores.items()},
            cpus_per_uncore=topo.num_cpus // len(masks) if masks else 0,
        )


@lru_cache(maxsize=64)
def _shared_topology(cpus: tuple[CPUInfo, ...]) -> CPUTopology:
    return CPUTopology(cpus)


_BY_IDENTITY: dict[int, tuple[tuple[CPUInfo, ...], CPUTopology]] = {}
