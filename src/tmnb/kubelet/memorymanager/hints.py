"""Which NUMA masks can hold a memory request, and the best of the hints that say so.

When nothing fits, the hint map is *empty* (not an empty list), which the Topology Manager reads as
"no preference"; the pod then fails in Allocate with UnexpectedAdmissionError (facts §6.2).

Ports ``calculateHints`` and ``findBestHint`` of pkg/kubelet/cm/memorymanager/policy_static.go
(1.33–1.37).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping, Sequence
from functools import lru_cache
from itertools import compress

from tmnb.kubelet.memorymanager.state import NO_MEMORY, NUMANodeState
from tmnb.kubelet.topologymanager.bitmask import (
    SubsetSums,
    has_mask,
    iterate_masks,
    mask_of,
    masks_reaching,
    subset_sums,
)
from tmnb.kubelet.topologymanager.hints import TopologyHint, sized_hints


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
    capacity = tuple((r, tuple([s.memory.get(r, NO_MEMORY).allocatable for s in states])) for r, _ in wanted)
    candidates, min_size = _could_hold(nodes, capacity, wanted)  # refuses node ids beyond 63
    free = {
        r: subset_sums(nodes, {n: s.memory.get(r, NO_MEMORY).free for n, s in zip(nodes, states, strict=True)})
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


def best_hint(hints: list[TopologyHint]) -> TopologyHint:
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
