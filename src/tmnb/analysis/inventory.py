"""The inventory report's tables: versions, cordons and taints, the kubelet minors and what differs between
them, settings with provenance, NUMA shapes, devices, Guaranteed pods and the pre-change checklist, all
computed from one Snapshot."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tmnb.analysis.minors import differences
from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.names import CPU_STATIC
from tmnb.kubelet.profiles import MAX_KUBELET_LAG, kubelet_skew, resolve
from tmnb.parse.kubelet_fields import RESOURCE_MANAGER_FIELDS
from tmnb.parse.quantity import parse_quantity
from tmnb.report.tables import some
from tmnb.snapshot import Layer, Node, NumaZone, Pod, Setting, Snapshot
from tmnb.snapshot.taints import CORDON_TAINT, cordoned, taint_text
from tmnb.versions import KubeVersion

#: Settings an SRE must see before touching the Topology Manager, in reading order.
KEY_SETTINGS = tuple(f for f in RESOURCE_MANAGER_FIELDS if f not in ("evictionHard", "featureGates"))
SETTING_COLUMNS = ["node", "setting", "value", "source", "detail", "on disk", "drift", "overrides"]
#: Reasons of pods the kubelet refused at admission (with the 1.16-era spelling of the first).
ADMISSION_REJECTIONS = frozenset(
    {"TopologyAffinityError", "Topology Affinity Error", "SMTAlignmentError", "UnexpectedAdmissionError"}
)
_CORE_RESOURCES = {"cpu", "memory", "pods", "ephemeral-storage"}
GIB = 1 << 30


def _render(value: object) -> str:
    """A setting as the kubelet's flags take it: ``cpu=500m, memory=1Gi`` (its map flags trim the
    space after a comma, which lets a narrow cell wrap there); a reservedMemory entry as
    ``NUMA 0: memory=1Gi``; lists joined by ``; ``."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Mapping):
        if set(value) == {"numaNode", "limits"} and isinstance(value["limits"], Mapping):
            return f"NUMA {value['numaNode']}: {_render(value['limits'])}"
        return ", ".join(f"{k}={_render(v)}" for k, v in sorted(value.items()))
    if isinstance(value, list | tuple):
        return "; ".join(_render(v) for v in value)
    return json.dumps(value)


def _version(text: str | None, where: str) -> KubeVersion | None:
    if not text:
        return None
    try:
        return KubeVersion.parse(text)
    except InputError:
        return None


def skew_note(server: KubeVersion | None, kubelet: KubeVersion | None) -> tuple[str, str]:
    """(severity, note) for one kubelet against the API server, per the version-skew policy (the profiles'
    ``kubelet_skew``: the one place that orders versions)."""
    if server is None or kubelet is None:
        return "warning", "version unknown"
    skew, lag = kubelet_skew(server, kubelet)
    if skew == "ahead":
        return "blocker", f"kubelet is newer than the API server ({kubelet} > {server}): unsupported"
    if skew == "beyond":
        behind = "a major version" if lag is None else f"{lag} minors"
        return "blocker", f"kubelet is {behind} behind the API server: beyond the supported skew of {MAX_KUBELET_LAG}"
    if skew == "behind":
        return (
            "warning",
            f"{lag} minor{'s' if lag != 1 else ''} behind the API server: upgrade with a drain, not in place",
        )
    return "ok", "same minor as the API server"


def versions(snapshot: Snapshot) -> pd.DataFrame:
    server = _version(snapshot.cluster.server_version, "cluster.server_version")
    rows = []
    for node in snapshot.nodes:
        kubelet = _version(node.versions.kubelet, f"{node.name}.versions.kubelet")
        severity, note = skew_note(server, kubelet)
        rows.append(
            {
                "node": node.name,
                "kubelet": node.versions.kubelet,
                "api_server": snapshot.cluster.server_version,
                "runtime": node.versions.container_runtime,
                "kernel": node.versions.kernel,
                "skew": severity,
                "note": note,
            }
        )
    return pd.DataFrame(rows, columns=["node", "kubelet", "api_server", "runtime", "kernel", "skew", "note"])


