"""The four Topology Manager policies, one small type each.

Every policy merges the providers' hints into one best hint and says whether the pod may be
admitted with it. ``POLICIES`` maps each ``topologyManagerPolicy`` name to its type; the manager's
start-up and settings validation both take the allowed names from it.

Ports pkg/kubelet/cm/topologymanager/policy.go, policy_none.go, policy_best_effort.go,
policy_restricted.go and policy_single_numa_node.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from tmnb.errors import ConfigRejected
from tmnb.kubelet.memo import ENTRY_WEIGHT, HINT_MEMO_BUDGET, Memo
from tmnb.kubelet.names import BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE, TOPOLOGY_NONE, unknown_policy
from tmnb.kubelet.options import TopologyManagerOptions
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint
from tmnb.kubelet.topologymanager.merge import (
    HintList,
    NUMAInfo,
    filter_provider_hints,
    filter_single_numa,
    merge_lists,
)


class TopologyPolicy(Protocol):
    """The kubelet's ``Policy``: a name, ``Merge`` and whether the merged hint guarantees alignment."""

    @property
    def name(self) -> str: ...

    @property
    def aligns_single_numa(self) -> bool: ...

    def merge(self, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        """(best hint, admit) for one container's or pod's provider answers."""
        ...


@dataclass(frozen=True)
class NonePolicy:
    """``none``: no merge; every pod is admitted with no NUMA affinity."""

    numa: NUMAInfo
    options: TopologyManagerOptions = field(default_factory=TopologyManagerOptions)
    name: ClassVar[str] = TOPOLOGY_NONE
    aligns_single_numa: ClassVar[bool] = False

    def merge(self, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return TopologyHint(None, False), True


#: Merge answers by policy, machine and hint lists, for every node in the process: a fleet of a few
#: machine shapes and pod sizes asks the same merges over and over. Weighed as the CPU hint memo
#: (``memo.HINT_MEMO_BUDGET``): the keys hold the hint lists.
_MERGED: Memo[tuple[TopologyHint, bool]] = Memo(HINT_MEMO_BUDGET)


def _remembered(
    policy: BestEffortPolicy | SingleNUMANodePolicy, providers: Sequence[ProviderHints]
) -> tuple[TopologyHint, bool]:
    """``policy.merge_filtered`` of the providers' hint lists, each answer computed once."""
    lists = filter_provider_hints(providers)
    key = (policy.name, policy.numa.key, policy.options.prefer_closest_numa, tuple(map(tuple, lists)))
    merged = _MERGED.get(key)
    if merged is None:
        merged = _MERGED.put(key, policy.merge_filtered(lists), sum(map(len, lists)) + ENTRY_WEIGHT)
    return merged


@dataclass(frozen=True)
class BestEffortPolicy:
    """``best-effort``: the narrowest (optionally closest) merged hint, admitted whatever it is."""

    numa: NUMAInfo
    options: TopologyManagerOptions = field(default_factory=TopologyManagerOptions)
    name: ClassVar[str] = BEST_EFFORT
    aligns_single_numa: ClassVar[bool] = False

    def can_admit(self, hint: TopologyHint) -> bool:
        return True

    def merge(self, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return _remembered(self, providers)

    def merge_filtered(self, lists: Sequence[HintList]) -> tuple[TopologyHint, bool]:
        best = merge_lists(lists, self.numa, prefer_closest=self.options.prefer_closest_numa)
        return best, self.can_admit(best)


@dataclass(frozen=True)
class RestrictedPolicy(BestEffortPolicy):
    """``restricted``: best-effort's merge, but only a preferred hint is admitted."""

    name: ClassVar[str] = RESTRICTED

    def can_admit(self, hint: TopologyHint) -> bool:
        return hint.preferred


@dataclass(frozen=True)
class SingleNUMANodePolicy:
    """``single-numa-node``: only single-node (or any-node) preferred hints take part; a hint spanning
    the whole machine is stored as "no affinity"; only a preferred hint is admitted."""

    numa: NUMAInfo
    options: TopologyManagerOptions = field(default_factory=TopologyManagerOptions)
    name: ClassVar[str] = SINGLE_NUMA_NODE
    aligns_single_numa: ClassVar[bool] = True

    def merge(self, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
        return _remembered(self, providers)

    def merge_filtered(self, lists: Sequence[HintList]) -> tuple[TopologyHint, bool]:
        best = merge_lists(filter_single_numa(lists), self.numa, prefer_closest=False)
        if best.affinity == self.numa.default_mask:
            best = TopologyHint(None, best.preferred)
        return best, best.preferred


PolicyType = Callable[[NUMAInfo, TopologyManagerOptions], TopologyPolicy]

#: topologyManagerPolicy name -> policy type, in the kubelet's documentation order.
POLICIES: Mapping[str, PolicyType] = {
    p.name: p for p in (NonePolicy, BestEffortPolicy, RestrictedPolicy, SingleNUMANodePolicy)
}
TOPOLOGY_POLICIES: tuple[str, ...] = tuple(POLICIES)


def policy_for(name: str, numa: NUMAInfo, options: TopologyManagerOptions | None = None) -> TopologyPolicy:
    """The policy called ``name`` on this machine; ``ConfigRejected`` with the kubelet's text otherwise."""
    policy_type = POLICIES.get(name)
    if policy_type is None:
        raise ConfigRejected(unknown_policy(name))
    return policy_type(numa, options or TopologyManagerOptions())
