"""Memory manager ``Static`` policy: per-NUMA memory/hugepages state, hints and memory blocks.

Guaranteed pods only. NUMA nodes used together for one allocation form a "group" (``cells``);
a node in a multi-node group can no longer serve single-node allocations and vice versa. When
nothing fits, the hint map is *empty* (not an empty list), which the Topology Manager reads as
"no preference"; the pod then fails in Allocate with UnexpectedAdmissionError (facts §6.2).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import compress

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.cpu_static import pod_level_managers_unmodelled
from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.memo import Memo
from tmnb.kubelet.pod import GUARANTEED, Container, Pod, pod_level_request
from tmnb.kubelet.topologymanager.bitmask import (
    SubsetSums,
    bits_of,
    has_mask,
    iterate_masks,
    mask_of,
    masks_reaching,
    node_ids,
    subset_sums,
)
from tmnb.kubelet.topologymanager.hints import TopologyHint, sized_hints
from tmnb.parse.state_files import CheckpointMemoryTable

MEMORY = "memory"


def is_memory_resource(name: str) -> bool:
    return name == MEMORY or name.startswith("hugepages-")


@dataclass
class ModelMemoryTable:
    """One NUMA node's bytes of one resource as the Static policy tracks them (the kubelet's
    ``state.MemoryTable``; the checkpoint file's form is ``parse.state_files.CheckpointMemoryTable``)."""

    total: int
    system_reserved: int
    allocatable: int
    reserved: int = 0
    free: int = field(default=-1)

    def __post_init__(self) -> None:
        if self.free < 0:
            self.free = self.allocatable - self.reserved


@dataclass
class NUMANodeState:
    memory: dict[str, ModelMemoryTable]
    cells: list[int]
    assignments: int = 0


@dataclass(frozen=True)
class ModelMemoryBlock:
    """Bytes of one resource a container holds on a set of NUMA nodes (the kubelet's ``state.Block``;
    the snapshot's record of it is ``snapshot.MemoryBlock``)."""

    numa: tuple[int, ...]
    size: int
    type: str


@dataclass(frozen=True)
class MachineNode:
    """One NUMA node of a stored machine state (``state.NUMANodeState``); None fields are Go nils."""

    assignments: int
    memory: Mapping[str, CheckpointMemoryTable | None] | None
    cells: tuple[int, ...] | None


class KubeletPanic(ConfigRejected):
    """The kubelet panics on a nil pointer in the stored state (``areMachineStatesEqual`` reads through it):
    not an error it returns, so no ``start memory manager error`` prefix."""

    def __init__(self) -> None:
        super().__init__("panic: runtime error: invalid memory address or nil pointer dereference")


_UINT64 = (1 << 64) - 1


def _err(text: str) -> AdmissionError:
    return AdmissionError(f"[memorymanager] {text}")


def calculate_hints(
    state: Mapping[int, NUMANodeState], requested: Mapping[str, int], reusable: Mapping[int, Mapping[str, int]]
) -> dict[str, list[TopologyHint]]:
    """``calculateHints``: ``reusable`` maps a NUMA mask to this pod's reusable init-container memory.

    The kubelet sums each mask's tables afresh; here every mask's sums come from one pass over the
    nodes (``subset_sums``) and the checks run as set lookups, which keeps 16 NUMA nodes (65,535
    masks) in milliseconds without changing which masks qualify or their order."""
    nodes = tuple(sorted(state))
    states = [state[n] for n in nodes]
    wanted = tuple(requested.items())
    capacity = tuple((r, tuple([s.memory.get(r, _ZERO).allocatable for s in states])) for r, _ in wanted)
    candidates, min_size = _could_hold(nodes, capacity, wanted)  # refuses node ids beyond 63
    free = {
        r: subset_sums(nodes, {n: s.memory.get(r, _ZERO).free for n, s in zip(nodes, states, strict=True)})
        for r, _ in wanted
    }
    # A node already in a multi-node group cannot serve alone, and a node with allocations may only
    # be used again within exactly its own group.
    grouped = busy_alone = busy_grouped = 0
    busy_groups = []
    for n, s in zip(nodes, states, strict=True):
        cells = len(s.cells)
        if cells > 1:
            grouped |= 1 << n
            if s.assignments > 0:
                busy_grouped |= 1 << n
                busy_groups.append((1 << n, mask_of(s.cells)))
        elif cells == 1 and s.assignments > 0:
            busy_alone |= 1 << n
    if reusable or not wanted:
        can_hold = _holding(free, wanted, reusable)
        found = list(filter(can_hold.__contains__, candidates))
    else:  # _holding's test without reusable memory, made on the candidates alone (in C)
        found = candidates
        for r, size in wanted:
            found = list(compress(found, map(size.__le__, map(free[r].__getitem__, found))))
    if grouped or busy_alone or busy_groups:
        singles = bisect_right(found, 1, key=int.bit_count)  # IterateBitMasks order: single nodes first
        found = [m for m in found[:singles] if not m & grouped] + [
            m
            for m in found[singles:]
            if not m & busy_alone and (not m & busy_grouped or all(not m & bit or m == g for bit, g in busy_groups))
        ]
    if not found:
        return {}
    hints = sized_hints(nodes, found, min_size)
    return {r: hints for r in requested}  # one list for every resource, as each gets the same hints


