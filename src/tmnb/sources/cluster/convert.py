"""Kubernetes API objects (JSON as the API server sends it) to snapshot records.

The collector keeps responses as parsed JSON (no client model objects): at 150,000 pods the
client's deserialisation, not the network, is the cost. Pods go through ``kube_objects``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from typing import Any

from tmnb.errors import InputError
from tmnb.parse.kubelet_config import parse_configz
from tmnb.settings.effective import effective_settings
from tmnb.snapshot import (
    DisruptionBudget,
    Event,
    Issue,
    NrtResource,
    NrtZone,
    Pod,
    Setting,
    Taint,
    Versions,
)
from tmnb.snapshot import Node as SnapshotNode
from tmnb.versions import KubeVersion

#: NRT attributes that carry the kubelet's own setting (written by resource-topology-exporter).
NRT_SETTINGS = ("topologyManagerPolicy", "topologyManagerScope")


def _get(obj: Mapping[str, Any], *keys: str) -> Any:
    for key in keys:
        obj = obj.get(key) or {}
    return obj or None


def node_from_api(obj: Mapping[str, Any]) -> SnapshotNode:
    """Identity, versions, capacity, readiness, cordon and taints of a v1 Node."""
    meta, spec, status = obj.get("metadata") or {}, obj.get("spec") or {}, obj.get("status") or {}
    info = status.get("nodeInfo") or {}
    ready = next((c.get("status") for c in status.get("conditions") or [] if c.get("type") == "Ready"), None)
    return SnapshotNode(
        name=str(meta["name"]),
        labels={str(k): str(v) for k, v in (meta.get("labels") or {}).items()},
        uid=meta.get("uid"),
        versions=Versions(
            kubelet=info.get("kubeletVersion") or None,
            kube_proxy=info.get("kubeProxyVersion") or None,
            container_runtime=info.get("containerRuntimeVersion") or None,
            kernel=info.get("kernelVersion") or None,
            os_image=info.get("osImage") or None,
        ),
        capacity={str(k): str(v) for k, v in (status.get("capacity") or {}).items()},
        allocatable={str(k): str(v) for k, v in (status.get("allocatable") or {}).items()},
        ready=None if ready is None else ready == "True",
        unschedulable=bool(spec.get("unschedulable")),
        taints=[taint_from_api(t) for t in spec.get("taints") or []],
    )


def taint_from_api(obj: Mapping[str, Any]) -> Taint:
    """One entry of a v1 Node's ``spec.taints``."""
    return Taint(
        key=str(obj["key"]), effect=obj["effect"], value=str(obj.get("value") or ""), time_added=obj.get("timeAdded")
    )


def kubelet_version(node: SnapshotNode) -> KubeVersion | None:
    try:
        return KubeVersion.parse(node.versions.kubelet) if node.versions.kubelet else None
    except InputError:
        return None


def configz_settings(data: bytes, node: SnapshotNode) -> dict[str, Setting]:
    """/configz through the node proxy → settings with source "configz"."""
    doc = parse_configz(data, source=f"nodes/{node.name}/proxy/configz")
    return effective_settings(configz=doc, version=kubelet_version(node)).fields


def configz_forbidden(detail: str) -> Issue:
    """The RBAC a 403 on /configz asks for. tmnb reads /configz through the API server's node proxy,
    which the API server authorizes as ``get nodes/proxy`` whatever the kubelet version:
    ``nodes/configz`` (KubeletFineGrainedAuthz) only covers direct calls to the kubelet's port."""
    return Issue(
        source="configz",
        message=(
            "forbidden reading /configz: grant 'get' on nodes/proxy (deploy/collector-rbac.yaml, role "
            "tmnb-collector-configz); the API server's node proxy checks that, not nodes/configz, which "
            f"only applies to direct kubelet calls ({detail})"
        ),
    )


