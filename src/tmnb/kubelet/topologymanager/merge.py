"""The Topology Manager's hint merge: per-provider filtering, permutation merge, best-hint choice.

The kubelet enumerates the full Cartesian product of every provider's hint list. Its comparison is
a strict total order on distinct (mask, preferred) candidates (facts §4.4), so only the *set* of
merged candidates matters, not the enumeration: preferred candidates are read off the lists
directly (all picks preferred, all non-nil raw masks equal), and only when none survives are the
reachable non-preferred masks folded list by list. The result equals the literal permutation fold
(checked by a property test) at a fraction of its cost.

Ports pkg/kubelet/cm/topologymanager/policy.go (``filterProvidersHints``, ``HintMerger``) and
numa_info.go (``NUMAInfo``, ``CalculateAverageFor``) (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from tmnb.errors import InputError
from tmnb.kubelet.topologymanager.bitmask import bits_of, mask_of
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint

HintList = Sequence[TopologyHint]

_ANY_PREFERRED: tuple[TopologyHint, ...] = (TopologyHint(None, True),)
_CANNOT_SATISFY: tuple[TopologyHint, ...] = (TopologyHint(None, False),)


@dataclass(frozen=True)
class NUMAInfo:
    """The machine's NUMA nodes (cadvisor order) and, for prefer-closest-numa-nodes, distance rows."""

    nodes: tuple[int, ...]
    distances: Mapping[int, Sequence[int]] | None = None
    default_mask: int = field(init=False)
    #: everything above as one hashable value, for memos of merges on this machine
    key: tuple[object, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "default_mask", mask_of(self.nodes))
        rows = None if self.distances is None else tuple((n, tuple(r)) for n, r in self.distances.items())
        object.__setattr__(self, "key", (self.nodes, rows))

    def average_distance(self, mask: int) -> float:
        """Mean of distance[i][j] over all ordered pairs in the mask, diagonal included, summed in the
        kubelet's order so float ties come out the same. ``row[j]`` indexes the sysfs row by node id,
        as the kubelet's NUMADistances.CalculateAverageFor does (see ``new_topology_manager``)."""
        bits = bits_of(mask)
        if not bits:
            return 0.0
        total = 0.0
        count = 0.0
        for i in bits:
            row = (self.distances or {}).get(i)
            for j in bits:
                if row is None or j >= len(row):
                    raise InputError(f"no NUMA distance from node {i} to node {j}", where="distances")
                total += float(row[j])
                count += 1
        return total / count


def filter_provider_hints(providers: Sequence[ProviderHints]) -> list[HintList]:
    """One hint list per (provider, resource): nil or empty map -> any-NUMA preferred; nil list ->
    any-NUMA preferred; empty list -> any-NUMA *not* preferred (cannot be satisfied)."""
    lists: list[HintList] = []
    for provider in providers:
        if not provider:
            lists.append(_ANY_PREFERRED)
            continue
        for hints in provider.values():
            if hints is None:
                lists.append(_ANY_PREFERRED)
            elif len(hints) == 0:
                lists.append(_CANNOT_SATISFY)
            else:
                lists.append(hints)
    return lists


def filter_single_numa(lists: Sequence[HintList]) -> list[HintList]:
    """single-numa-node keeps only preferred hints that are nil or name exactly one node."""
    return [
        [h for h in hints if h.preferred and (h.affinity is None or h.affinity.bit_count() == 1)] for hints in lists
    ]


def best_non_preferred_count(lists: Sequence[HintList]) -> int:
    """T: the largest, over lists, of the smallest raw mask size in that list (nil masks ignored)."""
    best = 0
    for hints in lists:
        sizes = [h.affinity.bit_count() for h in hints if h.affinity is not None]
        if sizes and min(sizes) > best:
            best = min(sizes)
    return best


def preferred_candidates(lists: Sequence[HintList], default_mask: int) -> set[int]:
    """Merged masks of the *preferred* permutations: every pick preferred and all non-nil picks the
    same raw mask M, so only masks preferred in every list that cannot pick a preferred nil qualify."""
    common: set[int] | None = None
    seen: set[int] = set()
    for hints in lists:
        masks: set[int] = set()
        can_stay_nil = False
        for affinity, preferred in hints:
            if not preferred:
                continue
            if affinity is None:
                can_stay_nil = True
            else:
                masks.add(affinity)
        seen |= masks
        if not can_stay_nil:
            common = masks if common is None else common & masks
    if common is None:  # every list can stay nil: any preferred mask alone, or all nil (the default)
        out = {default_mask & m for m in seen}
        out.add(default_mask)
    else:
        out = {default_mask & m for m in common}
    out.discard(0)
    return out


def reachable_masks(lists: Sequence[HintList], default_mask: int) -> set[int]:
    """Every non-empty merged mask over all permutations, folded list by list."""
    reach = {default_mask} if default_mask else set()
    for hints in lists:
        masks = {h.affinity for h in hints}
        nxt: set[int] = set()
        for mask in reach:
            for affinity in masks:
                merged = mask if affinity is None else mask & affinity
                if merged:
                    nxt.add(merged)
        reach = nxt
        if not reach:
            break
    return reach


def _better_mask(numa: NUMAInfo, current: int, candidate: int, prefer_closest: bool) -> int:
    if current == candidate:
        return current
    cc, nc = current.bit_count(), candidate.bit_count()
    if cc != nc:
        return candidate if nc < cc else current
    if prefer_closest:
        dc, dn = numa.average_distance(current), numa.average_distance(candidate)
        if dc != dn:
            return candidate if dn < dc else current
    return candidate if candidate < current else current


def _compare(
    numa: NUMAInfo,
    threshold: int,
    prefer_closest: bool,
    current: tuple[int, bool] | None,
    candidate: tuple[int, bool],
) -> tuple[int, bool]:
    if current is None:
        return candidate
    if current[1] != candidate[1]:
        return candidate if candidate[1] else current
    if current[1]:
        best = _better_mask(numa, current[0], candidate[0], prefer_closest)
        return current if best == current[0] else candidate
    cur_n, cand_n = current[0].bit_count(), candidate[0].bit_count()
    if cur_n > threshold or (cur_n == threshold and cand_n == threshold) or (cur_n < threshold and cand_n == cur_n):
        best = _better_mask(numa, current[0], candidate[0], prefer_closest)
        return current if best == current[0] else candidate
    if cur_n == threshold or cand_n > threshold:
        return current
    if cand_n == threshold:
        return candidate
    return candidate if cand_n > cur_n else current


def merge_lists(lists: Sequence[HintList], numa: NUMAInfo, *, prefer_closest: bool) -> TopologyHint:
    """Best merged hint of already-filtered lists; {default mask, not preferred} if none survives.

    A preferred candidate always beats a non-preferred one, so the costly enumeration of all
    reachable masks only runs when no preferred permutation survives."""
    best: tuple[int, bool] | None = None
    preferred = preferred_candidates(lists, numa.default_mask)
    if preferred:
        for mask in preferred:
            best = _compare(numa, 0, prefer_closest, best, (mask, True))
    else:
        threshold = best_non_preferred_count(lists)
        for mask in reachable_masks(lists, numa.default_mask):
            best = _compare(numa, threshold, prefer_closest, best, (mask, False))
    if best is None:
        return TopologyHint(numa.default_mask, False)
    return TopologyHint(*best)
