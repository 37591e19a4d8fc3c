"""The Topology Manager's start-up checks (the kubelet's ``NewManager``) and what it runs with."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.merge import NUMAInfo
from tmnb.kubelet.names import SCOPE_NONE, TOPOLOGY_NONE, TOPOLOGY_SCOPES
from tmnb.kubelet.options import parse_topology_manager_options
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
        for node in nodes:
            if rows.get(node) is None:
                raise ConfigRejected("cannot discover NUMA topology: error getting NUMA distances from cadvisor")
        # The kubelet follows its own reading here, odd as it is: NUMADistances.CalculateAverageFor
        # indexes each sysfs row (one entry per *online* node, in id order) by node id, d[node1][node2].
        # With sparse ids (nodes 0 and 2) node 2 indexes past a two-entry row, and Go panics at the
        # first admission that weighs a mask holding it; ids in range but sparse read the wrong
        # node's distance, which NUMAInfo.average_distance reproduces.
        top = max(nodes, default=0)
        short = [node for node in nodes if len(rows[node] or ()) <= top]
        if short:
            raise ConfigRejected(
                f"the kubelet would panic (runtime error: index out of range [{top}] with length "
                f"{len(rows[short[0]] or ())}) in CalculateAverageFor: prefer-closest-numa-nodes indexes the sysfs "
                f"distance row by node id, and NUMA node ids {list(nodes)} are sparse"
            )
    known = {n: r for n, r in rows.items() if r is not None}
    numa = NUMAInfo(nodes, known if opts.prefer_closest_numa else None)
    if len(nodes) > opts.max_allowable_numa_nodes:
        raise ConfigRejected(f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes")
    chosen = policy_for(policy, numa, opts)
    if scope not in TOPOLOGY_SCOPES:
        raise ConfigRejected(f'unknown scope: "{scope}"')
    return TopologyManagerConfig(chosen, scope)
