"""A bounded memo for the pure steps of admission (hints and CPU picks from a free mask).

A fleet what-if replays thousands of nodes of a few machine shapes under pods of a few sizes, so
the same free-CPU masks and memory states come up again and again, across nodes as well as within
one. Each entry has a weight (its hint count, say); once the weights reach the budget the memo
starts afresh, so a replay on 16 NUMA nodes (65,535 hints a list) cannot grow it without bound.

No kubelet file: tmnb's own, so a fleet replay is fast; every memo holds pure answers only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")

#: Weight budget of a hint memo (the CPU hints of a topology, the policies' merges): hints plus
#: ``ENTRY_WEIGHT`` per entry. Hint lists on 16 NUMA nodes hold 65,535 hints, so it keeps some 30
#: of them (about 16 MiB of references) instead of four.
HINT_MEMO_BUDGET = 1 << 21
#: What a remembered hint list weighs beyond its hints: its key and containers.
ENTRY_WEIGHT = 16


class Memo(Generic[V]):
    """Key -> value, forgotten all at once when the weights of the entries reach ``budget``."""

    __slots__ = ("_items", "_used", "budget", "get")

    def __init__(self, budget: int) -> None:
        self._items: dict[Hashable, V] = {}
        self._used = 0
        self.budget = budget
        #: the value for a key, or None: the dict's own ``get`` (``put`` clears that same dict), which
        #: saves a Python call on every lookup of every pod
        self.get: Callable[[Hashable], V | None] = self._items.get

    def put(self, key: Hashable, value: V, weight: int = 1) -> V:
        if self._used + weight > self.budget:
            self._items.clear()
            self._used = 0
        self._items[key] = value
        self._used += weight
        return value
