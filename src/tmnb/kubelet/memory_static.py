"""Memory manager ``Static`` policy: per-NUMA memory/hugepages state, hints and memory blocks.

Guaranteed pods only. NUMA nodes used together for one allocation form a "group" (``cells``);
a node in a multi-node group can no longer serve single-node allocations and vice versa. When
nothing fits, the hint map is *empty* (not an empty list), which the Topology Manager reads as
"no preference"; the pod then fails in Allocate with UnexpectedAdmissionError (facts §6.2).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.bitmask import bits_of, is_narrower, iterate_masks, mask_of
from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.hints import TopologyHint
from tmnb.kubelet.pod import GUARANTEED, Container, Pod, pod_level_request

MEMORY = "memory"


def is_memory_resource(name: str) -> bool:
    return name == MEMORY or name.startswith("hugepages-")


@dataclass
class ModelMemoryTable:
    """One NUMA node's bytes of one resource as the Static policy tracks them (the kubelet's
    ``state.MemoryTable``; the checkpoint file's parsed form is ``parse.state_files.MemoryTable``)."""

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


def _err(text: str) -> AdmissionError:
    return AdmissionError(f"[memorymanager] {text}")


def calculate_hints(
    state: Mapping[int, NUMANodeState], requested: Mapping[str, int], reusable: Mapping[int, Mapping[str, int]]
) -> dict[str, list[TopologyHint]]:
    """``calculateHints``: ``reusable`` maps a NUMA mask to this pod's reusable init-container memory.

    The kubelet sums each mask's tables afresh; here each mask's sums extend those of the mask
    without its lowest node (masks come smallest first), which keeps 16 NUMA nodes (65,535 masks)
    in tens of milliseconds without changing which masks qualify or their order."""
    nodes = sorted(state)
    masks = iterate_masks(nodes)
    wanted = list(requested.items())
    allocatable = {r: _subset_sums(masks, {n: _table(state, n, r).allocatable for n in nodes}) for r, _ in wanted}
    free = {r: _subset_sums(masks, {n: _table(state, n, r).free for n in nodes}) for r, _ in wanted}
    grouped = mask_of(n for n in nodes if len(state[n].cells) > 1)
    busy_alone = mask_of(n for n in nodes if state[n].assignments > 0 and len(state[n].cells) == 1)
    busy_groups = [
        (1 << n, mask_of(state[n].cells)) for n in nodes if state[n].assignments > 0 and len(state[n].cells) > 1
    ]
    min_size = len(nodes)
    found: list[int] = []
    for mask in masks:
        if any(allocatable[r][mask] < size for r, size in wanted):
            continue
        count = mask.bit_count()
        min_size = min(min_size, count)
        if count == 1:
            if mask & grouped:  # a node already in a multi-node group cannot serve alone
                continue
        elif mask & busy_alone or any(mask & bit and mask != group for bit, group in busy_groups):
            continue  # a node with allocations may only be used again with exactly its own group
        reuse = reusable.get(mask, {})
        if any(free[r][mask] + reuse.get(r, 0) < size for r, size in wanted):
            continue
        found.append(mask)
    if not found:
        return {}
    hints = [TopologyHint(m, m.bit_count() == min_size) for m in found]
    return {r: hints for r in requested}  # one list for every resource, as each gets the same hints


def _subset_sums(masks: Sequence[int], values: Mapping[int, int]) -> dict[int, int]:
    sums = {0: 0}
    for mask in masks:
        low = mask & -mask
        sums[mask] = sums[mask ^ low] + values[low.bit_length() - 1]
    return sums


_ZERO = ModelMemoryTable(0, 0, 0)


def _table(state: Mapping[int, NUMANodeState], node: int, resource: str) -> ModelMemoryTable:
    return state[node].memory.get(resource, _ZERO)


def _best(hints: list[TopologyHint]) -> TopologyHint:
    best = TopologyHint(None, False)
    for hint in hints:
        if (
            best.affinity is None
            or (hint.preferred and not best.preferred)
            or (hint.preferred == best.preferred and is_narrower(hint.affinity, best.affinity))  # type: ignore[arg-type]
        ):
            best = hint
    return best


