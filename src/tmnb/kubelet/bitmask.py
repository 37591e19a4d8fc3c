"""NUMA affinity masks as plain ints (bit i = NUMA node i), with the kubelet's ordering rules.

A ``None`` mask is the kubelet's nil mask ("any NUMA node") and is kept distinct from ``0``
(affinity with no node). Ints keep the merge hot path free of object churn.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from functools import lru_cache
from itertools import combinations

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
    """Ascending node ids set in ``mask``."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def is_narrower(a: int, b: int) -> bool:
    """Fewer nodes wins; equal counts fall back to plain unsigned comparison (not lexicographic)."""
    ca, cb = a.bit_count(), b.bit_count()
    return a < b if ca == cb else ca < cb


@lru_cache(maxsize=256)
def _iterate(bits: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(mask_of(combo) for size in range(1, len(bits) + 1) for combo in combinations(bits, size))


def iterate_masks(bits: Iterable[int]) -> tuple[int, ...]:
    """Every non-empty subset of ``bits``: all singletons, then pairs, ... each size in combination
    order of ``bits`` as given. Hint generators emit hints in this order; cached per node list."""
    return _iterate(tuple(bits))


def subset_sums(nodes: Iterable[int], values: Mapping[int, int]) -> dict[int, int]:
    """Every mask over ``nodes`` (and 0) mapped to the sum of ``values`` over its nodes, built by
    doubling: the masks with node n are those without it plus n, so 2^16 masks cost one addition
    each, in a comprehension, instead of a walk over each mask's nodes."""
    sums = {0: 0}
    for node in nodes:
        bit, value = 1 << node, values[node]
        sums.update({mask | bit: total + value for mask, total in list(sums.items())})
    return sums