def scheduling(snapshot: Snapshot) -> pd.DataFrame:
    """Per node, what decides whether new pods land there: Ready, the cordon (since when, when the API
    stamped its taint) and the other taints, as ``kubectl describe node`` writes them."""
    rows = []
    for node in snapshot.nodes:
        since = next((t.time_added for t in node.taints if t.key == CORDON_TAINT and t.time_added), None)
        rows.append(
            {
                "node": node.name,
                "ready": {True: "yes", False: "no", None: "unknown"}[node.ready],
                "cordoned": (f"yes, since {since}" if since else "yes") if cordoned(node) else "no",
                "taints": ", ".join(taint_text(t) for t in node.taints if t.key != CORDON_TAINT),
            }
        )
    return pd.DataFrame(rows, columns=["node", "ready", "cordoned", "taints"])


def kubelet_minors(snapshot: Snapshot) -> pd.DataFrame:
    """One row per kubelet minor the fleet reports: how many nodes, which versions, the minor tmnb predicts
    them as and whether that is their own (``modelled``; outside 1.33-1.37, or unknown, the nearest)."""
    groups: dict[tuple[int, int] | None, list[Node]] = defaultdict(list)
    for node in snapshot.nodes:
        version = _version(node.versions.kubelet, f"{node.name}.versions.kubelet")
        groups[None if version is None else (version.major, version.minor)].append(node)
    rows = []
    for key, nodes in sorted(groups.items(), key=lambda kv: (kv[0] is None, kv[0] or (0, 0))):
        resolved = resolve(_version(nodes[0].versions.kubelet, ""))
        versions = Counter(n.versions.kubelet or "unknown" for n in nodes)
        rows.append(
            {
                "kubelet": "unknown" if key is None else f"{key[0]}.{key[1]}",
                "nodes": len(nodes),
                "versions": ", ".join(f"{v} ×{c}" if c > 1 else v for v, c in sorted(versions.items())),
                "predicted as": resolved.profile.name,
                "modelled": resolved.modelled,
                "for example": some(sorted(n.name for n in nodes), 3),
            }
        )
    return pd.DataFrame(rows, columns=["kubelet", "nodes", "versions", "predicted as", "modelled", "for example"])


def minor_differences(snapshot: Snapshot) -> pd.DataFrame:
    """What differs between the kubelet minors the fleet is predicted as (``minors.differences``), with
    the feature gates any node sets besides the Topology Manager's."""
    profiles = [resolve(_version(n.versions.kubelet, "")).profile for n in snapshot.nodes]
    gates = {g for n in snapshot.nodes for g in _setting(n, "featureGates") or {}}
    return differences(profiles, gates)


def settings(snapshot: Snapshot, names: tuple[str, ...] = KEY_SETTINGS) -> pd.DataFrame:
    """One row per (node, setting): the effective value, the layer that set it, what it beat."""
    rows = []
    for node in snapshot.nodes:
        for name in names:
            setting = node.kubelet.settings.get(name)
            if setting is None:
                rows.append(
                    {
                        "node": node.name,
                        "setting": name,
                        "value": "",
                        "source": "unknown",
                        "detail": "",
                        "on disk": "",
                        "drift": False,
                        "overrides": "",
                    }
                )
                continue
            deciding = _on_disk(setting)
            earlier = setting.overridden[:-1] if setting.source == "configz" else setting.overridden
            overrides = "; ".join(
                f"{layer.source}{f' ({layer.detail})' if layer.detail else ''} said {_render(layer.value)}"
                for layer in earlier
                if layer.source != "default" and deciding is not None and layer.value != deciding.value
            )
            rows.append(
                {
                    "node": node.name,
                    "setting": name,
                    "value": _render(setting.value),
                    "source": setting.source,
                    "detail": setting.detail or "",
                    "on disk": "" if deciding is None else deciding.source,
                    "drift": deciding is not None and setting.source == "configz" and deciding.value != setting.value,
                    "overrides": overrides,
                }
            )
    return pd.DataFrame(rows, columns=SETTING_COLUMNS)


