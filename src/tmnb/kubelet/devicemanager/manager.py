"""Device manager: topology hints and device allocation for device-plugin resources.

Requests come from container *limits*, whatever the pod's QoS. A resource whose devices report no
NUMA node gets a nil hint list (no preference). Known deviation: the kubelet picks which of the
equally suitable devices to hand out in Go map order (or asks the plugin's
GetPreferredAllocation); tmnb picks ascending device ids, so the *count* and NUMA placement match
but the exact ids may not.

Ports ``Allocate`` (``devicesToAllocate``) and ``isContainerAlreadyRunning`` of
pkg/kubelet/cm/devicemanager/manager.go, and ``GetTopologyHints`` and ``GetPodTopologyHints`` of
topology_hints.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from tmnb.errors import InputError
from tmnb.kubelet.devicemanager.topology_hints import Device, generate_device_hints
from tmnb.kubelet.errors import AdmissionError, Unpredictable
from tmnb.kubelet.pod import Container, Pod, pod_level_request, value
from tmnb.kubelet.topologymanager.hints import TopologyHint


@dataclass(frozen=True)
class RuntimeContainer:
    """A container the runtime lists when the kubelet starts (an exited earlier instance included)."""

    id: str
    pod_uid: str
    container: str
    running: bool


@dataclass(frozen=True)
class DeviceRestart:
    """What the device manager knows during the first batch after a start (sources not ready): the
    runtime's containers, whether this kubelet counts a container as running when any of its IDs runs
    (``KubeletProfile.device_counts_any_running_id``) or asks for one ID in Go map order, and the
    resources whose plugins have registered again (the others are known from the checkpoint with no
    healthy device yet)."""

    containers: tuple[RuntimeContainer, ...]
    any_running_id: bool
    registered: frozenset[str]

    def running(self, pod_uid: str, container: str) -> bool:
        """``isContainerAlreadyRunning``."""
        states = {c.running for c in self.containers if (c.pod_uid, c.container) == (pod_uid, container)}
        if not states:
            return False  # "Container not found in the initial map, assumed NOT running"
        if self.any_running_id or len(states) == 1:
            return True in states
        raise Unpredictable(
            f"not predicted: container {container} of pod {pod_uid} has running and exited IDs, and this kubelet "
            "checks one of them, picked in Go map order"
        )


class DeviceManager:
    """Device plugin resources with their devices, allocations and reusable init-container devices."""

    name = "devicemanager"

    def __init__(
        self, numa_nodes: Sequence[int], devices: Mapping[str, Sequence[Device]], *, over_device_nodes: bool = True
    ) -> None:
        self.over_device_nodes = over_device_nodes
        self.numa_nodes = tuple(numa_nodes)
        self.devices: dict[str, dict[str, Device]] = {}
        for resource, devs in devices.items():
            by_id: dict[str, Device] = {}
            for d in devs:
                if not isinstance(d, Device):
                    raise InputError(f"devices[{resource!r}] must hold Device objects, got {type(d).__name__}")
                if d.id in by_id:
                    raise InputError(f"device {d.id!r} of {resource} is listed twice")
                by_id[d.id] = d
            self.devices[resource] = by_id
        self.allocated: dict[tuple[str, str, str], tuple[str, ...]] = {}
        self.to_reuse: dict[str, dict[str, set[str]]] = {}
        self._resources = frozenset(self.devices)
        #: set during the first batch after a start (``NodeSimulator.restart``); None: sources ready, or a
        #: restart whose runtime is not known, where every checkpointed container is taken as running
        self.restarting: DeviceRestart | None = None

    # ------------------------------------------------------------------ state
    def start(self, allocations: Mapping[tuple[str, str, str], Sequence[str]]) -> None:
        """Existing allocations (pod UID, container, resource) -> device ids (the checkpoint)."""
        for key, ids in allocations.items():
            self.allocated[key] = tuple(ids)

    def in_use(self, resource: str) -> set[str]:
        return {d for (_, _, res), ids in self.allocated.items() if res == resource for d in ids}

    def available(self, resource: str) -> set[str]:
        return {i for i, d in self.devices.get(resource, {}).items() if d.healthy} - self.in_use(resource)

    def aligned(self, resource: str) -> bool:
        return any(d.numa for d in self.devices.get(resource, {}).values())

    # ------------------------------------------------------------------ requests
    def _requests(self, container: Container) -> Mapping[str, int]:
        """The container's requests of these devices, kept on the container (read only) for managers of the same
        resources: hints and Allocate both ask, and a fleet's pods meet many such managers."""
        seen: tuple[frozenset[str], dict[str, int]] | None = container.__dict__.get("_device_requests")
        if seen is not None and seen[0] == self._resources:
            return seen[1]
        requests = {r: value(q) for r, q in container.limits.items() if r in self.devices}
        container.__dict__["_device_requests"] = (self._resources, requests)
        return requests

    def pod_requests(self, pod: Pod) -> dict[str, int]:
        resources = {r for c in pod.all_containers() for r in c.limits if r in self.devices}

        def limit_of(resource: str) -> Callable[[Container], int | None]:
            return lambda c: value(c.limits[resource]) if resource in c.limits else None

        return {r: pod_level_request(pod, limit_of(r)) for r in resources}

    # ------------------------------------------------------------------ hints
    def _hints(
        self, resource: str, requested: int, allocated: tuple[str, ...], reusable: set[str]
    ) -> list[TopologyHint] | None:
        if not self.aligned(resource):
            return None
        if allocated:
            if len(allocated) != requested:
                return []
            return generate_device_hints(
                self.numa_nodes,
                self.devices[resource],
                allocated,
                (),
                requested,
                over_device_nodes=self.over_device_nodes,
            )
        available = self.available(resource)
        if len(available | reusable) < requested:
            return []
        return generate_device_hints(
            self.numa_nodes,
            self.devices[resource],
            available,
            reusable,
            requested,
            over_device_nodes=self.over_device_nodes,
        )

    def get_topology_hints(self, pod: Pod, container: Container) -> dict[str, list[TopologyHint] | None]:
        out = {}
        for resource, requested in self._requests(container).items():
            allocated = self.allocated.get((pod.uid, container.name, resource), ())
            reusable = self.to_reuse.get(pod.uid, {}).get(resource, set())
            out[resource] = self._hints(resource, requested, allocated, reusable)
        return out

    def get_pod_topology_hints(self, pod: Pod) -> dict[str, list[TopologyHint] | None]:
        out = {}
        for resource, requested in self.pod_requests(pod).items():
            allocated = tuple(
                d for (uid, _, res), ids in self.allocated.items() if uid == pod.uid and res == resource for d in ids
            )
            out[resource] = self._hints(resource, requested, allocated, set())
        return out

    # ------------------------------------------------------------------ allocation
    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> dict[str, tuple[str, ...]]:
        to_reuse = self.to_reuse
        reuse = to_reuse.get(pod.uid)
        if reuse is None or len(to_reuse) > 1:  # only this pod's entry stays
            reuse = to_reuse.setdefault(pod.uid, {})
            for uid in [u for u in to_reuse if u != pod.uid]:
                del to_reuse[uid]
        granted: dict[str, tuple[str, ...]] = {}
        for resource, required in self._requests(container).items():
            granted[resource] = self._allocate_one(
                pod, container, resource, required, reuse.get(resource, set()), affinity
            )
        if not granted:
            return granted
        restartable_or_app = not pod.is_init(container.name) or any(
            c.restartable for c in pod.init_containers if c.name == container.name
        )
        for resource, ids in granted.items():
            pool = reuse.setdefault(resource, set())
            if restartable_or_app:
                pool.difference_update(ids)
            else:
                pool.update(ids)
        return granted

    def _allocate_one(
        self, pod: Pod, container: Container, resource: str, required: int, reusable: set[str], affinity: TopologyHint
    ) -> tuple[str, ...]:
        key = (pod.uid, container.name, resource)
        existing = self.allocated.get(key)
        if existing is not None and len(existing) != required:
            raise AdmissionError(
                f'pod "{pod.uid}" container "{container.name}" changed request for resource "{resource}" '
                f"from {len(existing)} to {required}"
            )
        restart = self.restarting
        if restart is not None and not restart.running(pod.uid, container.name):
            # devicesToAllocate past "Container detected running": the plugin must have registered again
            healthy = {i for i, d in self.devices[resource].items() if d.healthy}
            if resource not in restart.registered or not healthy:
                raise AdmissionError(f"no healthy devices present; cannot allocate unhealthy devices {resource}")
            if existing is not None and not set(existing) <= healthy:
                raise AdmissionError(
                    f"previously allocated devices are no longer healthy; cannot allocate unhealthy devices {resource}"
                )
        if existing is not None:
            return existing
        if required == 0:
            return ()
        picked: list[str] = []
        for dev in sorted(reusable):
            if len(picked) == required:
                break
            picked.append(dev)
        if len(picked) < required:
            needed = required - len(picked)
            available = self.available(resource) - set(picked)
            if len(available) < needed:
                raise AdmissionError(
                    f"requested number of devices unavailable for {resource}. Requested: {needed}, "
                    f"Available: {len(available)}"
                )
            devs = self.devices[resource]
            if affinity.affinity is None or not self.aligned(resource):
                order = sorted(available)
            else:
                in_hint = sorted(d for d in available if devs[d].numa_mask() & affinity.affinity)
                no_numa = sorted(d for d in available if not devs[d].numa)
                rest = sorted(d for d in available if devs[d].numa and not devs[d].numa_mask() & affinity.affinity)
                order = in_hint + no_numa + rest
            picked += order[:needed]
        self.allocated[key] = tuple(picked)
        return tuple(picked)