class MemoryStaticPolicy:
    """``NewPolicyStatic`` + ``GetTopologyHints``/``GetPodTopologyHints``/``Allocate``."""

    name = "memorymanager"

    def __init__(
        self,
        numa_memory: Mapping[int, int],
        hugepages: Mapping[int, Mapping[str, int]] | None = None,
        reserved: Mapping[int, Mapping[str, int]] | None = None,
    ) -> None:
        """``numa_memory``: bytes per NUMA node; ``hugepages``: node -> {"hugepages-2Mi": total bytes};
        ``reserved``: node -> {resource: bytes} (the kubelet's reservedMemory)."""
        reserved = reserved or {}
        if sum(r.get(MEMORY, 0) for r in reserved.values()) <= 0:
            raise ConfigRejected("[memorymanager] you should specify the system reserved memory")
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
        self.reusable: dict[str, dict[int, dict[str, int]]] = {}

    # ------------------------------------------------------------------ requests
    @staticmethod
    def requested(container: Container) -> dict[str, int]:
        out = {}
        for res, q in container.requests.items():
            if not is_memory_resource(res):
                continue
            if q != int(q):
                raise InputError(f"container {container.name!r}: {res} request {q} is not a whole number of bytes")
            out[res] = int(q)
        return out

    def pod_requested(self, pod: Pod) -> dict[str, int]:
        resources = {r for c in pod.containers for r in self.requested(c)}

        def request_of(resource: str) -> Callable[[Container], int | None]:
            return lambda c: self.requested(c).get(resource, 0)

        return {r: pod_level_request(pod, request_of(r)) for r in resources}

    # ------------------------------------------------------------------ hints
    def _eligible(self, pod: Pod) -> bool:
        return pod.qos() == GUARANTEED and not pod.has_pod_level_resources

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
        requested = self.requested(container)
        blocks = self.blocks.get((pod.uid, container.name))
        if blocks is not None:
            return self._regenerate(blocks, requested)
        return calculate_hints(self.state, requested, self.reusable.get(pod.uid, {}))

    def get_pod_topology_hints(self, pod: Pod) -> dict[str, list[TopologyHint]] | None:
        if not self._eligible(pod):
            return None
        requested = self.pod_requested(pod)
        for c in pod.all_containers():
            blocks = self.blocks.get((pod.uid, c.name))
            if blocks is not None:
                return self._regenerate(blocks, requested)
        return calculate_hints(self.state, requested, {})

    # ------------------------------------------------------------------ allocation
    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> list[ModelMemoryBlock]:
        if not self._eligible(pod):
            return []
        key = (pod.uid, container.name)
        if key in self.blocks:
            self._update_reusable(pod, container, self.blocks[key])
            return self.blocks[key]
        requested = self.requested(container)
        best = affinity
        if best.affinity is None:
            hints = calculate_hints(self.state, requested, self.reusable.get(pod.uid, {}))
            if not hints:
                raise _err("failed to get the default NUMA affinity, no NUMA nodes with enough memory is available")
            default = _best(hints.get(MEMORY, []))
            if not default.preferred and best.preferred:
                raise _err("failed to find the default preferred hint")
            best = default
        if not self._satisfies(best.affinity, requested):
            hints = calculate_hints(self.state, requested, self.reusable.get(pod.uid, {}))
            wanted = set(bits_of(best.affinity or 0))
            candidates = [h for h in hints.get(MEMORY, []) if wanted <= set(bits_of(h.affinity or 0))]
            if not candidates:
                raise _err("failed to find NUMA nodes to extend the current topology hint")
            extended = _best(candidates)
            if not extended.preferred and best.preferred:
                raise _err("failed to find the extended preferred hint")
            best = extended
        if self._violates_groups(best.affinity or 0):
            raise _err("preferred hint violates NUMA node allocation")
        bits = bits_of(best.affinity or 0)
        blocks = []
        for res in sorted(requested, key=lambda r: (r != MEMORY, r)):
            size = requested[res]
            blocks.append(ModelMemoryBlock(tuple(bits), size, res))
            reuse = self.reusable.get(pod.uid, {}).get(best.affinity or 0, {}).get(res, 0)
            self._reserve(bits, res, 0 if reuse >= size else size - reuse)
        self._update_reusable(pod, container, blocks)
        self.blocks[key] = blocks
        self._shrink_init_blocks(pod, container, blocks)
        return blocks

    def _satisfies(self, mask: int | None, requested: Mapping[str, int]) -> bool:
        bits = bits_of(mask or 0)
        return all(sum(_table(self.state, n, r).free for n in bits) >= size for r, size in requested.items())

    def _violates_groups(self, mask: int) -> bool:
        bits = bits_of(mask)
        if len(bits) == 1:
            return False
        return any(
            self.state[n].assignments and (len(self.state[n].cells) == 1 or sorted(self.state[n].cells) != bits)
            for n in bits
        )

    def _reserve(self, bits: list[int], resource: str, size: int) -> None:
        for node in bits:
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
        for uid in [u for u in self.reusable if u != pod.uid]:
            del self.reusable[uid]
        regular_init = any(c.name == container.name and not c.restartable for c in pod.init_containers)
        if regular_init:
            pool = self.reusable.setdefault(pod.uid, {})
            for b in blocks:
                per = pool.setdefault(mask_of(b.numa), {})
                per[b.type] = max(per.get(b.type, 0), b.size)
            return
        pool = self.reusable.get(pod.uid, {})
        for b in blocks:
            held = pool.get(mask_of(b.numa))
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

    def remove_container(self, pod_uid: str, container: str) -> None:
        blocks = self.blocks.pop((pod_uid, container), None)
        for b in blocks or ():
            released = b.size
            for node in b.numa:
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