def _on_disk(setting: Setting) -> Layer | None:
    """The layer that decides the value on disk: the setting itself, or, when /configz reported
    it, the last on-disk layer (what a kubelet restart would read)."""
    if setting.source != "configz":
        return setting.as_layer()
    return setting.overridden[-1] if setting.overridden else None


def settings_matrix(snapshot: Snapshot) -> pd.DataFrame:
    """Nodes as rows, key settings as columns; ⚑flag marks values set on the command line, ≠disk a
    running value (/configz) that differs from what the node's files say (a restart would change it)."""
    table = settings(snapshot)
    table["shown"] = (
        table["value"]
        + table["on disk"].map(lambda s: " ⚑flag" if s == "flag" else "")
        + table["drift"].map(lambda d: " ≠disk" if d else "")
    )
    return table.pivot(index="node", columns="setting", values="shown").reindex(columns=list(KEY_SETTINGS))


def runs(values: Sequence[int], sep: str, least: int = 3) -> str:
    """Values joined by ``sep``, a run of ``least`` or more equal ones as ``value×count``: a GB200's
    34 zones read ``72/72/0×32``, not thirty-two zeros."""
    parts = []
    for value, group in itertools.groupby(values):
        count = len(list(group))
        parts.extend([f"{value}×{count}"] if count >= least else [str(value)] * count)
    return sep.join(parts)


@dataclass(frozen=True)
class Shape:
    """Hardware shape: what must match for two nodes to behave the same under the kubelet."""

    sockets: int
    numa_nodes: int
    cpus: int
    threads_per_core: int
    cpus_per_zone: tuple[int, ...]
    gib_per_zone: tuple[int, ...]
    devices_per_zone: tuple[tuple[str, int], ...]

    @property
    def label(self) -> str:
        devs = ", ".join(f"{n}x {r}" for r, n in self.devices_per_zone)
        zones = runs(self.cpus_per_zone, "/")
        text = (
            f"{self.sockets}S {self.numa_nodes}N {self.cpus}T (SMT{self.threads_per_core}) "
            f"CPUs per zone {zones}, {sum(self.gib_per_zone)} GiB"
        )
        return f"{text}; {devs}" if devs else text


def shape_of(node: Node) -> Shape:
    cores: Counter[int] = Counter(c.core for c in node.cpus)
    zones = sorted(node.numa, key=lambda z: z.id)
    devices = Counter(d.resource for d in node.devices)
    return Shape(
        sockets=len({c.socket for c in node.cpus}),
        numa_nodes=len(zones),
        cpus=len(node.cpus),
        threads_per_core=max(cores.values(), default=0),
        cpus_per_zone=tuple(len(CPUSet.parse(z.cpus)) for z in zones),
        gib_per_zone=tuple(round(z.memory_total / GIB) for z in zones),
        devices_per_zone=tuple(sorted(devices.items())),
    )


def _shape_groups(snapshot: Snapshot) -> list[tuple[Shape, list[Node]]]:
    """Identical nodes grouped by hardware shape, the commonest shape first (shape 1, 2, ...)."""
    groups: dict[Shape, list[Node]] = defaultdict(list)
    for node in snapshot.nodes:
        groups[shape_of(node)].append(node)
    return sorted(groups.items(), key=lambda kv: (-len(kv[1]), kv[0].label))


def shapes(snapshot: Snapshot) -> pd.DataFrame:
    """One row per hardware shape: its description and nodes, said once for all its zones."""
    rows = [
        {
            "shape": number,
            "hardware": shape.label,
            "nodes": len(nodes),
            "node_names": some(sorted(n.name for n in nodes), 12),
        }
        for number, (shape, nodes) in enumerate(_shape_groups(snapshot), start=1)
    ]
    return pd.DataFrame(rows)


