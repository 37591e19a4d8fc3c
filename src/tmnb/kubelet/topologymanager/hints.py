"""The topology hint and its JSON form (``{"numa": [...] | null, "preferred": bool}``).

Ports ``TopologyHint`` of pkg/kubelet/cm/topologymanager/topology_manager.go (1.33–1.37); the
shared hint objects and the JSON form are tmnb's.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any, NamedTuple

from tmnb.errors import InputError
from tmnb.kubelet.topologymanager.bitmask import bits_of, iterate_masks, mask_of


class TopologyHint(NamedTuple):
    """A NUMA affinity (``None`` = any node, ``0`` = no node) and whether it is preferred."""

    affinity: int | None
    preferred: bool

    def numa(self) -> list[int] | None:
        return None if self.affinity is None else bits_of(self.affinity)

    def to_json(self) -> dict[str, Any]:
        return {"numa": self.numa(), "preferred": self.preferred}

    def __str__(self) -> str:
        nodes = "nil" if self.affinity is None else ",".join(map(str, bits_of(self.affinity))) or "empty"
        return f"{{{nodes} {'preferred' if self.preferred else 'not-preferred'}}}"


@lru_cache(maxsize=64)
def hint_objects(nodes: tuple[int, ...]) -> tuple[dict[int, TopologyHint], dict[int, TopologyHint]]:
    """The preferred and the non-preferred hint of every mask over ``nodes``, made once per machine:
    hint generators return one hint per qualifying mask, 65,535 of them on 16 NUMA nodes, and
    hints are immutable, so they can be shared."""
    masks = iterate_masks(nodes)
    return {m: TopologyHint(m, True) for m in masks}, {m: TopologyHint(m, False) for m in masks}


def sized_hints(nodes: tuple[int, ...], masks: Sequence[int], size: int) -> list[TopologyHint]:
    """One hint per mask, preferred when it has ``size`` nodes: ``[preferred[m] if m.bit_count() ==
    size else other[m] for m in masks]`` over ``hint_objects(nodes)``. The masks come in
    ``iterate_masks`` order (fewer nodes first), so those of ``size`` nodes are one run, found by
    bisection; the hints are then looked up run by run, which on 16 NUMA nodes is most of the cost
    of a hint list otherwise."""
    preferred, other = hint_objects(nodes)
    low = bisect_left(masks, size, key=int.bit_count)
    high = bisect_right(masks, size, lo=low, key=int.bit_count)
    hints = list(map(other.__getitem__, masks[:low]))
    hints += map(preferred.__getitem__, masks[low:high])
    hints += map(other.__getitem__, masks[high:])
    return hints


#: A provider's answer: ``None`` (nil map) or resource -> ``None`` (nil list) / list of hints.
ProviderHints = Mapping[str, "list[TopologyHint] | None"] | None


def hint_from_json(value: object, where: str) -> TopologyHint:
    if not isinstance(value, Mapping) or "preferred" not in value or "numa" not in value:
        raise InputError('expected a hint {"numa": [ids] | null, "preferred": bool}', where=where)
    numa, preferred = value["numa"], value["preferred"]
    if not isinstance(preferred, bool):
        raise InputError(f"preferred must be true or false, got {preferred!r}", where=where)
    if numa is None:
        return TopologyHint(None, preferred)
    if not isinstance(numa, list):
        raise InputError(f"numa must be a list of node ids or null, got {numa!r}", where=where)
    try:
        return TopologyHint(mask_of(numa), preferred)
    except InputError as err:
        raise InputError(err.message, where=where) from None


def provider_from_json(value: object, where: str) -> dict[str, list[TopologyHint] | None] | None:
    """``null`` -> nil map, ``{}`` -> empty map, ``{"cpu": null | [] | [...]}`` kept as given."""
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise InputError("a provider must be null or an object of resource -> hints", where=where)
    out: dict[str, list[TopologyHint] | None] = {}
    for resource, hints in value.items():
        if hints is None:
            out[resource] = None
        elif isinstance(hints, list):
            out[resource] = [hint_from_json(h, f"{where}.{resource}[{i}]") for i, h in enumerate(hints)]
        else:
            raise InputError(f"hints for {resource!r} must be null or a list", where=where)
    return out


def provider_to_json(hints: ProviderHints) -> dict[str, Any] | None:
    if hints is None:
        return None
    return {res: None if lst is None else [h.to_json() for h in lst] for res, lst in hints.items()}
