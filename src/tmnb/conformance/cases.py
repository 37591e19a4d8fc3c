"""Reading a conformance case's input: typed fields, option strings as the kubelet sees them, the minor
that answers, and the machine, devices and runtime containers a whole-node case describes.

Every bad field is an ``InputError`` naming it, which the runner answers as that case's
``runner_error``.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tmnb.errors import InputError
from tmnb.kubelet.cpumanager.topology import CPUTopology, mask_of_cpus
from tmnb.kubelet.devicemanager.manager import RuntimeContainer
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.node import ExistingAllocation, Machine, NUMANode
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, parse_minor, profile


def read_field(inp: Mapping[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if name not in inp:
        if default is ...:
            raise InputError(f"missing field {name!r}", where="input")
        return default
    value = inp[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise InputError(f"field {name!r} has the wrong type ({type(value).__name__})", where="input")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def option_strings(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Case files may write option values as JSON bools/ints; the kubelet only sees strings."""
    out: dict[str, str] = {}
    for name, value in (options or {}).items():
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, int | str):
            out[name] = str(value)
        else:
            raise InputError(f"option {name!r} must be a string, bool or int", where="input.options")
    return out


def kubelet_of(inp: Mapping[str, Any]) -> KubeletProfile:
    """``input.version``: the minor that answers the case; absent means the default (1.36)."""
    if "version" not in inp:
        return profile(DEFAULT_MINOR)
    return parse_minor(read_field(inp, "version", str), where="input.version")


def cpu_ids(value: object, name: str) -> int:
    if not isinstance(value, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in value):
        raise InputError(f"field {name!r} must be a list of CPU ids", where="input")
    return mask_of_cpus(value)


def machine_of(inp: Mapping[str, Any]) -> Machine:
    cpus = CPUTopology.from_json(read_field(inp, "cpus", list), "input.cpus").cpus
    nodes = []
    for i, raw in enumerate(read_field(inp, "numa_nodes", list)):
        where = f"input.numa_nodes[{i}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), int):
            raise InputError("expected {id, memory, hugepages, distances}", where=where)
        hugepages = raw.get("hugepages") or {}
        distances = raw.get("distances")
        if not isinstance(hugepages, Mapping) or not all(isinstance(v, int) for v in hugepages.values()):
            raise InputError("hugepages must map resource name to bytes", where=where)
        nodes.append(
            NUMANode(
                raw["id"],
                int(raw.get("memory") or 0),
                {str(k): v for k, v in hugepages.items()},
                None if distances is None else tuple(int(d) for d in distances),
            )
        )
    return Machine(cpus, tuple(nodes))


def _statuses(raw_pods: list[Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each container status of the pods (``initContainerStatuses``, then ``containerStatuses``), with
    its pod's uid."""
    for raw in raw_pods:
        if not isinstance(raw, Mapping):
            continue
        uid = str((raw.get("metadata") or {}).get("uid", ""))
        status = raw.get("status") or {}
        for key in ("initContainerStatuses", "containerStatuses"):
            for item in status.get(key) or ():
                if isinstance(item, Mapping):
                    yield uid, item


def _runtime_id(value: object) -> str | None:
    """``containerd://abc`` is container ID ``abc``; None when there is no ID."""
    return value.split("://", 1)[-1] if isinstance(value, str) else None


def container_ids(raw_pods: list[Any]) -> dict[str, tuple[str, str]]:
    """The runtime's containers, from the pods' container statuses: what migrates a v1 CPU checkpoint."""
    return {
        cid: (uid, str(item.get("name", "")))
        for uid, item in _statuses(raw_pods)
        if (cid := _runtime_id(item.get("containerID"))) is not None
    }


def runtime_containers(raw_pods: list[Any]) -> tuple[RuntimeContainer, ...]:
    """The runtime's containers at the start, from the pods' container statuses: each ``containerID``
    (running when its ``state`` is ``running``) and, for a container that restarted, the exited
    instance in ``lastState.terminated.containerID``."""
    out: list[RuntimeContainer] = []
    for uid, item in _statuses(raw_pods):
        name = str(item.get("name", ""))
        if (cid := _runtime_id(item.get("containerID"))) is not None:
            out.append(RuntimeContainer(cid, uid, name, "running" in (item.get("state") or {})))
        last = _runtime_id(((item.get("lastState") or {}).get("terminated") or {}).get("containerID"))
        if last is not None:
            out.append(RuntimeContainer(last, uid, name, False))
    return tuple(out)


def devices_of(raw: Mapping[str, Any]) -> dict[str, tuple[Device, ...]]:
    """``devices``: resource -> [{id, numa: [ids] | null, healthy}], the devices the plugins list."""
    out = {}
    for resource, items in raw.items():
        if not isinstance(items, list):
            raise InputError("expected a list of {id, numa, healthy}", where=f"input.devices.{resource}")
        out[str(resource)] = tuple(
            Device(str(d["id"]), None if d.get("numa") is None else tuple(d["numa"]), bool(d.get("healthy", True)))
            for d in items
        )
    return out


def device_allocations(raw: Mapping[str, Any]) -> tuple[ExistingAllocation, ...]:
    """``device_allocations``: pod UID -> container -> resource -> [device ids] (the device checkpoint)."""
    return tuple(
        ExistingAllocation(str(pod), str(container), devices={str(r): tuple(ids) for r, ids in resources.items()})
        for pod, containers in raw.items()
        for container, resources in containers.items()
    )
