"""The Topology Manager's ``NewManager``: its start-up checks, and the policy and scope it then runs with.

Policy ``none`` short-circuits (no options parsed, no NUMA limit, the none scope); otherwise the
options are parsed, the NUMA distances and node count checked, and the policy and scope are chosen
once from their registries (``policy.POLICIES``, ``scope.SCOPES``). Each check is a small function
returning the kubelet's text, or None when it passes: ``new_topology_manager`` raises it, and
``kubelet.startup.checks`` runs each one on its own for the settings validator, so every text exists
once.

Ports ``NewManager`` of pkg/kubelet/cm/topologymanager/topology_manager.go, with ``NewNUMAInfo`` of
numa_info.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.names import SCOPE_NONE, TOPOLOGY_NONE, TOPOLOGY_SCOPES
from tmnb.kubelet.options import TopologyManagerOptions, parse_topology_manager_options
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.kubelet.topologymanager.merge import NUMAInfo
from tmnb.kubelet.topologymanager.policy import NonePolicy, TopologyPolicy, policy_for
from tmnb.kubelet.topologymanager.scope import SCOPES, Scope

DistanceRows = Sequence[Sequence[int] | None] | Mapping[int, Sequence[int] | None]


@dataclass(frozen=True)
class TopologyManagerConfig:
    """What a successfully started Topology Manager runs with: its scope (the none scope for policy
    none), which holds the policy, as the kubelet's manager holds only its scope."""

    scope: Scope

    @property
    def policy(self) -> TopologyPolicy:
        return self.scope.policy


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
        return TopologyManagerConfig(SCOPES[SCOPE_NONE](NonePolicy(NUMAInfo(nodes))))
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
    return TopologyManagerConfig(SCOPES[scope](chosen))


def _raise(error: str | None) -> None:
    if error is not None:
        raise ConfigRejected(error)


# ---------------------------------------------------------------------------------------------
# The checks (policy other than none; the policy and scope names are validated before)


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
