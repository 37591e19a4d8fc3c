"""The device manager's topology hints for one device-plugin resource: one hint per NUMA mask that
holds enough of its available (and reusable) devices, preferred when as narrow as the narrowest mask
that could hold the request at all. A resource whose devices report no NUMA node gets no hints
(``DeviceManager`` answers nil: no preference).

Ports ``generateDeviceTopologyHints`` of pkg/kubelet/cm/devicemanager/topology_hints.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from tmnb.kubelet.memo import Memo
from tmnb.kubelet.topologymanager.bitmask import iterate_masks, mask_of
from tmnb.kubelet.topologymanager.hints import TopologyHint


@dataclass(frozen=True)
class Device:
    """One device of a resource; ``numa`` None = no topology info, () = topology with no nodes."""

    id: str
    numa: tuple[int, ...] | None = None
    healthy: bool = True

    def numa_mask(self) -> int:
        """The mask of its NUMA nodes (ids beyond 0-63 ignored), made once: every hint and pick asks."""
        mask: int | None = self.__dict__.get("_numa_mask")
        if mask is None:
            mask = self.__dict__["_numa_mask"] = mask_of(n for n in (self.numa or ()) if 0 <= n <= 63)
        return mask


def generate_device_hints(
    numa_nodes: Sequence[int],
    devices: Mapping[str, Device],
    available: Iterable[str],
    reusable: Iterable[str],
    request: int,
    *,
    over_device_nodes: bool = True,
) -> list[TopologyHint]:
    """``generateDeviceTopologyHints``: from 1.36 (``over_device_nodes``, #138244) over the machine NUMA
    nodes that host this resource's devices (all machine nodes if none does), before it over every
    machine node, which adds the wider masks holding device-less nodes. Only the devices' NUMA masks
    matter, so the answer is remembered by them, for every node in the process."""
    machine = set(numa_nodes)
    hosting = sorted({n for d in devices.values() for n in (d.numa or ()) if n in machine}) if over_device_nodes else []
    nodes = tuple(hosting or sorted(machine))
    device_masks = tuple(sorted(d.numa_mask() for d in devices.values()))
    reusable_masks = []
    for dev_id in reusable:
        dev = devices.get(dev_id)
        if dev is not None and dev.numa is not None:
            reusable_masks.append(dev.numa_mask())
    available_masks = sorted(devices[d].numa_mask() for d in available if d in devices)
    key = (nodes, device_masks, tuple(sorted(reusable_masks)), tuple(available_masks), request)
    hints = _DEVICE_HINTS.get(key)
    if hints is None:
        hints = _device_hints(*key)
        _DEVICE_HINTS.put(key, hints, len(hints) + 1)
    return list(hints)


#: ``generate_device_hints`` answers by NUMA nodes, device masks and request.
_DEVICE_HINTS: Memo[tuple[TopologyHint, ...]] = Memo(1 << 18)


def _device_hints(
    nodes: tuple[int, ...],
    device_masks: tuple[int, ...],
    reusable_masks: tuple[int, ...],
    available_masks: tuple[int, ...],
    request: int,
) -> tuple[TopologyHint, ...]:
    min_size = len(nodes)
    found: list[int] = []
    for mask in iterate_masks(nodes):
        if sum(1 for m in device_masks if m & mask) >= request and mask.bit_count() < min_size:
            min_size = mask.bit_count()
        if any(not (m & mask) for m in reusable_masks):
            continue
        matching = len(reusable_masks) + sum(1 for m in available_masks if m & mask)
        if matching >= request:
            found.append(mask)
    return tuple(TopologyHint(mask, mask.bit_count() == min_size) for mask in found)
