"""Memory manager ``Static`` policy: hints and memory blocks for Guaranteed pods, over the per-NUMA
state of ``state``.

NUMA nodes used together for one allocation form a "group" (``cells``); a node in a multi-node
group can no longer serve single-node allocations and vice versa. Which masks can hold a request
is ``hints``; a restored state is checked by ``validate`` before it becomes the policy's.

Ports ``NewPolicyStatic``, ``GetTopologyHints``, ``GetPodTopologyHints``, ``Allocate``,
``RemoveContainer`` and ``Start`` of pkg/kubelet/cm/memorymanager/policy_static.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.errors import AdmissionError, pod_level_managers_unmodelled
from tmnb.kubelet.memo import Memo
from tmnb.kubelet.memorymanager.hints import best_hint, calculate_hints
from tmnb.kubelet.memorymanager.state import (
    MEMORY,
    NO_MEMORY,
    MachineNode,
    ModelMemoryBlock,
    ModelMemoryTable,
    NUMANodeState,
    is_memory_resource,
)
from tmnb.kubelet.memorymanager.validate import validate_state
from tmnb.kubelet.pod import GUARANTEED, Container, Pod, pod_level_request
from tmnb.kubelet.topologymanager.bitmask import bits_of, mask_of, node_ids
from tmnb.kubelet.topologymanager.hints import TopologyHint


def _err(text: str) -> AdmissionError:
    return AdmissionError(f"[memorymanager] {text}")


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
            default = best_hint(hints.get(MEMORY, []))
            if not default.preferred and best.preferred:
                raise _err("failed to find the default preferred hint")
            best = default
        if not self._satisfies(best.affinity, requested):
            hints = self._hints(requested, self.reusable.get(pod.uid, {}))
            wanted = set(bits_of(best.affinity or 0))
            candidates = [h for h in hints.get(MEMORY, []) if wanted <= set(bits_of(h.affinity or 0))]
            if not candidates:
                raise _err("failed to find NUMA nodes to extend the current topology hint")
            extended = best_hint(candidates)
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
            if sum([node.get(resource, NO_MEMORY).free for node in nodes]) < size:
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
        validate_state(self.state, machine, entries, pods)
        if not machine:
            return  # nothing stored: the fresh state stays
        self.state = {}
        for node, stored in machine.items():
            assert stored is not None  # validate_state dereferenced every node
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
