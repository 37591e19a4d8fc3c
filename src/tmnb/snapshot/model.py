"""Snapshot v1: the one document every analysis, plot and report reads.

The model is a set of pydantic dataclasses so that one definition gives validation with
JSON paths, (de)serialisation and the published JSON Schema (docs/snapshot.schema.json).
Quantities from the Kubernetes API stay as the API's strings ("500m", "4Gi"); quantities
read from the node (NUMA memory, hugepages) are integers in bytes or pages.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Final, Literal, TypeVar, cast

from pydantic import AfterValidator, ConfigDict, Field, model_validator
from pydantic.dataclasses import dataclass

from tmnb.errors import InputError
from tmnb.redact import redact_argv, redact_text, redact_value
from tmnb.snapshot.values import non_negative_quantity

SCHEMA_ID: Final = "tmnb.snapshot/v1"

_STRICT = ConfigDict(extra="forbid")
_Item = TypeVar("_Item")
_Key = TypeVar("_Key")

CpuList = Annotated[str, Field(pattern=r"^(\d+(-\d+)?(,\d+(-\d+)?)*)?$", description="Linux cpu-list, e.g. 0-3,8-11")]
#: Free text that may quote what it came from (an event, an error naming a file's line): stored redacted.
Text = Annotated[str, AfterValidator(redact_text)]
#: A setting's value as the kubelet's JSON holds it (any JSON value), stored redacted.
Value = Annotated[Any, AfterValidator(redact_value)]
QuantityText = Annotated[
    str, AfterValidator(non_negative_quantity), Field(description="Kubernetes quantity, e.g. 4, 500m, 16Gi")
]
SettingSource = Literal["default", "file", "dropin", "flag", "configz", "nrt", "unknown"]
TaintEffect = Literal["NoSchedule", "PreferNoSchedule", "NoExecute"]


@dataclass(config=_STRICT, frozen=True)
class SnapshotSource:
    """Where the snapshot came from. Never credentials: a context *name* at most."""

    kind: Literal["live", "sample", "sandbox", "bundle"]
    context: str | None = None
    detail: Text | None = None


@dataclass(config=_STRICT, frozen=True)
class Layer:
    """One configuration layer that set a field but lost to a later one."""

    source: SettingSource
    value: Value
    detail: str | None = None


@dataclass(config=_STRICT, frozen=True)
class Setting:
    """An effective kubelet setting and the layer that decided it."""

    value: Value
    source: SettingSource
    detail: str | None = Field(default=None, description="file path, drop-in name or flag name")
    overridden: tuple[Layer, ...] = Field(default=(), description="earlier layers, lowest first")

    def as_layer(self) -> Layer:
        return Layer(self.source, self.value, self.detail)


@dataclass(config=_STRICT, frozen=True)
class HugePages:
    size: Annotated[str, Field(description="page size as Kubernetes names it, e.g. 2Mi, 1Gi")]
    total: Annotated[int, Field(ge=0, description="pages")]
    free: Annotated[int, Field(ge=0, description="pages")]


@dataclass(config=_STRICT, frozen=True)
class Cpu:
    cpu: Annotated[int, Field(ge=0, le=8191)]
    core: Annotated[int, Field(ge=0, description="core id unique within the node")]
    socket: Annotated[
        int, Field(ge=-1, description="physical package id; -1 where the kernel does not know it (POWER, s390)")
    ]
    numa: Annotated[int, Field(ge=0, le=1023)]
    online: bool = True


@dataclass(config=_STRICT, frozen=True)
class NumaZone:
    id: Annotated[int, Field(ge=0, le=1023, description="kernel node id; ids can be sparse and above 63")]
    cpus: CpuList
    memory_total: Annotated[int, Field(ge=0, description="bytes; 0 when the node has no meminfo")]
    memory_free: int | None = Field(default=None, ge=0, description="bytes")
    hugepages: list[HugePages] = Field(default_factory=list)
    distances: dict[int, int] = Field(
        default_factory=dict, description="sysfs distance row keyed by the node id each distance is to"
    )

    def distance_row(self) -> tuple[int, ...]:
        """The row as sysfs prints it: one distance per online node, in node-id order."""
        return tuple(self.distances[k] for k in sorted(self.distances))


@dataclass(config=_STRICT, frozen=True)
class Device:
    resource: str
    id: str
    numa: Annotated[list[int] | None, Field(description="NUMA ids the device plugin reports; null = no topology")]
    healthy: bool = True


@dataclass(config=_STRICT, frozen=True)
class MemoryBlock:
    type: Annotated[str, Field(description="memory or hugepages-<size>")]
    size: Annotated[int, Field(ge=0, description="bytes")]
    numa: list[int]


@dataclass(config=_STRICT, frozen=True)
class DeviceAllocation:
    resource: str
    ids: list[str]
    numa: list[int] | None = None


@dataclass(config=_STRICT, frozen=True)
class Allocation:
    """What the node's resource managers gave one container."""

    pod_uid: str
    namespace: str
    pod: str
    container: str
    cpuset: Annotated[CpuList, Field(description="CPUs the container may run on (exclusive set or the shared pool)")]
    exclusive: Annotated[bool, Field(description="true when the CPU manager pinned exclusive CPUs")]
    numa: list[int] = Field(default_factory=list, description="NUMA zones the cpuset spans")
    memory: list[MemoryBlock] = Field(default_factory=list)
    devices: list[DeviceAllocation] = Field(default_factory=list)


