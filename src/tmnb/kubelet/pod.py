"""Pods as the kubelet's resource managers see them: containers with parsed quantities, QoS class,
and the init/sidecar rules for what a container or a whole pod requests.

Quantities are parsed by ``tmnb.parse.quantity`` (the official client's parser); ``value()``/``milli_value()``
round up like Go's ``Quantity.Value()``/``MilliValue()``, which decides whether a CPU request is
"integer" for the static policy. No API defaulting is applied: a container with limits but no
requests keeps empty requests, exactly as the kubelet would see a raw object.

Ports ``ComputePodQOS`` of pkg/apis/core/v1/helper/qos/qos.go and the pod and container requests of
k8s.io/component-helpers/resource/helpers.go, as the resource managers read them (1.33–1.37).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final, Literal

from tmnb.errors import InputError
from tmnb.parse.quantity import quantity

QosClass = Literal["Guaranteed", "Burstable", "BestEffort"]
GUARANTEED: Final = "Guaranteed"
BURSTABLE: Final = "Burstable"
BEST_EFFORT: Final = "BestEffort"
_QOS_RESOURCES = ("cpu", "memory")
_ZERO = Decimal(0)  # Decimals compare and add faster with a Decimal than with an int


def value(q: Decimal) -> int:
    """Go ``Quantity.Value()``: rounded up, away from zero."""
    return math.ceil(q) if q >= 0 else math.floor(q)


def milli_value(q: Decimal) -> int:
    return value(q * 1000)


def _resources(raw: object, where: str) -> dict[str, Decimal]:
    """Parsed quantities by resource name. Dicts skip the (slow) Mapping check, and a value's field
    name is only spelled out when it is wrong: every pod of a fleet comes through here."""
    if raw is None:
        return {}
    if type(raw) is dict:
        try:  # every value a quantity string parsed before, or a Decimal (as ``from_pod_dict`` passes them on)
            return {
                name if type(name) is str else str(name): value if type(value) is Decimal else _PARSED[value]
                for name, value in raw.items()
            }
        except (KeyError, TypeError):
            pass
    if not isinstance(raw, dict) and not isinstance(raw, Mapping):
        raise InputError("expected a mapping of resource name to quantity", where=where)
    out = {}
    for name, value in raw.items():
        q = _PARSED.get(value) if type(value) is str else None
        if q is None:
            try:
                q = quantity(value, "")
            except InputError as err:
                raise InputError(err.message, where=f"{where}.{name}") from None
            if type(value) is str and len(_PARSED) < _PARSED_MAX:
                _PARSED[value] = q
        out[str(name)] = q
    return out


#: Quantity strings already parsed by ``_resources`` (Decimals are immutable, so they are shared): a
#: fleet spells the same few quantities for every container, and a dict lookup is a third of the
#: cost of the checked parse.
_PARSED: dict[str, Decimal] = {}
_PARSED_MAX = 4096


@dataclass(frozen=True)
class Container:
    """A container's name, requests and limits (quantity strings or Decimals), and for init
    containers the restart policy ("Always" makes it a restartable sidecar)."""

    name: str
    # Any: quantities as given (strings, ints, Decimals), Decimals once constructed; the dataclass
    # has one type for both, and the managers read them as Decimals.
    requests: Mapping[str, Any] = field(default_factory=dict)
    limits: Mapping[str, Any] = field(default_factory=dict)
    restart_policy: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str):
            raise InputError(f"container name must be a string, got {self.name!r}")
        object.__setattr__(self, "requests", _resources(self.requests, f"container {self.name!r}: requests"))
        object.__setattr__(self, "limits", _resources(self.limits, f"container {self.name!r}: limits"))

    @property
    def restartable(self) -> bool:
        return self.restart_policy == "Always"


@dataclass(frozen=True)
class Pod:
    """Enough of a v1 Pod for admission: identity, containers, optional ``status.qosClass`` and
    optional pod-level ``spec.resources``."""

    uid: str
    name: str
    namespace: str = "default"
    containers: tuple[Container, ...] = ()
    init_containers: tuple[Container, ...] = ()
    qos_class: str | None = None
    pod_requests: Mapping[str, Any] | None = None  # Any: as Container.requests
    pod_limits: Mapping[str, Any] | None = None
    #: ``spec.resources`` is present (even empty): with PodLevelResources on, 1.34-1.36 then compute the
    #: QoS class from it alone, so ``{}`` makes the pod BestEffort
    pod_resources_given: bool = False
    # Every manager walks the containers and asks for the QoS class several times per pod, so
    # both are made once at construction (the pod is frozen, and nothing they read can change).
    _all: tuple[Container, ...] = field(init=False, repr=False, compare=False)
    _pod_level: bool = field(init=False, repr=False, compare=False)
    _pod_level_set: bool = field(init=False, repr=False, compare=False)
    _qos: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if type(self.containers) is not tuple:
            object.__setattr__(self, "containers", tuple(self.containers))
        if type(self.init_containers) is not tuple:
            object.__setattr__(self, "init_containers", tuple(self.init_containers))
        everyone = (*self.init_containers, *self.containers)
        for c in everyone:
            if not isinstance(c, Container):
                raise InputError(f"pod {self.name!r}: containers must be Container objects, got {type(c).__name__}")
        if len(everyone) > 1:
            names = [c.name for c in everyone]
            if len(set(names)) != len(names):
                raise InputError(f"pod {self.name!r}: container names must be unique, got {names}")
        if self.qos_class not in (None, "", GUARANTEED, BURSTABLE, BEST_EFFORT):
            raise InputError(f"pod {self.name!r}: qosClass must be Guaranteed, Burstable or BestEffort")
        if self.pod_requests is not None:
            object.__setattr__(self, "pod_requests", _resources(self.pod_requests, "spec.resources.requests"))
        if self.pod_limits is not None:
            object.__setattr__(self, "pod_limits", _resources(self.pod_limits, "spec.resources.limits"))
        requests, limits = self.pod_requests, self.pod_limits
        object.__setattr__(self, "_all", everyone)
        object.__setattr__(self, "_pod_level", bool(requests) or bool(limits))
        object.__setattr__(
            self,
            "_pod_level_set",
            (requests is not None and any(map(_pod_level_resource, requests)))
            or (limits is not None and any(map(_pod_level_resource, limits))),
        )
        object.__setattr__(self, "_qos", self.qos_class or compute_qos(self))

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_pod_level_resources(self) -> bool:
        return self._pod_level

    @property
    def pod_level_resources_set(self) -> bool:
        """``IsPodLevelResourcesSet``: pod-level requests or limits name cpu, memory or a hugepage size."""
        return self._pod_level_set

    def all_containers(self) -> tuple[Container, ...]:
        """Init containers, then app containers (one tuple, made at construction)."""
        return self._all

    def is_init(self, name: str) -> bool:
        return bool(self.init_containers) and any(c.name == name for c in self.init_containers)

    def qos(self) -> str:
        """``GetPodQOS``: the status field if set, else computed like ``ComputePodQOS``, at
        construction (every manager asks for every container)."""
        return self._qos

    @classmethod
    def from_pod_dict(cls, obj: Mapping[str, Any], *, where: str = "pod") -> Pod:
        """Build from a Kubernetes v1 Pod as JSON (``kubectl get pod -o json``), no defaulting."""
        if not isinstance(obj, Mapping):
            raise InputError("expected a v1 Pod object", where=where)
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        if not isinstance(meta, Mapping) or not isinstance(spec, Mapping) or not isinstance(status, Mapping):
            raise InputError("metadata, spec and status must be objects", where=where)

        def containers(key: str) -> tuple[Container, ...]:
            raw = spec.get(key) or []
            if not isinstance(raw, Sequence) or isinstance(raw, str):
                raise InputError(f"spec.{key} must be a list", where=where)
            out = []
            for i, c in enumerate(raw):
                if not isinstance(c, Mapping):
                    raise InputError(f"spec.{key}[{i}] must be an object", where=where)
                res = c.get("resources") or {}
                out.append(
                    Container(
                        name=str(c.get("name", "")),
                        requests=_resources(res.get("requests"), f"{where}.spec.{key}[{i}].resources.requests"),
                        limits=_resources(res.get("limits"), f"{where}.spec.{key}[{i}].resources.limits"),
                        restart_policy=c.get("restartPolicy"),
                    )
                )
            return tuple(out)

        pod_res = spec.get("resources")
        return cls(
            uid=str(meta.get("uid", "")),
            name=str(meta.get("name", "")),
            namespace=str(meta.get("namespace") or "default"),
            containers=containers("containers"),
            init_containers=containers("initContainers"),
            qos_class=status.get("qosClass") or None,
            pod_requests=(pod_res or {}).get("requests") if isinstance(pod_res, Mapping) else None,
            pod_limits=(pod_res or {}).get("limits") if isinstance(pod_res, Mapping) else None,
            pod_resources_given=isinstance(pod_res, Mapping),
        )


def _pod_level_resource(name: str) -> bool:
    return name in _QOS_RESOURCES or name.startswith("hugepages-")


def container_qos(pod: Pod) -> QosClass:
    """``ComputePodQOS`` from the containers alone, as while PodLevelResources is off."""
    return _qos_of([(c.requests, c.limits) for c in (*pod.containers, *pod.init_containers)])


def compute_qos(pod: Pod) -> QosClass:
    """``ComputePodQOS`` over cpu and memory; pod-level resources decide when present."""
    if pod.has_pod_level_resources:
        return _qos_of([(pod.pod_requests or {}, pod.pod_limits or {})])
    return container_qos(pod)


def _qos_of(groups: Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]) -> QosClass:
    requests: dict[str, Decimal] = {}
    limits: dict[str, Decimal] = {}
    guaranteed = True
    for reqs, lims in groups:
        for name in _QOS_RESOURCES:
            q = reqs.get(name)
            if q is not None and q > _ZERO:
                requests[name] = requests.get(name, _ZERO) + q
            q = lims.get(name)
            if q is not None and q > _ZERO:
                limits[name] = limits.get(name, _ZERO) + q
            else:  # Guaranteed needs a cpu and a memory limit on every container
                guaranteed = False
    if not requests and not limits:
        return BEST_EFFORT
    if guaranteed:
        for name, req in requests.items():
            if limits.get(name) != req:
                guaranteed = False
                break
    if guaranteed and len(requests) == len(limits):
        return GUARANTEED
    return BURSTABLE


def pod_level_request(pod: Pod, per_container: Callable[[Container], int | None]) -> int:
    """The larger of (max over init containers of earlier sidecars + itself) and (app containers +
    all sidecars), where ``per_container(c)`` is what one container counts for (None = skip)."""
    by_init = 0
    by_sidecars = 0
    for c in pod.init_containers:
        amount = per_container(c)
        if amount is None:
            continue
        if c.restartable:
            by_sidecars += amount
        elif by_sidecars + amount > by_init:
            by_init = by_sidecars + amount
    by_apps = 0
    for c in pod.containers:
        amount = per_container(c)
        if amount is not None:
            by_apps += amount
    return max(by_init, by_apps + by_sidecars)