def _alike(group: list[NumaZone], zone: NumaZone) -> bool:
    """Whether ``zone`` joins the zones before it: no CPUs, the same memory and hugepages, the same
    distance among all of them, and the same distance from each to every zone outside."""
    first = group[0]
    if zone.cpus or first.cpus or zone.memory_total != first.memory_total or zone.hugepages != first.hugepages:
        return False
    if set(zone.distances) != set(first.distances) or zone.id not in first.distances:
        return False
    members = {z.id for z in group} | {zone.id}
    within = first.distances[zone.id]
    return all(
        z.distances[k] == (within if k in members else first.distances[k])
        for z in (*group, zone)
        for k in z.distances
        if k != z.id and (k in members or k in first.distances)
    )


def _distances(group: list[NumaZone]) -> str:
    """The distances of a zone (or of alike zones) to the others: ``to 1: 21``, runs of zones at the
    same distance as one cpu-list style range, a group's own distance as ``within``; 10 to itself
    (local) is left out unless it is not 10."""
    own = {z.id for z in group}
    first = group[0]
    parts: list[str] = []
    if first.distances.get(first.id, 10) != 10:
        parts.append(f"itself: {first.distances[first.id]}")
    others = [(k, d) for k, d in sorted(first.distances.items()) if k not in own]
    for distance, run in itertools.groupby(others, key=lambda kd: kd[1]):
        parts.append(f"to {CPUSet(k for k, _ in run)}: {distance}")
    if len(group) > 1:
        parts.append(f"within {CPUSet(own)}: {first.distances[group[1].id]}")
    return "; ".join(parts)


def numa_layout(snapshot: Snapshot) -> pd.DataFrame:
    """One row per NUMA zone per hardware shape (``shapes`` describes each once); zones alike in every
    way (a GB200's CPU-less GPU-memory zones) share one row."""
    rows = []
    for number, (_, nodes) in enumerate(_shape_groups(snapshot), start=1):
        groups: list[list[NumaZone]] = []
        for zone in sorted(nodes[0].numa, key=lambda z: z.id):
            if groups and _alike(groups[-1], zone):
                groups[-1].append(zone)
            else:
                groups.append([zone])
        for group in groups:
            zone = group[0]
            rows.append(
                {
                    "shape": number,
                    "numa": str(CPUSet(z.id for z in group)),
                    "cpus": zone.cpus,
                    "memory_gib": round(zone.memory_total / GIB, 1),
                    "hugepages": ", ".join(f"{h.total}x{h.size}" for h in zone.hugepages if h.total) or "",
                    "distances": _distances(group),
                }
            )
    return pd.DataFrame(rows)


def devices(snapshot: Snapshot) -> pd.DataFrame:
    """Device-plugin devices per node, resource and NUMA zone ("none" = no topology reported)."""
    counts: Counter[tuple[str, str, str]] = Counter()
    for node in snapshot.nodes:
        for dev in node.devices:
            zones = ",".join(str(n) for n in dev.numa) if dev.numa else "none"
            counts[(node.name, dev.resource, zones)] += 1
    rows = [{"node": n, "resource": r, "numa": z, "devices": c} for (n, r, z), c in sorted(counts.items())]
    return pd.DataFrame(rows, columns=["node", "resource", "numa", "devices"])


def extended_resources(snapshot: Snapshot) -> pd.DataFrame:
    """Extended resources and hugepages as the node advertises them to the scheduler."""
    rows = [
        {"node": node.name, "resource": name, "capacity": cap, "allocatable": node.allocatable.get(name, "")}
        for node in snapshot.nodes
        for name, cap in sorted(node.capacity.items())
        if name not in _CORE_RESOURCES
    ]
    return pd.DataFrame(rows, columns=["node", "resource", "capacity", "allocatable"])


def _setting(node: Node, name: str) -> Any:
    setting = node.kubelet.settings.get(name)
    return None if setting is None else setting.value


def is_integer_cpu(quantity: str | None) -> bool:
    if not quantity:
        return False
    value = parse_quantity(quantity)
    return value > 0 and value == value.to_integral_value()