@lru_cache(maxsize=256)
def _could_hold(
    nodes: tuple[int, ...], capacity: tuple[tuple[str, tuple[int, ...]], ...], wanted: tuple[tuple[str, int], ...]
) -> tuple[list[int], int]:
    """Masks (in IterateBitMasks order) whose allocatable bytes could hold the request, and the
    fewest nodes among them. Allocatable never changes after start, so this is cached per request."""
    totals = {r: subset_sums(nodes, dict(zip(nodes, values, strict=True))) for r, values in capacity}
    could = _holding(totals, list(wanted), {})
    candidates = list(filter(could.__contains__, iterate_masks(nodes)))
    return candidates, candidates[0].bit_count() if candidates else len(nodes)  # the first is the narrowest


def _holding(
    sums: Mapping[str, SubsetSums],
    wanted: Sequence[tuple[str, int]],
    extra: Mapping[int, Mapping[str, int]],
) -> set[int]:
    """Masks whose sums (plus ``extra`` bytes for that mask) reach every requested size."""
    out: set[int] | None = None
    for resource, size in wanted:
        by_mask = sums[resource]
        ok = masks_reaching(by_mask, size)
        ok |= {m for m, e in extra.items() if has_mask(by_mask, m) and by_mask[m] + e.get(resource, 0) >= size}
        out = ok if out is None else out & ok
    return out or set()


_ZERO = ModelMemoryTable(0, 0, 0)

#: Memory blocks by (NUMA nodes, size, type): they are immutable, and a fleet's containers hold the
#: same few, so Allocate shares them instead of building one per container.
_BLOCKS: Memo[ModelMemoryBlock] = Memo(1 << 16)


def _block(numa: tuple[int, ...], size: int, resource: str) -> ModelMemoryBlock:
    key = (numa, size, resource)
    block = _BLOCKS.get(key)
    if block is None:
        block = _BLOCKS.put(key, ModelMemoryBlock(numa, size, resource))
    return block


#: ``calculate_hints`` answers by state, request and reusable memory, for every node in the process.
_HINT_MEMO: Memo[dict[str, list[TopologyHint]]] = Memo(1 << 18)


def _block_order(resource: str) -> tuple[bool, str]:
    """Allocate's order of a container's blocks: memory first, then hugepages by name."""
    return resource != MEMORY, resource


def _best(hints: list[TopologyHint]) -> TopologyHint:
    """The preferred, then narrowest hint (the kubelet's ``IsNarrowerThan`` inline: 65,535 hints on 16 NUMA nodes)."""
    best = TopologyHint(None, False)
    best_mask, best_preferred = best
    for hint in hints:
        mask, preferred = hint
        if (
            best_mask is None
            or (preferred and not best_preferred)
            or (
                preferred == best_preferred
                and mask is not None  # a memory hint always has an affinity
                and (
                    mask < best_mask
                    if mask.bit_count() == best_mask.bit_count()
                    else mask.bit_count() < best_mask.bit_count()
                )
            )
        ):
            best, best_mask, best_preferred = hint, mask, preferred
    return best


def system_reserved_memory_error(reserved: Mapping[int, Mapping[str, int]]) -> str | None:
    """``NewPolicyStatic``: the reservedMemory entries must reserve some memory (bytes per NUMA node)."""
    if sum(r.get(MEMORY, 0) for r in reserved.values()) <= 0:
        return "[memorymanager] you should specify the system reserved memory"
    return None


