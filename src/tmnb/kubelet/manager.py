"""The resource managers' start-up checks (the kubelet's ``NewContainerManager``: the Topology
Manager's ``NewManager``, then the CPU and memory managers'), the Node Allocatable check of their
start, and what the Topology Manager runs with.

Each check is a small function returning the kubelet's text, or None when it passes: the model's
start (``new_topology_manager`` and ``NodeSimulator``) raises it, and ``kubelet.checks`` runs each
one on its own for the settings validator, so every text exists once.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.memory_static import is_memory_resource
from tmnb.kubelet.merge import NUMAInfo
from tmnb.kubelet.names import CPU_POLICIES, MEMORY_POLICIES, SCOPE_NONE, TOPOLOGY_NONE, TOPOLOGY_SCOPES
from tmnb.kubelet.options import TopologyManagerOptions, parse_topology_manager_options
from tmnb.kubelet.policy import NonePolicy, TopologyPolicy, policy_for
from tmnb.kubelet.profiles import KubeletProfile

DistanceRows = Sequence[Sequence[int] | None] | Mapping[int, Sequence[int] | None]


@dataclass(frozen=True)
class TopologyManagerConfig:
    """What a successfully started Topology Manager runs with; scope ``none`` for policy none."""

    policy: TopologyPolicy
    scope: str


def _distance_rows(nodes: Sequence[int], distances: DistanceRows | None) -> dict[int, Sequence[int] | None]:
    if distances is None:
        return {}
    if isinstance(distances, Mapping):
        return {node: distances.get(node) for node in nodes}
    if not isinstance(distances, Sequence):
        raise InputError("distances must be null or a list of rows indexed by node id", where="distances")
    return {node: distances[node] if node < len(distances) else None for node in nodes}


def new_topology_manager(
    policy: str,
    scope: str,
    options: Mapping[str, str],
    numa_nodes: Sequence[int],
    distances: DistanceRows | None = None,
    *,
    kubelet: KubeletProfile | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> TopologyManagerConfig:
    """Start the manager as the kubelet does, raising ``ConfigRejected`` with its text where it would
    refuse to start. Order matters: policy ``none`` short-circuits (options never parsed, no NUMA
    limit), then options, NUMA distances, the node-count limit, policy name, scope name."""
    nodes = tuple(numa_nodes)
    if policy == TOPOLOGY_NONE:
        return TopologyManagerConfig(NonePolicy(NUMAInfo(nodes)), SCOPE_NONE)
    opts = parse_topology_manager_options(options, kubelet=kubelet, feature_gates=feature_gates)
    rows = _distance_rows(nodes, distances)
    if opts.prefer_closest_numa:
        _raise(numa_distances_error(nodes, rows) or sparse_numa_panic(nodes, rows))
    known = {n: r for n, r in rows.items() if r is not None}
    numa = NUMAInfo(nodes, known if opts.prefer_closest_numa else None)
    _raise(numa_limit_error(len(nodes), opts))
    chosen = policy_for(policy, numa, opts)
    if scope not in TOPOLOGY_SCOPES:
        raise ConfigRejected(f'unknown scope: "{scope}"')
    return TopologyManagerConfig(chosen, scope)


def _raise(error: str | None) -> None:
    if error is not None:
        raise ConfigRejected(error)


# ---------------------------------------------------------------------------------------------
# The Topology Manager (policy other than none; the policy and scope names are validated before)


def numa_distances_error(nodes: Sequence[int], rows: Mapping[int, Sequence[int] | None]) -> str | None:
    """prefer-closest-numa-nodes: cadvisor must give every NUMA node's distances."""
    if any(rows.get(node) is None for node in nodes):
        return "cannot discover NUMA topology: error getting NUMA distances from cadvisor"
    return None


def sparse_numa_panic(nodes: Sequence[int], rows: Mapping[int, Sequence[int] | None]) -> str | None:
    """tmnb's words for a panic (the kubelet prints a Go stack, not a message). The kubelet follows
    its own reading here, odd as it is: NUMADistances.CalculateAverageFor indexes each sysfs row (one
    entry per *online* node, in id order) by node id, d[node1][node2]. With sparse ids (nodes 0 and
    2) node 2 indexes past a two-entry row, and Go panics at the first admission that weighs a mask
    holding it; ids in range but sparse read the wrong node's distance, which
    NUMAInfo.average_distance reproduces."""
    top = max(nodes, default=0)
    short = [node for node in nodes if len(rows.get(node) or ()) <= top]
    if short:
        return (
            f"the kubelet would panic (runtime error: index out of range [{top}] with length "
            f"{len(rows.get(short[0]) or ())}) in CalculateAverageFor: prefer-closest-numa-nodes indexes the sysfs "
            f"distance row by node id, and NUMA node ids {list(nodes)} are sparse"
        )
    return None