def _exclusive_expected(pod: Pod, container: str, node: Node | None) -> tuple[bool, str]:
    spec = next(c for c in pod.containers if c.name == container)
    if node is None:
        return False, "not bound to a node in this snapshot"
    if _setting(node, "cpuManagerPolicy") != CPU_STATIC:
        return False, "node's cpuManagerPolicy is not static"
    if pod.phase != "Running":
        return False, f"pod is {pod.phase}"
    if not is_integer_cpu(spec.requests.get("cpu")):
        return False, f"CPU request {spec.requests.get('cpu')!r} is not a whole number"
    return True, "Guaranteed, integer CPU request, static policy"


def exclusive_containers(snapshot: Snapshot) -> list[tuple[Pod, str]]:
    """The containers the kubelet gives exclusive CPUs: Guaranteed, running, a whole-number CPU request,
    on a static-policy node."""
    nodes = {n.name: n for n in snapshot.nodes}
    return [
        (pod, c.name)
        for pod in snapshot.pods
        if pod.qos_class == "Guaranteed"
        for c in pod.containers
        if _exclusive_expected(pod, c.name, nodes.get(pod.node or ""))[0]
    ]


def guaranteed_pods(snapshot: Snapshot) -> pd.DataFrame:
    """Guaranteed containers and whether each gets exclusive CPUs, with the reason."""
    nodes = {n.name: n for n in snapshot.nodes}
    allocs = {(a.pod_uid, a.container): a for n in snapshot.nodes for a in n.allocations}
    rows = []
    for pod in snapshot.pods:
        if pod.qos_class != "Guaranteed":
            continue
        for c in pod.containers:
            expected, why = _exclusive_expected(pod, c.name, nodes.get(pod.node or ""))
            alloc = allocs.get((pod.uid, c.name))
            exclusive = bool(alloc and alloc.exclusive)
            rows.append(
                {
                    "namespace": pod.namespace,
                    "pod": pod.name,
                    "container": c.name,
                    "node": pod.node,
                    "cpu": c.requests.get("cpu", ""),
                    "exclusive": exclusive,
                    "cpuset": alloc.cpuset if alloc else "",
                    "numa": ",".join(map(str, alloc.numa)) if alloc else "",
                    "why": why,
                    "consistent": expected == exclusive or alloc is None,
                }
            )
    return pd.DataFrame(rows)


def qos_summary(snapshot: Snapshot) -> pd.DataFrame:
    table = pd.DataFrame([{"node": p.node or "(unbound)", "qos": p.qos_class, "phase": p.phase} for p in snapshot.pods])
    if table.empty:
        return table
    return table.pivot_table(index="node", columns="qos", aggfunc="size", fill_value=0)


def admission_failures(snapshot: Snapshot) -> pd.DataFrame:
    """Pods the kubelet rejected at admission (both the modern and the 1.16-era reason spelling)."""
    rows = [
        {
            "namespace": p.namespace,
            "pod": p.name,
            "node": p.node,
            "reason": p.reason,
            "message": p.message,
            "owner": f"{p.owner.kind}/{p.owner.name}" if p.owner else "",
        }
        for p in snapshot.pods
        if p.phase == "Failed" and p.reason in ADMISSION_REJECTIONS
    ]
    return pd.DataFrame(rows, columns=["namespace", "pod", "node", "reason", "message", "owner"])


def overrides(snapshot: Snapshot) -> pd.DataFrame:
    """Settings whose effective value beat a different value in an earlier layer (e.g. flag over file)."""
    table = settings(snapshot)
    return table[table["overrides"] != ""].reset_index(drop=True)


def headline(snapshot: Snapshot) -> str:
    source = snapshot.source.kind + (f" (context {snapshot.source.context})" if snapshot.source.context else "")
    return (
        f"Snapshot of **{len(snapshot.nodes)} nodes** and **{len(snapshot.pods)} pods**, "
        f"captured {snapshot.captured_at} from the {source} source; API server {snapshot.cluster.server_version}."
    )