@dataclass(config=_STRICT, frozen=True)
class Issue:
    """Something a collector could not read. Recorded, never fatal for the other nodes."""

    source: Annotated[str, Field(description="collector step, e.g. configz, lscpu, cpu_manager_state")]
    message: Text
    severity: Literal["error", "warning", "info"] = "error"


@dataclass(config=_STRICT, frozen=True)
class StateFile:
    """A resource manager's checkpoint as the kubelet's ``restoreState`` meets it when it starts."""

    manager: Literal["cpu", "memory"]
    path: Annotated[str, Field(description="on the node, e.g. /var/lib/kubelet/cpu_manager_state")]
    policy: str | None = Field(default=None, description="policyName, when the file loads")
    error: Text | None = Field(
        default=None, description="the kubelet's error restoring it (before the wrapping 'could not restore ...')"
    )
    error_after_policy: bool = Field(
        default=False, description="error comes after the policy comparison (a CPU list), not from loading"
    )
    unknown: Text | None = Field(default=None, description="why tmnb cannot tell what the kubelet does with it")
    refused_by: dict[str, Text] | None = Field(
        default=None,
        description="per checkpoint reader (a kubelet minor, '+PodLevelResourceManagers' where that gate changes "
        "the formats it tries): its error loading the file, for the readers that refuse it; null: not evaluated",
    )


@dataclass(config=_STRICT, frozen=True)
class NrtResource:
    """One resource of a NodeResourceTopology zone; quantities as the object carries them."""

    name: str
    capacity: QuantityText
    allocatable: QuantityText
    available: QuantityText


@dataclass(config=_STRICT, frozen=True)
class NrtZone:
    """A zone of the node's NodeResourceTopology object (topology.node.k8s.io/v1alpha2)."""

    name: str
    type: str
    costs: dict[str, int] = Field(default_factory=dict)
    resources: list[NrtResource] = Field(default_factory=list)


@dataclass(config=_STRICT, frozen=True)
class Versions:
    kubelet: str | None = None
    kube_proxy: str | None = None
    container_runtime: str | None = None
    kernel: str | None = None
    os_image: str | None = None


@dataclass(config=_STRICT, frozen=True)
class KubeletInfo:
    settings: dict[str, Setting] = Field(default_factory=dict, description="keyed by KubeletConfiguration JSON name")
    config_file: str | None = None
    config_dir: str | None = None
    flags: Annotated[list[str], AfterValidator(redact_argv)] = Field(
        default_factory=list, description="command line, secrets redacted"
    )
    kubeadm_managed: bool = False


