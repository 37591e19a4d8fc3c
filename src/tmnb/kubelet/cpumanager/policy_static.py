"""CPU manager ``static`` policy: hint provider and exclusive CPU allocation, as a stateful model.

State is the kubelet's: the shared pool ("default cpuset"), exclusive assignments per
(pod UID, container) and the CPUs of this pod's finished init containers that later containers
may reuse. All sets are int masks (see ``topology``).

Ports pkg/kubelet/cm/cpumanager/policy_static.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from functools import lru_cache
from itertools import compress

from tmnb.errors import ConfigRejected
from tmnb.kubelet.cpumanager.cpu_assignment import take_distributed, take_packed, take_packed_with
from tmnb.kubelet.cpumanager.topology import CPUTopology, to_cpuset
from tmnb.kubelet.errors import AdmissionError, CPUAllocationError, SMTAlignmentError, pod_level_managers_unmodelled
from tmnb.kubelet.memo import ENTRY_WEIGHT
from tmnb.kubelet.names import CPU_STATIC, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.options import CPUManagerOptions
from tmnb.kubelet.pod import GUARANTEED, Container, Pod, milli_value, pod_level_request, value
from tmnb.kubelet.topologymanager.bitmask import bits_of, iterate_masks, subset_sums
from tmnb.kubelet.topologymanager.hints import TopologyHint, hint_objects, sized_hints


def generate_cpu_hints(
    topo: CPUTopology, options: CPUManagerOptions, available: int, reusable: int, request: int
) -> list[TopologyHint]:
    """``generateCPUTopologyHints``: one hint per NUMA mask (IterateBitMasks order) that can hold the
    request; preferred when as narrow as the narrowest mask whose *total* CPUs could hold it.
    Remembered per topology: a fleet of one machine shape asks the same questions. Without reusable
    CPUs the hints read only how many free CPUs each NUMA node has, so that is the key: nodes whose
    free masks differ but whose counts agree share the answer."""
    if reusable:
        key: tuple[object, ...] = (available, reusable, request, options.align_by_socket)
    else:
        key = (topo.free_per_numa(available), request, options.align_by_socket)
    hints = topo.hint_memo.get(key)
    if hints is None:
        hints = _cpu_hints(topo, options, available, reusable, request)
        topo.hint_memo.put(key, hints, len(hints) + ENTRY_WEIGHT)
    return list(hints)


def _cpu_hints(
    topo: CPUTopology, options: CPUManagerOptions, available: int, reusable: int, request: int
) -> tuple[TopologyHint, ...]:
    nodes = topo.numa_nodes()
    reusable_numa = 0
    for cpu in bits_of(reusable):
        info = topo.info.get(cpu)
        reusable_numa |= 1 << (info.numa if info else 0)
    stray = (available & ~topo.all_mask).bit_count()  # CPUs unknown to the topology count as NUMA node 0
    masks = iterate_masks(nodes)
    free = subset_sums(nodes, {n: (available & topo.numa_mask[n]).bit_count() for n in nodes})
    min_size = topo.narrowest_mask_size(request)
    need = request - reusable.bit_count()
    if reusable_numa or stray:
        found = [m for m in masks if not reusable_numa & ~m and free[m] + (stray if m & 1 else 0) >= need]
    else:  # the same test without the two terms that are zero, in C: free[m] >= need for m in masks
        found = list(compress(masks, map(need.__le__, map(free.__getitem__, masks))))
    if not options.align_by_socket:
        return tuple(sized_hints(tuple(nodes), found, min_size))
    preferred, other = hint_objects(tuple(nodes))
    return tuple(
        preferred[m] if m.bit_count() == min_size or _socket_aligned(topo, m, min_size) else other[m] for m in found
    )


def _socket_aligned(topo: CPUTopology, mask: int, min_size: int) -> bool:
    per_socket = topo.num_numa_nodes // topo.num_sockets if topo.num_sockets else 0
    if per_socket == 0:
        return False
    min_sockets = (min_size + per_socket - 1) // per_socket
    return len(topo.sockets_in_numa_nodes(bits_of(mask))) == min_sockets


@lru_cache(maxsize=1024)
def _whole_cpus(q: Decimal) -> int:
    """The request as a CPU count when it is a whole number (``Value()*1000 == MilliValue()``), else 0."""
    whole = value(q)
    return whole if whole * 1000 == milli_value(q) else 0


def align_by_socket_policy_error(topology_policy: str) -> str | None:
    """``NewStaticPolicy`` with align-by-socket: refused under the single-numa-node policy (its typo kept)."""
    if topology_policy == SINGLE_NUMA_NODE:
        return "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option"
    return None


def align_by_socket_hardware_error(sockets: int, numa_nodes: int) -> str | None:
    """``NewStaticPolicy`` with align-by-socket: refused on machines with more sockets than NUMA nodes."""
    if sockets > numa_nodes:
        return "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA"
    return None


class CPUStaticPolicy:
    """``NewStaticPolicy`` + ``Start`` + ``GetTopologyHints``/``GetPodTopologyHints``/``Allocate``."""

    name = CPU_STATIC

    def __init__(
        self,
        topology: CPUTopology,
        *,
        options: CPUManagerOptions | None = None,
        num_reserved_cpus: int | None = None,
        reserved_cpus: int | None = None,
        topology_policy: str = TOPOLOGY_NONE,
        skips_pod_level: bool | None = False,
    ) -> None:
        """``skips_pod_level``: the minor's treatment of pods with pod-level resources
        (``KubeletProfile.skips_pod_level_resources``)."""
        self.topology = topology
        self.skips_pod_level = skips_pod_level
        self.options = options or CPUManagerOptions()
        self.cpu_group_size = topology.cpus_per_core()
        opts = self.options
        #: no option changes the packed walk: ``_take`` is ``take_packed``
        self._plain_packed = not (
            opts.distribute_cpus_across_numa
            or opts.distribute_cpus_across_cores
            or opts.prefer_align_cpus_by_uncorecache
        )
        if opts.align_by_socket:
            error = align_by_socket_policy_error(topology_policy) or align_by_socket_hardware_error(
                topology.num_sockets, topology.num_numa_nodes
            )
            if error is not None:
                raise ConfigRejected(error)
        if reserved_cpus:
            reserved = reserved_cpus
            wanted = reserved.bit_count() if num_reserved_cpus is None else num_reserved_cpus
        else:
            wanted = num_reserved_cpus or 0
            try:
                reserved = self._take(topology.all_mask, wanted)
            except CPUAllocationError:
                reserved = 0
        if reserved.bit_count() != wanted:
            raise ConfigRejected(
                f"[cpumanager] unable to reserve the required amount of CPUs (size of {to_cpuset(reserved)} "
                f"did not equal {wanted})"
            )
        unknown = [c for c in bits_of(reserved) if c not in topology.info]
        if unknown:
            raise ConfigRejected(
                "[cpumanager] unable to build the reserved physical CPUs from the reserved set: "
                f"unknown CPU ID: {unknown[0]}"
            )
        self.reserved = reserved
        self.reserved_physical = topology.siblings(reserved)
        all_cpus = topology.all_mask & ~reserved if opts.strict_cpu_reservation else topology.all_mask
        self.default = all_cpus
        self.assignments: dict[tuple[str, str], int] = {}
        #: pod-level CPU sets (PodLevelResourceManagers), released with the pod's last container
        self.pod_assignments: dict[str, int] = {}
        self.cpus_to_reuse: dict[str, int] = {}

    # ------------------------------------------------------------------ state
    def start(
        self,
        assignments: Mapping[tuple[str, str], int],
        default: int | None = None,
        *,
        pods_in_state: int | None = None,
        pod_assignments: Mapping[str, int] | None = None,
        counts_reserved: bool = False,
    ) -> None:
        """``Start``: ``validateState`` on a restored state, which then becomes the policy's. ``default``
        None stands for the shared pool the kubelet would have kept beside ``assignments``;
        ``pods_in_state`` counts the checkpoint's pods (one with no containers counts);
        ``pod_assignments`` are the pod-level sets PodLevelResourceManagers restores;
        ``counts_reserved``: the minor compares the known CPUs with every CPU even under
        strict-cpu-reservation (``KubeletProfile.state_check_counts_reserved``)."""
        all_cpus = self.topology.all_mask
        if self.options.strict_cpu_reservation:
            all_cpus &= ~self.reserved
        used = 0
        for cpus in assignments.values():
            used |= cpus
        pods = dict(pod_assignments or {})
        if default is None:
            default = all_cpus & ~used
        if not default:
            if (len(assignments) if pods_in_state is None else pods_in_state) != 0:
                raise ConfigRejected("default cpuset cannot be empty")
            self.default, self.assignments, self.pod_assignments = all_cpus, {}, pods
            return
        if self.options.strict_cpu_reservation:
            if self.reserved & default:
                raise ConfigRejected(
                    f'some of strictly reserved cpus: "{to_cpuset(self.reserved & default)}" are present in '
                    f'defaultCpuSet: "{to_cpuset(default)}"'
                )
        elif self.reserved & default != self.reserved:
            raise ConfigRejected(
                f'not all reserved cpus: "{to_cpuset(self.reserved)}" are present in defaultCpuSet: '
                f'"{to_cpuset(default)}"'
            )
        for (pod, container), cpus in assignments.items():
            if cpus & default:
                raise ConfigRejected(
                    f'pod: {pod}, container: {container} cpuset: "{to_cpuset(cpus)}" overlaps with default '
                    f'cpuset "{to_cpuset(default)}"'
                )
        known = default | used
        for cpus in pods.values():
            known |= cpus
        available = self.topology.all_mask if counts_reserved else all_cpus
        if known != available:
            raise ConfigRejected(
                f'current set of available CPUs "{to_cpuset(available)}" doesn\'t match with CPUs in state '
                f'"{to_cpuset(known)}"'
            )
        self.default = default
        self.assignments = dict(assignments)
        self.pod_assignments = pods

    def available(self) -> int:
        return self.default & ~self.reserved

    # ------------------------------------------------------------------ requests
    def guaranteed_cpus(self, pod: Pod, container: Container) -> int:
        if pod.qos() != GUARANTEED:
            return 0
        q = container.requests.get("cpu")
        return 0 if q is None else _whole_cpus(q)

    def _leaves_alone(self, pod: Pod) -> bool:
        """1.34+: a pod with pod-level resources gets no hints and no exclusive CPUs (checked right after
        the request count, as the static policy does)."""
        if not pod.pod_level_resources_set:
            return False
        if self.skips_pod_level is None:
            raise pod_level_managers_unmodelled()
        return self.skips_pod_level

    def pod_guaranteed_cpus(self, pod: Pod) -> int:
        return pod_level_request(pod, lambda c: self.guaranteed_cpus(pod, c) if "cpu" in c.requests else None)

    # ------------------------------------------------------------------ hints
    def generate_hints(self, available: int, reusable: int, request: int) -> list[TopologyHint]:
        return generate_cpu_hints(self.topology, self.options, available, reusable, request)

    def get_topology_hints(self, pod: Pod, container: Container) -> dict[str, list[TopologyHint]] | None:
        requested = self.guaranteed_cpus(pod, container)
        if requested == 0 or self._leaves_alone(pod):
            return None
        allocated = self.assignments.get((pod.uid, container.name))
        if allocated is not None:
            if allocated.bit_count() != requested:
                return {"cpu": []}
            return {"cpu": self.generate_hints(allocated, 0, requested)}
        reusable = self.cpus_to_reuse.get(pod.uid, 0)
        return {"cpu": self.generate_hints(self.available(), reusable, requested)}

    def get_pod_topology_hints(self, pod: Pod) -> dict[str, list[TopologyHint]] | None:
        requested = self.pod_guaranteed_cpus(pod)
        if requested == 0 or self._leaves_alone(pod):
            return None
        assigned = 0
        for c in pod.all_containers():
            allocated = self.assignments.get((pod.uid, c.name))
            if allocated is not None:
                if allocated.bit_count() != self.guaranteed_cpus(pod, c):
                    return {"cpu": []}
                assigned |= allocated
        if assigned.bit_count() == requested:
            return {"cpu": self.generate_hints(assigned, 0, requested)}
        reusable = self.cpus_to_reuse.get(pod.uid, 0) | assigned
        return {"cpu": self.generate_hints(self.available(), reusable, requested)}

    # ------------------------------------------------------------------ allocation
    def _take(self, available: int, count: int) -> int:
        """``takeByTopology``: distributed over NUMA nodes, else packed with the options' CPU sorting
        strategy (spread for distribute-cpus-across-cores) and uncore cache preference."""
        if self._plain_packed:
            return take_packed(self.topology, available, count)
        opts = self.options
        if opts.distribute_cpus_across_numa:
            group = self.cpu_group_size if opts.full_pcpus_only else 1
            return take_distributed(self.topology, available, count, group, spread=opts.distribute_cpus_across_cores)
        return take_packed_with(
            self.topology,
            available,
            count,
            spread=opts.distribute_cpus_across_cores,
            uncore=opts.prefer_align_cpus_by_uncorecache,
        )

    def _update_reuse(self, pod: Pod, container: Container, cpus: int) -> None:
        reuse = self.cpus_to_reuse
        if len(reuse) != 1 or pod.uid not in reuse:  # only this pod's entry stays
            for uid in [u for u in reuse if u != pod.uid]:
                del reuse[uid]
        current = reuse.setdefault(pod.uid, 0)
        for init in pod.init_containers:
            if init.name == container.name:
                if not init.restartable:
                    self.cpus_to_reuse[pod.uid] = current | cpus
                    return
                break
        self.cpus_to_reuse[pod.uid] = current & ~cpus

    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> int:
        """Pin the container's CPUs (0 = shared pool); raise AdmissionError as the kubelet fails."""
        count = self.guaranteed_cpus(pod, container)
        if count == 0 or self._leaves_alone(pod):
            return 0
        if self.options.full_pcpus_only:
            if count % self.cpu_group_size:
                raise SMTAlignmentError(count, self.cpu_group_size)
            physical = (self.default & ~self.reserved_physical).bit_count()
            if count > physical:
                raise SMTAlignmentError(count, self.cpu_group_size, physical)
        key = (pod.uid, container.name)
        if key in self.assignments:
            self._update_reuse(pod, container, self.assignments[key])
            return self.assignments[key]
        allocatable = self.available() | self.cpus_to_reuse.get(pod.uid, 0)
        result = 0
        try:
            if affinity.affinity is not None:
                aligned = self._aligned(affinity.affinity, allocatable)
                result = self._take(aligned, min(count, aligned.bit_count()))
            remaining = count - result.bit_count()
            if remaining:  # nothing left: _take would hand back no CPUs (its option checks already ran)
                result |= self._take(allocatable & ~result, remaining)
        except CPUAllocationError as err:
            raise AdmissionError(str(err)) from None
        self.default &= ~result
        self.assignments[key] = result
        self._update_reuse(pod, container, result)
        return result

    def _aligned(self, numa_mask: int, allocatable: int) -> int:
        topo = self.topology
        if self.options.align_by_socket:
            out = 0
            for socket in topo.sockets_in_numa_nodes(bits_of(numa_mask)):
                out |= allocatable & topo.socket_mask[socket]
            return out
        return allocatable & topo.cpus_in_numa_mask(numa_mask)

    def remove_container(self, pod_uid: str, container: str) -> None:
        """``RemoveContainer``: release CPUs not shared with a sibling container; a pod-level set goes
        back to the pool with the pod's last container."""
        cpus = self.assignments.pop((pod_uid, container), None)
        if cpus is None:
            return
        in_use = 0
        siblings = False
        for (uid, _), other in self.assignments.items():
            if uid == pod_uid:
                in_use |= other
                siblings = True
        if pod_uid in self.pod_assignments:
            if not siblings:
                self.default |= self.pod_assignments.pop(pod_uid)
            return
        self.default |= cpus & ~in_use