def nrt_zones(obj: Mapping[str, Any]) -> list[NrtZone]:
    """Zones of a NodeResourceTopology v1alpha2 object; quantities kept as strings."""
    return [
        NrtZone(
            name=str(z["name"]),
            type=str(z.get("type") or ""),
            costs={str(c["name"]): int(c["value"]) for c in z.get("costs") or []},
            resources=[
                NrtResource(
                    name=str(r["name"]),
                    capacity=str(r["capacity"]),
                    allocatable=str(r["allocatable"]),
                    available=str(r["available"]),
                )
                for r in z.get("resources") or []
            ],
        )
        for z in obj.get("zones") or []
    ]


def nrt_settings(obj: Mapping[str, Any]) -> dict[str, Setting]:
    """The Topology Manager policy and scope the exporter read from the kubelet (source "nrt")."""
    attrs = {a.get("name"): a.get("value") for a in obj.get("attributes") or [] if isinstance(a, Mapping)}
    name = (obj.get("metadata") or {}).get("name", "")
    return {
        key: Setting(value=attrs[key], source="nrt", detail=f"noderesourcetopologies/{name}")
        for key in NRT_SETTINGS
        if attrs.get(key)
    }


def event_from_api(obj: Mapping[str, Any]) -> Event:
    meta, involved = obj.get("metadata") or {}, obj.get("involvedObject") or {}
    source = obj.get("source") or {}
    return Event(
        namespace=str(meta.get("namespace") or involved.get("namespace") or ""),
        kind=str(involved.get("kind") or ""),
        name=str(involved.get("name") or ""),
        reason=str(obj.get("reason") or ""),
        message=str(obj.get("message") or ""),
        type="Warning" if obj.get("type") == "Warning" else "Normal",
        count=int(obj.get("count") or _get(obj, "series", "count") or 1),
        first_seen=obj.get("firstTimestamp") or obj.get("eventTime"),
        last_seen=obj.get("lastTimestamp") or _get(obj, "series", "lastObservedTime") or obj.get("eventTime"),
        node=source.get("host") or obj.get("reportingInstance") or None,
        component=source.get("component") or obj.get("reportingComponent") or None,
    )


def pdb_from_api(obj: Mapping[str, Any]) -> DisruptionBudget:
    meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
    selector = spec.get("selector") or {}
    labels = {str(k): str(v) for k, v in (selector.get("matchLabels") or {}).items()}
    for expr in selector.get("matchExpressions") or []:
        if expr.get("operator") == "In" and len(expr.get("values") or []) == 1:
            labels[str(expr["key"])] = str(expr["values"][0])  # the one expression form a label map can hold
    optional = {k: None if spec.get(k) is None else str(spec[k]) for k in ("minAvailable", "maxUnavailable")}
    return DisruptionBudget(
        namespace=str(meta.get("namespace") or ""),
        name=str(meta.get("name") or ""),
        selector=labels,
        min_available=optional["minAvailable"],
        max_unavailable=optional["maxUnavailable"],
    )


def owner_controllers(items: Iterable[Mapping[str, Any]]) -> dict[str, tuple[str, str]]:
    """Owner uid → (kind, name) of its own controller: a ReplicaSet's Deployment (or Argo Rollout,
    ...), a Job's CronJob."""
    out = {}
    for rs in items:
        meta = rs.get("metadata") or {}
        ref = next((r for r in meta.get("ownerReferences") or [] if r.get("controller")), None)
        if ref and meta.get("uid"):
            out[str(meta["uid"])] = (str(ref.get("kind")), str(ref.get("name")))
    return out


def with_controllers(pod: Pod, controllers: Mapping[str, tuple[str, str]]) -> Pod:
    """Set the owner's controller from the listed owners (authoritative over the name heuristic)."""
    owner = pod.owner
    if owner is None or owner.uid is None or owner.uid not in controllers:
        return pod
    kind, name = controllers[owner.uid]
    if (owner.controller_kind, owner.controller_name) == (kind, name):
        return pod
    return dataclasses.replace(pod, owner=dataclasses.replace(owner, controller_kind=kind, controller_name=name))