@dataclass(config=_STRICT, frozen=True)
class Taint:
    """A node taint as ``spec.taints`` holds it; a cordon shows as ``node.kubernetes.io/unschedulable:NoSchedule``
    beside ``unschedulable``."""

    key: str
    effect: TaintEffect
    value: str = Field(default="", description="empty when the taint has none")
    time_added: str | None = Field(default=None, description="RFC 3339, as the API sets it for controller taints")


@dataclass(config=_STRICT, frozen=True)
class Toleration:
    """A pod toleration as ``spec.tolerations`` holds it (matched as Kubernetes does: ``snapshot.taints``)."""

    key: str = Field(default="", description="empty with operator Exists: every key")
    operator: str = Field(default="Equal", description="Equal (the API's empty operator) or Exists")
    value: str = ""
    effect: TaintEffect | None = Field(default=None, description="null: every effect")
    toleration_seconds: int | None = Field(default=None, description="how long a NoExecute taint is tolerated")


@dataclass(config=_STRICT, frozen=True)
class KubeletJournal:
    """A bounded, redacted excerpt of the node's kubelet log, kept raw so it can be re-read later."""

    source: Annotated[str, Field(description="where it was read: journalctl -u kubelet, or a log file's node path")]
    since: Annotated[str, Field(description="the --since bound asked for, in journalctl's syntax (e.g. -24h)")]
    max_bytes: Annotated[int, Field(ge=0, description="byte cap of the excerpt")]
    lines: list[str] = Field(default_factory=list, description="kubelet log lines, oldest first, redacted")
    truncated: bool = Field(default=False, description="older lines were cut at the byte or line cap, or all dropped")
    read_at: str | None = Field(default=None, description="RFC 3339 time of reading; gives yearless lines their year")


@dataclass(config=_STRICT, frozen=True)
class Node:
    name: str
    labels: dict[str, str] = Field(default_factory=dict)
    uid: str | None = None
    versions: Versions = Field(default_factory=Versions)
    capacity: dict[str, QuantityText] = Field(default_factory=dict)
    allocatable: dict[str, QuantityText] = Field(default_factory=dict)
    ready: bool | None = None
    unschedulable: bool = False
    taints: list[Taint] = Field(default_factory=list, description="spec.taints; absent in older snapshots")
    kubelet: KubeletInfo = Field(default_factory=KubeletInfo)
    cpus: list[Cpu] = Field(default_factory=list)
    numa: list[NumaZone] = Field(default_factory=list)
    devices: list[Device] = Field(default_factory=list)
    shared_pool: CpuList | None = Field(default=None, description="the CPU manager's defaultCpuSet")
    allocations: list[Allocation] = Field(default_factory=list)
    state_files: list[StateFile] = Field(
        default_factory=list, description="cpu/memory manager checkpoints on the node, as the kubelet restores them"
    )
    nrt: list[NrtZone] = Field(default_factory=list, description="NodeResourceTopology zones, when published")
    issues: list[Issue] = Field(default_factory=list)
    kubelet_journal: KubeletJournal | None = Field(default=None, description="kubelet log excerpt (node collector)")

    @model_validator(mode="before")
    @classmethod
    def _distance_rows_keyed_by_node(cls, data: Any) -> Any:
        """Snapshots written before distances were keyed hold each row as a list in zone-id order."""
        if not isinstance(data, dict) or not isinstance(data.get("numa"), list):
            return data
        zones = data["numa"]
        ids = sorted(z["id"] for z in zones if isinstance(z, dict) and isinstance(z.get("id"), int))
        if not any(isinstance(z, dict) and isinstance(z.get("distances"), list) for z in zones):
            return data
        keyed = [
            {**z, "distances": dict(zip(ids, z["distances"], strict=True))}
            if isinstance(z, dict) and isinstance(z.get("distances"), list) and len(z["distances"]) == len(ids)
            else z
            for z in zones
        ]
        return {**data, "numa": keyed}


@dataclass(config=_STRICT, frozen=True)
class OwnerRef:
    kind: str
    name: str
    uid: str | None = None
    controller_kind: str | None = Field(default=None, description="kind of the owner's own controller, e.g. Deployment")
    controller_name: str | None = None


