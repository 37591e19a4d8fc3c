"""NUMA affinity masks as plain ints (bit i = NUMA node i), with the kubelet's ordering rules.

A ``None`` mask is the kubelet's nil mask ("any NUMA node") and is kept distinct from ``0``
(affinity with no node). Ints keep the merge hot path free of object churn; the CPU manager's CPU
masks are ints of the same kind, so it reads them with ``bits_of`` too.

Ports pkg/kubelet/cm/topologymanager/bitmask/bitmask.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import combinations, compress, count

from tmnb.errors import InputError

MAX_BIT = 63


def mask_of(bits: Iterable[int]) -> int:
    """Build a mask; node ids outside 0..63 are refused as the kubelet's bitmask refuses them."""
    mask = 0
    for bit in bits:
        if isinstance(bit, bool) or not isinstance(bit, int) or not 0 <= bit <= MAX_BIT:
            raise InputError(f"NUMA node id {bit!r}: bit number must be in range 0-63")
        mask |= 1 << bit
    return mask


def bits_of(mask: int) -> list[int]:
    """Ascending bit numbers set in ``mask``: the NUMA nodes of a NUMA mask, the CPUs of a CPU mask."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


@lru_cache(maxsize=4096)
def node_ids(mask: int) -> tuple[int, ...]:
    """``bits_of`` as a tuple, remembered: admission asks for the nodes of the same few hint masks
    for every container."""
    return tuple(bits_of(mask))


@lru_cache(maxsize=256)
def _iterate(bits: tuple[int, ...]) -> tuple[int, ...]:
    mask_of(bits)  # refuses a bad node id as the first combination holding it would
    if len(set(bits)) != len(bits):
        return tuple(mask_of(combo) for size in range(1, len(bits) + 1) for combo in combinations(bits, size))
    # distinct bits: a combination's mask is the sum of its single-bit masks
    singles = [1 << bit for bit in bits]
    return tuple(sum(combo) for size in range(1, len(bits) + 1) for combo in combinations(singles, size))


def iterate_masks(bits: Iterable[int]) -> tuple[int, ...]:
    """Every non-empty subset of ``bits``: all singletons, then pairs, ... each size in combination
    order of ``bits`` as given. Hint generators emit hints in this order; cached per node list."""
    return _iterate(tuple(bits))


#: ``subset_sums``' answer: a list indexed by mask when the nodes are 0..k-1, else a dict by mask.
SubsetSums = list[int] | dict[int, int]


def subset_sums(nodes: Iterable[int], values: Mapping[int, int]) -> SubsetSums:
    """Every mask over ``nodes`` (and 0) mapped to the sum of ``values`` over its nodes, built by
    doubling: the masks with node n are those without it plus n, so 2^16 masks cost one addition
    each, in a comprehension, instead of a walk over each mask's nodes. When the nodes are 0..k-1
    (as on nearly every machine) the doubling visits the masks in the order 0, 1, 2, ...,
    2^k-1, so the sums stay a list indexed by mask: building a 65,536-entry dict costs ten times
    the additions. Read it with ``sums[mask]`` and ``masks_reaching``."""
    nodes = tuple(nodes)
    totals = [0]
    for node in nodes:
        value = values[node]
        totals += list(map(value.__add__, totals))  # total + value for each total so far
    if nodes == tuple(range(len(nodes))):
        return totals
    return dict(zip(_doubling_masks(nodes), totals, strict=True))


@lru_cache(maxsize=256)
def _doubling_masks(nodes: tuple[int, ...]) -> tuple[int, ...]:
    masks = [0]
    for node in nodes:
        bit = 1 << node
        masks += [mask | bit for mask in masks]
    return tuple(masks)


def masks_reaching(sums: SubsetSums, size: int) -> set[int]:
    """The masks whose sum is at least ``size``."""
    if isinstance(sums, list):
        return set(compress(count(), map(size.__le__, sums)))
    return {m for m, v in sums.items() if v >= size}


def has_mask(sums: SubsetSums, mask: int) -> bool:
    """Whether ``mask`` is one of the masks ``sums`` covers (a subset of its nodes, or 0)."""
    if isinstance(sums, list):
        return 0 <= mask < len(sums)
    return mask in sums
