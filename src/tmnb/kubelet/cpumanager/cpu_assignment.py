"""Which CPUs the static policy hands out.

Packed: take whole NUMA nodes/sockets (whichever level is larger first), then whole cores, then
single threads, always from the most-used (fewest free CPUs) group first so allocations pack.
Distributed (``distribute-cpus-across-numa``): spread evenly over the fewest NUMA nodes that
balance best, then pack within each node. Ties are broken by id, so results are deterministic
and must match the kubelet's CPU for CPU.

Two options change the packed walk (``takeByTopologyNUMAPacked``'s arguments):

* ``prefer-align-cpus-by-uncorecache`` (``uncore``): after whole NUMA nodes and sockets, whole free
  uncore caches while at least a cache's worth (all CPUs over distinct cache ids) is still needed,
  else the rest from one cache's lowest free cores if they hold exactly what is needed;
* ``distribute-cpus-across-cores`` (``spread``, the kubelet's CPUSortingStrategySpread): no whole-core
  step, and single threads taken socket by socket in CPU id order instead of core by core.

Ports pkg/kubelet/cm/cpumanager/cpu_assignment.go (1.33–1.37).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from itertools import combinations

from tmnb.errors import InputError
from tmnb.kubelet.cpumanager.topology import CPUTopology
from tmnb.kubelet.errors import CPUAllocationError
from tmnb.kubelet.topologymanager.bitmask import bits_of


def _go_round3(x: float) -> float:
    """``math.Round(x*1000)/1000`` (half away from zero, unlike Python's ``round``)."""
    y = x * 1000
    r = math.floor(y + 0.5) if y >= 0 else -math.floor(-y + 0.5)
    return r / 1000


def _stddev(values: list[int]) -> float:
    mean = 0.0
    for v in values:
        mean += float(v)
    mean = _go_round3(mean / len(values))
    acc = 0.0
    for v in values:
        acc += (float(v) - mean) * (float(v) - mean)
    return _go_round3(math.sqrt(acc / len(values)))


class _Accumulator:
    __slots__ = ("avail", "needed", "numa_first", "result", "topo")

    def __init__(self, topo: CPUTopology, available: int, needed: int) -> None:
        self.topo = topo
        self.avail = available & topo.all_mask
        self.needed = needed
        self.result = 0
        self.numa_first = topo.num_sockets >= topo.num_numa_nodes

    # -- bookkeeping
    def take(self, cpus: int) -> None:
        self.result |= cpus
        self.avail &= ~self.result
        self.needed -= cpus.bit_count()

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > self.avail.bit_count()

    def _free(self, group: int) -> int:
        return (self.avail & group).bit_count()

    def _sorted(self, ids: list[int], masks: Mapping[int, int]) -> list[int]:
        return sorted(ids, key=lambda i: ((self.avail & masks[i]).bit_count(), i))

    def _present(self, ids: tuple[int, ...], masks: Mapping[int, int], within: int = -1) -> list[int]:
        """Ids whose group has an available CPU inside ``within`` (the kubelet's details.XInY)."""
        avail = self.avail & within
        return [i for i in ids if masks[i] & avail]

    # -- orderings (numaFirst / socketsFirst)
    def sorted_numa_nodes(self) -> list[int]:
        t = self.topo
        if self.numa_first:
            return self._sorted(self._present(tuple(t.numa_mask), t.numa_mask), t.numa_mask)
        out: list[int] = []
        for socket in self.sorted_sockets():
            out += self._sorted(
                self._present(t.numas_in_socket[socket], t.numa_mask, t.socket_mask[socket]), t.numa_mask
            )
        return out

    def sorted_sockets(self) -> list[int]:
        t = self.topo
        if not self.numa_first:
            return self._sorted(self._present(tuple(t.socket_mask), t.socket_mask), t.socket_mask)
        out: list[int] = []
        for numa in self.sorted_numa_nodes():
            out += self._sorted(self._present(t.sockets_in_numa[numa], t.socket_mask, t.numa_mask[numa]), t.socket_mask)
        return out

    def sorted_cores(self) -> list[int]:
        t = self.topo
        out: list[int] = []
        if self.numa_first:
            for socket in self.sorted_sockets():
                out += self._sorted(
                    self._present(t.cores_in_socket[socket], t.core_mask, t.socket_mask[socket]), t.core_mask
                )
        else:
            for numa in self.sorted_numa_nodes():
                out += self._sorted(self._present(t.cores_in_numa[numa], t.core_mask, t.numa_mask[numa]), t.core_mask)
        return out

    def sorted_cpus(self) -> list[int]:
        out: list[int] = []
        for core in self.sorted_cores():
            out += bits_of(self.avail & self.topo.core_mask[core])
        return out

    def sorted_cpus_spread(self) -> list[int]:
        """``sortAvailableCPUsSpread``: socket by socket (``sorted_sockets``), each socket's free CPUs by id."""
        out: list[int] = []
        for socket in self.sorted_sockets():
            out += bits_of(self.avail & self.topo.socket_mask[socket])
        return out

    def sorted_uncore_caches(self) -> list[int]:
        """``sortAvailableUncoreCaches``: NUMA node by NUMA node (``sorted_numa_nodes``), the caches with a
        free CPU in it by free CPUs in the whole cache, then id. A cache spanning NUMA nodes is listed
        once per node, as the kubelet lists it."""
        t = self.topo
        u = t.uncore
        out: list[int] = []
        for numa in self.sorted_numa_nodes():
            out += self._sorted(self._present(u.in_numa[numa], u.mask, t.numa_mask[numa]), u.mask)
        return out

    # -- taking
    def take_full_numa_nodes(self) -> None:
        t = self.topo
        if self.needed < t.smallest_takeable("numa"):
            return
        free = [n for n in self.sorted_numa_nodes() if self._free(t.numa_mask[n]) == t.numa_mask[n].bit_count()]
        for numa in free:
            cpus = t.numa_mask[numa]
            if self.needed >= cpus.bit_count():
                self.take(cpus)

    def take_full_sockets(self) -> None:
        t = self.topo
        if self.needed < t.smallest_takeable("socket"):
            return
        per_socket = t.cpus_per_socket()
        free = [s for s in self.sorted_sockets() if self._free(t.socket_mask[s]) == per_socket]
        for socket in free:
            cpus = t.socket_mask[socket]
            if self.needed >= cpus.bit_count():
                self.take(cpus)

    def take_full_cores(self) -> None:
        """Free cores in ``sorted_cores`` order. Every free core has the same free count, so within
        each socket (NUMA node) that order is simply ascending core id; no per-core sort needed."""
        t = self.topo
        if self.needed < t.smallest_takeable("core"):
            return
        per_core = t.cpus_per_core()
        if self.numa_first:
            groups = [(t.cores_in_socket[s], t.socket_mask[s]) for s in self.sorted_sockets()]
        else:
            groups = [(t.cores_in_numa[n], t.numa_mask[n]) for n in self.sorted_numa_nodes()]
        free = []
        avail = self.avail
        for cores, within in groups:
            for core in cores:
                m = t.core_mask[core]
                if m & within & avail and (m & avail).bit_count() == per_core:
                    free.append(core)
        for core in free:
            cpus = t.core_mask[core]
            if self.needed >= cpus.bit_count():
                self.take(cpus)

    def take_full_uncore_caches(self) -> None:
        """``takeFullUncore``: every free cache (in ``sorted_uncore_caches`` order, listed before taking)
        that still fits. A cache listed twice is counted twice, as the kubelet counts it."""
        masks = self.topo.uncore.mask
        free = [u for u in self.sorted_uncore_caches() if self._free(masks[u]) == masks[u].bit_count()]
        for uncore in free:
            cpus = masks[uncore]
            if self.needed >= cpus.bit_count():
                self.take(cpus)

    def take_partial_uncore_cache(self, uncore: int) -> None:
        """``takePartialUncore``: the free CPUs of the cache's lowest cores with a free CPU (as many cores
        as the need in whole cores), one thread fewer for an odd need with SMT; taken only when they
        are exactly what is needed."""
        t = self.topo
        per_core = t.cpus_per_core()
        cores_needed = (self.needed + per_core - 1) // per_core
        in_cache = self.avail & t.uncore.mask[uncore]
        cpus = 0
        for core in t.uncore.cores[uncore]:
            if cores_needed == 0:
                break
            if t.core_mask[core] & in_cache:
                cpus |= t.core_mask[core]
                cores_needed -= 1
        cpus &= self.avail
        if self.needed % 2 and per_core > 1 and cpus.bit_count() > self.needed:
            cpus ^= 1 << (cpus.bit_length() - 1)  # the highest id of the sorted list is dropped
        if cpus.bit_count() == self.needed:
            self.take(cpus)

    def take_uncore_caches(self) -> None:
        """``takeUncoreCache``: for each cache in ``sorted_uncore_caches`` order (listed once, up front),
        whole caches while a cache's worth is needed, then a partial fit from that cache."""
        per_uncore = self.topo.uncore.cpus_per_uncore
        for uncore in self.sorted_uncore_caches():
            if self.needed >= per_uncore:
                self.take_full_uncore_caches()
            if self.satisfied():
                return
            self.take_partial_uncore_cache(uncore)
            if self.satisfied():
                return

    def take_remaining_cpus(self, spread: bool = False) -> None:
        for cpu in self.sorted_cpus_spread() if spread else self.sorted_cpus():
            self.take(1 << cpu)
            if self.satisfied():
                return


def _not_enough(requested: int, available: int) -> CPUAllocationError:
    return CPUAllocationError(
        f"not enough cpus available to satisfy request: requested={requested}, available={available}"
    )


def take_packed(topo: CPUTopology, available: int, num_cpus: int) -> int:
    """``takeByTopologyNUMAPacked`` with the packed CPU sorting and no uncore cache preference: returns
    the CPU mask taken. The pick depends on nothing but the free mask and the count, so it is
    remembered per topology (failures are not)."""
    if num_cpus < 1:
        return 0
    key = (available, num_cpus)
    picked = topo.pick_memo.get(key)
    if picked is None:
        picked = topo.pick_memo.put(key, _take_packed(topo, available, num_cpus, False, False))
    return picked


def take_packed_with(topo: CPUTopology, available: int, num_cpus: int, *, spread: bool, uncore: bool) -> int:
    """``takeByTopologyNUMAPacked`` with its two arguments: ``spread`` is the spread CPU sorting strategy
    (distribute-cpus-across-cores), ``uncore`` the uncore cache preference. Remembered in the same memo
    as ``take_packed``, under a longer key."""
    if not (spread or uncore):
        return take_packed(topo, available, num_cpus)
    if num_cpus < 1:
        return 0
    key = (available, num_cpus, spread, uncore)
    picked = topo.pick_memo.get(key)
    if picked is None:
        picked = topo.pick_memo.put(key, _take_packed(topo, available, num_cpus, spread, uncore))
    return picked


def _packer(spread: bool) -> Callable[[CPUTopology, int, int], int]:
    """The packed walk ``takeByTopologyNUMADistributed`` calls: its strategy, never the uncore preference."""
    if not spread:
        return take_packed
    return lambda topo, available, num_cpus: take_packed_with(topo, available, num_cpus, spread=True, uncore=False)


def _take_packed(topo: CPUTopology, available: int, num_cpus: int, spread: bool, uncore: bool) -> int:
    acc = _Accumulator(topo, available, num_cpus)
    if acc.failed():
        raise _not_enough(num_cpus, available.bit_count())
    if acc.numa_first:
        acc.take_full_numa_nodes()
        if acc.satisfied():
            return acc.result
        acc.take_full_sockets()
    else:
        acc.take_full_sockets()
        if acc.satisfied():
            return acc.result
        acc.take_full_numa_nodes()
    if acc.satisfied():
        return acc.result
    if uncore:
        acc.take_uncore_caches()
        if acc.satisfied():
            return acc.result
    if not spread:
        acc.take_full_cores()
        if acc.satisfied():
            return acc.result
    acc.take_remaining_cpus(spread)
    if acc.satisfied():
        return acc.result
    raise CPUAllocationError("failed to allocate cpus")


def _numa_range(acc: _Accumulator, group: int) -> tuple[int, int]:
    t = acc.topo
    num_numa = t.num_numa_nodes
    numa_available = len(acc._present(tuple(t.numa_mask), t.numa_mask))
    groups = (t.num_cpus - 1) // group + 1
    groups_per_numa = (groups - 1) // num_numa + 1
    groups_needed = (acc.needed - 1) // group + 1
    return (groups_needed - 1) // groups_per_numa + 1, min(groups_needed, numa_available)


def _spread_remainder(after: dict[int, int], subset: tuple[int, ...], remainder: int, group: int) -> None:
    while remainder > 0:
        progressed = False
        for numa in subset:
            if remainder == 0:
                break
            if after[numa] < group:
                continue
            after[numa] -= group
            remainder -= group
            progressed = True
        if not progressed:
            raise InputError("this allocation would never finish in the kubelet (distribute-cpus-across-numa loop)")


def take_distributed(topo: CPUTopology, available: int, num_cpus: int, group: int, *, spread: bool = False) -> int:
    """``takeByTopologyNUMADistributed`` with CPU groups of ``group`` CPUs (a core with full-pcpus-only);
    its packed steps never prefer uncore caches (the kubelet passes false), and ``spread`` reaches
    them (though the kubelet refuses distribute-cpus-across-cores beside this option)."""
    pack = _packer(spread)
    if num_cpus % group:
        return pack(topo, available, num_cpus)
    acc = _Accumulator(topo, available, num_cpus)
    if acc.satisfied():
        return 0
    if acc.failed():
        raise _not_enough(num_cpus, available.bit_count())
    numas = acc.sorted_numa_nodes()
    free = {n: acc._free(topo.numa_mask[n]) for n in numas}
    low, high = _numa_range(acc, group)
    for k in range(low, high + 1):
        best_balance = math.inf
        best_combo: tuple[int, ...] | None = None
        best_remainder: tuple[int, ...] | None = None
        for combo in combinations(numas, k):
            if best_balance == 0:
                break
            if sum(free[n] for n in combo) < num_cpus:
                continue
            if sum(free[n] // group for n in combo) * group < num_cpus:
                continue
            distribution = (num_cpus // len(combo) // group) * group
            if any(free[n] < distribution for n in combo):
                continue
            after = dict(free)
            for n in combo:
                after[n] -= distribution
            remainder = num_cpus - distribution * len(combo)
            candidates = [n for n in combo if after[n] >= group]
            local_balance = math.inf
            local_remainder: tuple[int, ...] | None = None
            if remainder == 0:
                local_balance = _stddev([after[n] for n in sorted(after)])
            size = len(candidates)
            while remainder > 0 and size >= 1:
                for subset in combinations(candidates, size):
                    trial = dict(after)
                    if sum(trial[n] for n in subset) < remainder:
                        continue
                    _spread_remainder(trial, subset, remainder, group)
                    balance = _stddev([trial[n] for n in sorted(trial)])
                    if balance < local_balance:
                        local_balance, local_remainder = balance, subset
                size -= 1
            if local_balance < best_balance:
                best_balance, best_remainder, best_combo = local_balance, local_remainder, combo
        if best_combo is None:
            continue
        distribution = (num_cpus // len(best_combo) // group) * group
        for n in best_combo:
            acc.take(pack(topo, acc.avail & topo.numa_mask[n], distribution))
        remainder = num_cpus - distribution * len(best_combo)
        while remainder > 0:
            for n in best_remainder or ():
                if remainder == 0:
                    break
                if acc._free(topo.numa_mask[n]) < group:
                    continue
                acc.take(pack(topo, acc.avail & topo.numa_mask[n], group))
                remainder -= group
        if acc.needed > 0:
            raise CPUAllocationError(f"accounting error, not enough CPUs allocated, remaining: {acc.needed}")
        if acc.needed < 0:
            raise CPUAllocationError(f"accounting error, too many CPUs allocated, remaining: {acc.needed}")
        return acc.result
    return pack(topo, available, num_cpus)