@dataclass(config=_STRICT, frozen=True)
class Container:
    name: str
    requests: dict[str, QuantityText] = Field(default_factory=dict)
    limits: dict[str, QuantityText] = Field(default_factory=dict)
    restart_policy: str | None = Field(default=None, description="Always for sidecar init containers")
    image: str | None = None


@dataclass(config=_STRICT, frozen=True)
class PodResources:
    """Pod-level ``spec.resources`` (PodLevelResources)."""

    requests: dict[str, QuantityText] = Field(default_factory=dict)
    limits: dict[str, QuantityText] = Field(default_factory=dict)


@dataclass(config=_STRICT, frozen=True)
class Pod:
    namespace: str
    name: str
    uid: str
    node: str | None
    qos_class: Literal["Guaranteed", "Burstable", "BestEffort"]
    phase: str
    created: Annotated[str, Field(description="RFC 3339 creation timestamp")]
    reason: str | None = None
    message: Text | None = None
    owner: OwnerRef | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    containers: list[Container] = Field(default_factory=list)
    init_containers: list[Container] = Field(default_factory=list)
    priority_class: str | None = None
    volumes_emptydir: bool = Field(default=False, description="uses emptyDir (drain needs --delete-emptydir-data)")
    resources: PodResources | None = Field(
        default=None, description="pod-level spec.resources; null when the pod has none, {} when it is empty"
    )
    tolerations: list[Toleration] = Field(
        default_factory=list, description="spec.tolerations; absent in older snapshots"
    )


@dataclass(config=_STRICT, frozen=True)
class Event:
    namespace: str
    kind: str
    name: str
    reason: str
    message: Text
    type: Literal["Normal", "Warning"]
    count: int = 1
    first_seen: str | None = None
    last_seen: str | None = None
    node: str | None = None
    component: str | None = None


@dataclass(config=_STRICT, frozen=True)
class DisruptionBudget:
    namespace: str
    name: str
    selector: dict[str, str]
    min_available: str | None = None
    max_unavailable: str | None = None


@dataclass(config=_STRICT, frozen=True)
class Cluster:
    server_version: str | None = None
    platform: str | None = None


@dataclass(config=_STRICT, frozen=True)
class Snapshot:
    captured_at: Annotated[str, Field(description="RFC 3339, UTC")]
    source: SnapshotSource
    schema: Literal["tmnb.snapshot/v1"] = SCHEMA_ID
    cluster: Cluster = Field(default_factory=Cluster)
    nodes: list[Node] = Field(default_factory=list)
    pods: list[Pod] = Field(default_factory=list)
    events: list[Event] = Field(default_factory=list)
    disruption_budgets: list[DisruptionBudget] = Field(default_factory=list)

    def node(self, name: str) -> Node:
        """The node called ``name``; an ``InputError`` naming it (and the known ones) when absent."""
        found = self._index("_nodes_by_name", self.nodes, lambda n: n.name).get(name)
        if found:
            return found[0]
        known = ", ".join(n.name for n in self.nodes[:5]) + (", …" if len(self.nodes) > 5 else "")
        raise InputError(f"no node named {name!r} in this snapshot (nodes: {known or 'none'})", where="nodes")

    def pods_on(self, node: str) -> list[Pod]:
        """The pods bound to ``node``, in snapshot order."""
        return list(self._index("_pods_by_node", self.pods, lambda p: p.node).get(node, ()))

    def _index(self, slot: str, items: list[_Item], key: Callable[[_Item], _Key]) -> dict[_Key, list[_Item]]:
        """``items`` grouped by ``key``, made once per list: reports ask per node, and a scan of every
        pod for each of 5,000 nodes is minutes. A list replaced or grown since is indexed again."""
        cached = self.__dict__.get(slot)
        if cached is None or cached[0] is not items or cached[1] != len(items):
            groups: dict[_Key, list[_Item]] = {}
            for item in items:
                groups.setdefault(key(item), []).append(item)
            cached = (items, len(items), groups)
            object.__setattr__(self, slot, cached)
        return cast("dict[_Key, list[_Item]]", cached[2])  # kept in __dict__, whose values are Any
