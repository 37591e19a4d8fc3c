"""The four Topology Manager policies and the manager's start-up checks (``NewManager``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.hints import ProviderHints, TopologyHint
from tmnb.kubelet.merge import NUMAInfo, filter_provider_hints, filter_single_numa, merge_lists
from tmnb.kubelet.options import TopologyManagerOptions, parse_topology_manager_options
from tmnb.versions import MODELLED_KUBELET, KubeVersion

PolicyName = Literal["none", "best-effort", "restricted", "single-numa-node"]
ScopeName = Literal["container", "pod", "none"]

POLICIES: tuple[str, ...] = ("none", "best-effort", "restricted", "single-numa-node")
SCOPES: tuple[str, ...] = ("container", "pod")


@dataclass(frozen=True)
class TopologyPolicy:
    """A policy bound to a machine; ``merge`` is the kubelet's ``Policy.Merge``."""

    name: str
    numa: NUMAInfo
    options: TopologyManagerOptions = field(default_factory=TopologyManagerOptions)

    def merge(self, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """(best hint, admit) for one container's or pod's provider answers."""
        if self.name == "none":
            return TopologyHint(None, False), True
        lists = filter_provider_hints(providers)
        if self.name == "single-numa-node":
            best = merge_lists(filter_single_numa(lists), self.numa, prefer_closest=False)
            if best.affinity == self.numa.default_mask:
                best = TopologyHint(None, best.preferred)
            return best, best.preferred
        best = merge_lists(lists, self.numa, prefer_closest=self.options.prefer_closest_numa)
        return best, best.preferred or self.name == "best-effort"

    @property
    def aligns_single_numa(self) -> bool:
        """The kubelet's ``IsAlignmentGuaranteed``: only single-numa-node guarantees alignment."""
        return self.name == "single-numa-node"


@dataclass(frozen=True)
class TopologyManagerConfig:
    """What a successfully started Topology Manager runs with; scope ``none`` for policy none."""

    policy: TopologyPolicy
    scope: str


def _distance_rows(
    nodes: Sequence[int], distances: Sequence[Sequence[int] | None] | Mapping[int, Sequence[int] | None] | None
) -> dict[int, Sequence[int] | None]:
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
    distances: Sequence[Sequence[int] | None] | Mapping[int, Sequence[int] | None] | None = None,
    *,
    version: KubeVersion = MODELLED_KUBELET,
    feature_gates: Mapping[str, bool] | None = None,
) -> TopologyManagerConfig:
    """Start the manager as the kubelet does, raising ``ConfigRejected`` with its text where it would
    refuse to start. Order matters: policy ``none`` short-circuits (options never parsed, no NUMA
    limit), then options, NUMA distances, the node-count limit, policy name, scope name."""
    nodes = tuple(numa_nodes)
    if policy == "none":
        return TopologyManagerConfig(TopologyPolicy("none", NUMAInfo(nodes)), "none")
    opts = parse_topology_manager_options(options, version=version, feature_gates=feature_gates)
    rows = _distance_rows(nodes, distances)
    if opts.prefer_closest_numa:
        for node in nodes:
            if rows.get(node) is None:
                raise ConfigRejected("cannot discover NUMA topology: error getting NUMA distances from cadvisor")
    numa = NUMAInfo(nodes, {n: r for n, r in rows.items() if r is not None} if opts.prefer_closest_numa else None)
    if len(nodes) > opts.max_allowable_numa_nodes:
        raise ConfigRejected(f"unsupported on machines with more than {opts.max_allowable_numa_nodes} NUMA Nodes")
    if policy not in POLICIES:
        raise ConfigRejected(f'unknown policy: "{policy}"')
    if scope not in SCOPES:
        raise ConfigRejected(f'unknown scope: "{scope}"')
    return TopologyManagerConfig(TopologyPolicy(policy, numa, opts), scope)
