"""Snapshot records rendered as the JSON the API server sends, to serve from the fake API."""

from __future__ import annotations

from typing import Any

from tmnb.snapshot import Container, Node, Pod, Snapshot

NRT_LIST = "/apis/topology.node.k8s.io/v1alpha2/noderesourcetopologies"


def node_json(node: Node) -> dict[str, Any]:
    v = node.versions
    info = {
        "kubeletVersion": v.kubelet or "",
        "kubeProxyVersion": v.kube_proxy or "",
        "containerRuntimeVersion": v.container_runtime or "",
        "kernelVersion": v.kernel or "",
        "osImage": v.os_image or "",
        "machineID": "m",
    }
    conditions = [] if node.ready is None else [{"type": "Ready", "status": "True" if node.ready else "False"}]
    spec: dict[str, Any] = {"unschedulable": True} if node.unschedulable else {}
    if node.taints:
        spec["taints"] = [
            {"key": t.key, "effect": t.effect}
            | ({"value": t.value} if t.value else {})
            | ({"timeAdded": t.time_added} if t.time_added else {})
            for t in node.taints
        ]
    return {
        "metadata": {"name": node.name, "uid": node.uid, "labels": node.labels},
        "spec": spec,
        "status": {
            "capacity": node.capacity,
            "allocatable": node.allocatable,
            "conditions": conditions,
            "nodeInfo": info,
        },
    }


def configz_json(node: Node) -> dict[str, Any]:
    return {"kubeletconfig": {k: s.value for k, s in node.kubelet.settings.items()}}


def _container(c: Container) -> dict[str, Any]:
    out: dict[str, Any] = {"name": c.name, "resources": {"requests": c.requests, "limits": c.limits}}
    if c.image:
        out["image"] = c.image
    if c.restart_policy:
        out["restartPolicy"] = c.restart_policy
    return out


def pod_json(pod: Pod) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": pod.uid,
        "creationTimestamp": pod.created,
        "labels": pod.labels,
    }
    if pod.owner:
        meta["ownerReferences"] = [
            {"apiVersion": "apps/v1", "kind": pod.owner.kind, "name": pod.owner.name, "uid": pod.owner.uid,
             "controller": True}
        ]  # fmt: skip
    spec: dict[str, Any] = {"containers": [_container(c) for c in pod.containers]}
    if pod.init_containers:
        spec["initContainers"] = [_container(c) for c in pod.init_containers]
    if pod.node:
        spec["nodeName"] = pod.node
    if pod.priority_class:
        spec["priorityClassName"] = pod.priority_class
    if pod.volumes_emptydir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    if pod.tolerations:
        spec["tolerations"] = [
            {k: v for k, v in (("key", t.key), ("operator", t.operator), ("value", t.value), ("effect", t.effect),
                               ("tolerationSeconds", t.toleration_seconds)) if v not in ("", None)}
            for t in pod.tolerations
        ]  # fmt: skip
    status = {"phase": pod.phase, "qosClass": pod.qos_class}
    status |= {k: v for k, v in (("reason", pod.reason), ("message", pod.message)) if v}
    return {"metadata": meta, "spec": spec, "status": status}


def owners_json(snapshot: Snapshot, kind: str) -> list[dict[str, Any]]:
    seen = {}
    for p in snapshot.pods:
        o = p.owner
        if o and o.kind == kind and o.uid and o.controller_kind:
            seen[o.uid] = {
                "metadata": {
                    "name": o.name,
                    "namespace": p.namespace,
                    "uid": o.uid,
                    "ownerReferences": [{"kind": o.controller_kind, "name": o.controller_name, "controller": True}],
                }
            }
    return list(seen.values())


def api_lists(snapshot: Snapshot) -> dict[str, list[dict[str, Any]]]:
    return {
        "/api/v1/nodes": [node_json(n) for n in snapshot.nodes],
        "/api/v1/pods": [pod_json(p) for p in snapshot.pods],
        "/api/v1/events": [
            {
                "metadata": {"name": f"e{i}", "namespace": e.namespace},
                "involvedObject": {"kind": e.kind, "name": e.name, "namespace": e.namespace},
                "reason": e.reason,
                "message": e.message,
                "type": e.type,
                "count": e.count,
                "firstTimestamp": e.first_seen,
                "lastTimestamp": e.last_seen,
                "source": {"component": e.component, "host": e.node},
            }
            for i, e in enumerate(snapshot.events)
        ],
        "/apis/policy/v1/poddisruptionbudgets": [
            {
                "metadata": {"name": b.name, "namespace": b.namespace},
                "spec": {"selector": {"matchLabels": b.selector}}
                | ({"minAvailable": b.min_available} if b.min_available else {})
                | ({"maxUnavailable": b.max_unavailable} if b.max_unavailable else {}),
            }
            for b in snapshot.disruption_budgets
        ],
        "/apis/apps/v1/replicasets": owners_json(snapshot, "ReplicaSet"),
        "/apis/batch/v1/jobs": owners_json(snapshot, "Job"),
    }


def configz_paths(snapshot: Snapshot) -> dict[str, Any]:
    return {f"/api/v1/nodes/{n.name}/proxy/configz": configz_json(n) for n in snapshot.nodes}