class MemoryStaticPolicy:
    """``NewPolicyStatic`` + ``GetTopologyHints``/``GetPodTopologyHints``/``Allocate``."""

    name = "memorymanager"

    def __init__(
        self,
        numa_memory: Mapping[int, int],
        hugepages: Mapping[int, Mapping[str, int]] | None = None,
        reserved: Mapping[int, Mapping[str, int]] | None = None,
        *,
        skips_pod_level: bool | None = True,
    ) -> None:
        """``numa_memory``: bytes per NUMA node; ``hugepages``: node -> {"hugepages-2Mi": total bytes};
        ``reserved``: node -> {resource: bytes} (the kubelet's reservedMemory); ``skips_pod_level``: the
        minor's treatment of pods with pod-level resources (``KubeletProfile.skips_pod_level_resources``)."""
        self.skips_pod_level = skips_pod_level
        reserved = reserved or {}
        error = system_reserved_memory_error(reserved)
        if error is not None:
            raise ConfigRejected(error)
        self.state: dict[int, NUMANodeState] = {}
        for node, total in numa_memory.items():
            tables: dict[str, ModelMemoryTable] = {}
            huge_total = 0
            for res, size in (hugepages or {}).get(node, {}).items():
                if not res.startswith("hugepages-"):
                    raise InputError(f"NUMA node {node}: hugepage resource names start with 'hugepages-', got {res!r}")
                sys_res = reserved.get(node, {}).get(res, 0)
                tables[res] = ModelMemoryTable(size, sys_res, size - sys_res)
                huge_total += size
            sys_mem = reserved.get(node, {}).get(MEMORY, 0)
            tables[MEMORY] = ModelMemoryTable(total, sys_mem, total - sys_mem - huge_total)
            self.state[node] = NUMANodeState(tables, [node])
        self.blocks: dict[tuple[str, str], list[ModelMemoryBlock]] = {}
        #: pod-level blocks (PodLevelResourceManagers), released with the pod's last container
        self.pod_blocks: dict[str, list[ModelMemoryBlock]] = {}
        self.reusable: dict[str, dict[int, dict[str, int]]] = {}
        #: what ``_hints`` reads of ``state``, whole and per node, made again only for what
        #: ``_reserve`` or ``remove_container`` change (the only writers of the state)
        self._state_key: tuple[object, ...] | None = None
        self._node_keys: dict[int, tuple[object, ...]] = {}

    # ------------------------------------------------------------------ requests
    @staticmethod
    def requested(container: Container) -> dict[str, int]:
        return dict(MemoryStaticPolicy._requested(container))

    @staticmethod
    def _requested(container: Container) -> Mapping[str, int]:
        """``requested``, made once per container and shared (read only): hints and Allocate both ask."""
        out: dict[str, int] | None = container.__dict__.get("_memory_requested")
        if out is None:
            out = container.__dict__["_memory_requested"] = MemoryStaticPolicy._parse_requested(container)
        return out

    @staticmethod
    def _parse_requested(container: Container) -> dict[str, int]:
        out = {}
        for res, q in container.requests.items():
            if not is_memory_resource(res):
                continue
            whole = int(q)
            if q != whole:
                raise InputError(f"container {container.name!r}: {res} request {q} is not a whole number of bytes")
            out[res] = whole
        return out

    def pod_requested(self, pod: Pod) -> dict[str, int]:
        resources = {r for c in pod.containers for r in self._requested(c)}

        def request_of(resource: str) -> Callable[[Container], int | None]:
            return lambda c: self._requested(c).get(resource, 0)

        return {r: pod_level_request(pod, request_of(r)) for r in resources}

    # ------------------------------------------------------------------ hints
    def _eligible(self, pod: Pod) -> bool:
        if pod.qos() != GUARANTEED:
            return False
        if not pod.pod_level_resources_set:
            return True
        if self.skips_pod_level is None:
            raise pod_level_managers_unmodelled()
        return not self.skips_pod_level

    def _regenerate(
        self, blocks: list[ModelMemoryBlock], requested: Mapping[str, int]
    ) -> dict[str, list[TopologyHint]] | None:
        hints: dict[str, list[TopologyHint]] = {r: [] for r in requested}
        if len(blocks) != len(requested):
            return None
        for b in blocks:
            if b.type not in requested or b.size != requested[b.type]:
                return None
            hints[b.type].append(TopologyHint(mask_of(b.numa), True))
        return hints

    def get_topology_hints(self, pod: Pod, container: Container) -> dict[str, list[TopologyHint]] | None:
        if not self._eligible(pod):
            return None
        requested = self._requested(container)
        blocks = self.blocks.get((pod.uid, container.name))
        if blocks is not None:
            return self._regenerate(blocks, requested)
        return self._hints(requested, self.reusable.get(pod.uid, {}))

    def get_pod_topology_hints(self, pod: Pod) -> dict[str, list[TopologyHint]] | None:
        if not self._eligible(pod):
            return None
        requested = self.pod_requested(pod)
        for c in pod.all_containers():
            blocks = self.blocks.get((pod.uid, c.name))
            if blocks is not None:
                return self._regenerate(blocks, requested)
        return self._hints(requested, {})

    def _hints(
        self, requested: Mapping[str, int], reusable: Mapping[int, Mapping[str, int]]
    ) -> dict[str, list[TopologyHint]]:
        """``calculate_hints`` on the current state, remembered by everything it reads: the Topology
        Manager's hint request and the Allocate that follows it see the same state, and the nodes
        of a fleet pass through the same states; on 16 NUMA nodes each pass walks 65,535 masks."""
        nodes = self._state_key
        if nodes is None:
            known = self._node_keys
            parts = []
            for n, s in self.state.items():
                part = known.get(n)
                if part is None:
                    part = known[n] = (
                        n,
                        s.assignments > 0,
                        tuple(s.cells),
                        tuple([(r, t.allocatable, t.free) for r, t in s.memory.items()]),
                    )
                parts.append(part)
            nodes = self._state_key = tuple(parts)
        held = tuple([(m, tuple(v.items())) for m, v in reusable.items()]) if reusable else ()
        key = (nodes, tuple(requested.items()), held)
        hints = _HINT_MEMO.get(key)
        if hints is None:
            hints = calculate_hints(self.state, requested, reusable)
            _HINT_MEMO.put(key, hints, sum(map(len, hints.values())) + 1)
        return hints

    # ------------------------------------------------------------------ allocation
    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> list[ModelMemoryBlock]:
        if not self._eligible(pod):
            return []
        key = (pod.uid, container.name)
        if key in self.blocks:
            self._update_reusable(pod, container, self.blocks[key])
            return self.blocks[key]
        requested = self._requested(container)
        best = affinity
        if best.affinity is None:
            hints = self._hints(requested, self.reusable.get(pod.uid, {}))
            if not hints:
                raise _err("failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
            default = _best(hints.get(MEMORY, []))
            if not default.preferred and best.preferred:
                raise _err("failed to find the default preferred hint")
            best = default
        if not self._satisfies(best.affinity, requested):
            hints = self._hints(requested, self.reusable.get(pod.uid, {}))
            wanted = set(bits_of(best.affinity or 0))
            candidates = [h for h in hints.get(MEMORY, []) if wanted <= set(bits_of(h.affinity or 0))]
            if not candidates:
                raise _err("failed to find NUMA nodes to extend the current topology hint")
            extended = _best(candidates)
            if not extended.preferred and best.preferred:
                raise _err("failed to find the extended preferred hint")
            best = extended
        numa = node_ids(best.affinity or 0)
        if self._violates_groups(numa):
            raise _err("preferred hint violates NUMA node allocation")
        blocks = []
        reusable = self.reusable.get(pod.uid, {}).get(best.affinity or 0, {})
        for res in sorted(requested, key=_block_order) if len(requested) > 1 else requested:
            size = requested[res]
            blocks.append(_block(numa, size, res))
            reuse = reusable.get(res, 0)
            self._reserve(numa, res, 0 if reuse >= size else size - reuse)
        self._update_reusable(pod, container, blocks)
        self.blocks[key] = blocks
        if pod.init_containers:
            self._shrink_init_blocks(pod, container, blocks)
        return blocks

    def _satisfies(self, mask: int | None, requested: Mapping[str, int]) -> bool:
        if not requested:
            return True
        nodes = [self.state[n].memory for n in node_ids(mask or 0)]
        for resource, size in requested.items():
            if sum([node.get(resource, _ZERO).free for node in nodes]) < size:
                return False
        return True

    def _violates_groups(self, numa: tuple[int, ...]) -> bool:
        if len(numa) == 1:
            return False
        bits = list(numa)
        return any(
            self.state[n].assignments and (len(self.state[n].cells) == 1 or sorted(self.state[n].cells) != bits)
            for n in bits
        )

    def _reserve(self, bits: Sequence[int], resource: str, size: int) -> None:
        self._state_key = None
        for node in bits:
            self._node_keys.pop(node, None)
            st = self.state[node]
            st.assignments += 1
            st.cells = list(bits)
            if size == 0:
                continue
            table = st.memory.get(resource)
            if table is None or table.free <= 0:
                continue
            take = min(table.free, size)
            table.reserved += take
            table.free -= take
            size -= take

    def _update_reusable(self, pod: Pod, container: Container, blocks: list[ModelMemoryBlock]) -> None:
        if self.reusable and (len(self.reusable) > 1 or pod.uid not in self.reusable):  # only this pod's stays
            for uid in [u for u in self.reusable if u != pod.uid]:
                del self.reusable[uid]
        if pod.init_containers and any(c.name == container.name and not c.restartable for c in pod.init_containers):
            pool = self.reusable.setdefault(pod.uid, {})
            for b in blocks:
                per = pool.setdefault(mask_of(b.numa), {})
                per[b.type] = max(per.get(b.type, 0), b.size)
            return
        reusable = self.reusable.get(pod.uid)
        if not reusable:
            return
        for b in blocks:
            held = reusable.get(mask_of(b.numa))
            if held and held.get(b.type):
                held[b.type] = 0 if b.size >= held[b.type] else held[b.type] - b.size

    def _shrink_init_blocks(self, pod: Pod, container: Container, blocks: list[ModelMemoryBlock]) -> None:
        """Account reused init-container memory so the pod's blocks add up to what it really holds."""
        for block in blocks:
            remaining = block.size
            for init in pod.init_containers:
                if init.name == container.name or remaining == 0:
                    break
                if init.restartable:
                    continue
                init_blocks = self.blocks.get((pod.uid, init.name))
                if not init_blocks:
                    continue
                updated = []
                for ib in init_blocks:
                    if ib.size and ib.type == block.type and ib.numa == block.numa:
                        used = min(ib.size, remaining)
                        remaining -= used
                        ib = ModelMemoryBlock(ib.numa, ib.size - used, ib.type)
                    updated.append(ib)
                self.blocks[(pod.uid, init.name)] = updated

    # ------------------------------------------------------------------ restored state
    def start(
        self,
        machine: Mapping[int, MachineNode | None],
        entries: Mapping[str, Mapping[str, tuple[ModelMemoryBlock, ...] | None]],
        pod_entries: Mapping[str, tuple[ModelMemoryBlock, ...] | None] | None = None,
    ) -> None:
        """``Start``: ``validateState`` recomputes the machine state from this configuration's reservation
        and the stored assignments (pod-level blocks instead of a pod's containers' when restored) and
        refuses a stored one that differs; then the stored state is the policy's. Go walks its maps in
        random order: tmnb takes NUMA ids and resource names in order, pods and containers as stored."""
        pods = dict(pod_entries or {})
        if not machine:
            if entries:
                raise ConfigRejected("[memorymanager] machine state can not be empty when it has memory assignments")
            return
        expected = {
            node: _Expected(
                s.assignments,
                {r: [t.total, t.system_reserved, t.allocatable, t.reserved, t.free] for r, t in s.memory.items()},
                list(s.cells),
            )
            for node, s in self.state.items()
        }
        for pod, containers in entries.items():
            if pods.get(pod):
                self._expect(expected, pods[pod] or (), pod, "")
                continue
            for container, blocks in containers.items():
                self._expect(expected, blocks or (), pod, container)
        if not _same_machine(machine, expected):
            raise ConfigRejected("[memorymanager] the expected machine state is different from the real one")
        self.state = {}
        for node, stored in machine.items():
            assert stored is not None  # _same_machine dereferenced every node
            tables = {
                r: ModelMemoryTable(t.total, t.system_reserved, t.allocatable, t.reserved, t.free)
                for r, t in (stored.memory or {}).items()
                if t is not None
            }
            self.state[node] = NUMANodeState(tables, list(stored.cells or ()), stored.assignments)
        self.blocks = {
            (pod, container): list(blocks or ())
            for pod, containers in entries.items()
            for container, blocks in containers.items()
        }
        self.pod_blocks = {pod: list(blocks) for pod, blocks in pods.items() if blocks}
        self._state_key = None
        self._node_keys = {}

    @staticmethod
    def _expect(expected: dict[int, _Expected], blocks: Sequence[ModelMemoryBlock], pod: str, container: str) -> None:
        """``updateExpectedMachineState``."""
        for b in blocks:
            requested = b.size
            for node in b.numa:
                state = expected.get(node)
                if state is None:
                    raise ConfigRejected(
                        f"[memorymanager] (pod: {pod}, container: {container}) the memory assignment uses the NUMA "
                        "that does not exist"
                    )
                state.assignments += 1
                state.cells = list(b.numa)
                table = state.tables.get(b.type)
                if table is None:
                    raise ConfigRejected(
                        f"[memorymanager] (pod: {pod}, container: {container}) the memory assignment uses memory "
                        "resource that does not exist"
                    )
                if requested == 0 or table[4] <= 0:
                    continue
                if table[4] >= requested:
                    table[3] += requested
                    table[4] -= requested
                    requested = 0
                    continue
                requested -= table[4]
                table[3] += table[4]
                table[4] = 0

    def remove_container(self, pod_uid: str, container: str) -> None:
        if pod_uid in self.pod_blocks:
            if self.blocks.pop((pod_uid, container), None) is None:
                return
            if not any(uid == pod_uid for uid, _ in self.blocks):
                self._release(self.pod_blocks.pop(pod_uid))
            return
        self._release(self.blocks.pop((pod_uid, container), None))

    def _release(self, blocks: list[ModelMemoryBlock] | None) -> None:
        if blocks:
            self._state_key = None
        for b in blocks or ():
            released = b.size
            for node in b.numa:
                self._node_keys.pop(node, None)
                st = self.state[node]
                st.assignments -= 1
                if st.assignments == 0:
                    st.cells = [node]
                if released == 0:
                    continue
                table = st.memory.get(b.type)
                if table is None or table.reserved == 0:
                    continue
                give = min(table.reserved, released)
                table.free += give
                table.reserved -= give
                released -= give


@dataclass
class _Expected:
    """A node of the machine state ``validateState`` recomputes: tables as [total, system reserved,
    allocatable, reserved, free]."""

    assignments: int
    tables: dict[str, list[int]]
    cells: list[int]


def _same_machine(stored: Mapping[int, MachineNode | None], expected: Mapping[int, _Expected]) -> bool:
    """``areMachineStatesEqual(stored, expected)``: per node the assignments, the group, the tables'
    totals, and free and reserved summed over the group; a nil pointer on the way is the kubelet's panic."""
    if len(stored) != len(expected):
        return False

    def table(machine: str, node: int, resource: str) -> list[int]:
        if machine == "stored":
            state = stored.get(node)
            if state is None or state.memory is None or state.memory.get(resource) is None:
                raise KubeletPanic()
            t = state.memory[resource]
            assert t is not None
            return [t.total, t.system_reserved, t.allocatable, t.reserved, t.free]
        other = expected.get(node)
        if other is None or resource not in other.tables:
            raise KubeletPanic()
        return other.tables[resource]

    for node in sorted(stored):
        first = stored[node]
        second = expected.get(node)
        if second is None:
            return False
        if first is None:
            raise KubeletPanic()
        second_tables = second.tables
        if first.assignments != second.assignments or sorted(first.cells or ()) != sorted(second.cells):
            return False
        if len(first.memory or {}) != len(second_tables):
            return False
        for resource in sorted(first.memory or {}):
            if resource not in second_tables:
                return False
            one = table("stored", node, resource)
            two = second_tables[resource]
            if one[:3] != two[:3]:
                return False
            cells = first.cells or ()
            sums = [
                [sum(table(m, c, resource)[i] for c in cells) & _UINT64 for i in (4, 3)] for m in ("stored", "expected")
            ]
            if sums[0][0] != sums[1][0] or sums[0][1] != sums[1][1]:
                return False
    return True