def numa_limit_error(numa_nodes: int, opts: TopologyManagerOptions) -> str | None:
    """``NewManager``'s NUMA node count limit (8 unless max-allowable-numa-nodes raises it)."""
    if numa_nodes > opts.max_allowable_numa_nodes:
        return f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes"
    return None


# ---------------------------------------------------------------------------------------------
# The CPU and memory managers (cpumanager.NewManager, memorymanager.NewManager)


def unknown_policy(name: str) -> str:
    """Both managers' ``default:`` branch (Go ``\"%s\"``, not ``%q``)."""
    return f'unknown policy: "{name}"'


def cpu_policy_error(policy: str) -> str | None:
    return None if policy in CPU_POLICIES else unknown_policy(policy)


def memory_policy_error(policy: str) -> str | None:
    return None if policy in MEMORY_POLICIES else unknown_policy(policy)


def none_policy_options_error(options: Mapping[str, str]) -> str | None:
    """``NewNonePolicy`` refuses any option (the option-map gate is GA and locked in every supported
    minor, so ``run()`` checks none), wrapped as ``NewManager`` wraps it."""
    if not options:
        return None
    return f"new none policy error: None policy: received unsupported options={gostr.format_string_map(options)}"


#: cpumanager.NewManager without a CPU reservation: ``GetNodeAllocatableReservation`` leaves zero
#: quantities out, so the cpu key is missing and its first check fails, not the "> 0" one.
NO_CPU_RESERVATION = "[cpumanager] unable to determine reserved CPU resources for static policy"


def cpu_reservation_error(reserved_cpus: int) -> str | None:
    return NO_CPU_RESERVATION if reserved_cpus <= 0 else None


def static_policy_error(text: str) -> str:
    """``NewStaticPolicy``'s error (options, align-by-socket, the reservation) as ``NewManager`` wraps it."""
    return f"new static policy error: {text}"


def reserved_memory_numa_error(reserved_numa_nodes: Collection[int], numa_nodes: Collection[int]) -> str | None:
    """``getTotalMemoryTypeReserved``: every reservedMemory entry must name a NUMA node of the machine."""
    for node in reserved_numa_nodes:
        if node not in numa_nodes:
            return (
                f"the reserved memory configuration references a NUMA node {node} that does not exist on this machine"
            )
    return None


def reserved_memory_sum_error(
    reserved_memory: Mapping[int, Mapping[str, Any]], reservation: Mapping[str, GoQuantity]
) -> str | None:
    """``validateReservedMemory``: per memory type, the NUMA reservations must add up to the Node
    Allocatable reservation (kube + system + hard eviction). Go walks a map here, so with several
    mismatches its choice is random; memory, then hugepages by name, is reported first."""
    totals: dict[str, GoQuantity] = {}
    for resources in reserved_memory.values():
        for name, text in resources.items():
            q = GoQuantity.parse(str(text))
            totals[name] = q.add(totals[name]) if name in totals else q
    names = set(totals) | {n for n in reservation if is_memory_resource(n)}
    for name in sorted(names, key=lambda n: (n != "memory", n)):
        expected = GoQuantity.of(0).add(reservation[name]) if name in reservation else GoQuantity.of(0)
        got = GoQuantity.of(0).add(totals[name]) if name in totals else GoQuantity.of(0)
        if got.amount != expected.amount:
            return (
                f"the total amount {gostr.quote(str(got))} of type {gostr.quote(name)} is not equal to the value "
                f"{gostr.quote(str(expected))} determined by Node Allocatable feature"
            )
    return None


def node_allocatable_error(capacity: Mapping[str, GoQuantity], reservation: Mapping[str, GoQuantity]) -> str | None:
    """``validateNodeAllocatable`` at the container manager's start, printing quantities with ``%v``."""
    errors = []
    for name, reserved in reservation.items():
        total = capacity.get(name, GoQuantity.of(0))
        if total.sub(reserved).value < 0:
            errors.append(
                f"Resource {gostr.quote(name)} has a reservation of {reserved.go_v()} but capacity of "
                f"{total.go_v()}. Expected capacity >= reservation."
            )
    return "invalid Node Allocatable configuration. " + " ".join(errors) if errors else None
