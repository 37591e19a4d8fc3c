"""Snapshot records as the v1 API objects a real API server would return for them.

The sandbox serves these dicts as they are, so everything kubectl and the Python client read
(labels, ownerReferences, conditions, capacity) is derived here once, from the snapshot.
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from tmnb.snapshot import Container, DisruptionBudget, Event, Node, Pod, Taint, Toleration
from tmnb.snapshot.taints import CORDON_TAINT

Obj = dict[str, Any]


def now_rfc3339() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid() -> str:
    return str(uuid.uuid4())


def _taint(t: Taint) -> Obj:
    out: Obj = {"key": t.key, "effect": t.effect}
    return out | ({"value": t.value} if t.value else {}) | ({"timeAdded": t.time_added} if t.time_added else {})


def cordon_taint(spec: Obj, when: str) -> Obj:
    """``spec`` with the taint a cordon brings in step with ``unschedulable``, as the node lifecycle
    controller keeps it: added (stamped ``when``) on a cordon, removed on an uncordon."""
    taints = spec.get("taints") or []
    others = [t for t in taints if (t.get("key"), t.get("effect")) != (CORDON_TAINT, "NoSchedule")]
    if spec.get("unschedulable"):
        kept = next((t for t in taints if t not in others), None)
        others.append(kept or {"key": CORDON_TAINT, "effect": "NoSchedule", "timeAdded": when})
    out = {k: v for k, v in spec.items() if k != "taints"}
    return out | ({"taints": others} if others else {})


def node_object(node: Node, created: str) -> Obj:
    labels = {"kubernetes.io/hostname": node.name, "kubernetes.io/os": "linux", **node.labels}
    v = node.versions
    uid = node.uid or new_uid()
    spec: Obj = {"unschedulable": True} if node.unschedulable else {}
    if node.taints:
        spec["taints"] = [_taint(t) for t in node.taints]
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": node.name, "uid": uid, "creationTimestamp": created, "labels": labels},
        "spec": cordon_taint(spec, created),
        "status": {
            "capacity": dict(node.capacity),
            "allocatable": dict(node.allocatable),
            "conditions": [],
            "nodeInfo": {
                "kubeletVersion": v.kubelet or "",
                "kubeProxyVersion": v.kube_proxy or "",
                "containerRuntimeVersion": v.container_runtime or "",
                "kernelVersion": v.kernel or "",
                "osImage": v.os_image or "",
                "operatingSystem": "linux",
                "architecture": node.labels.get("kubernetes.io/arch", "amd64"),
                "bootID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"boot/{uid}")),
                "machineID": uuid.uuid5(uuid.NAMESPACE_URL, f"machine/{uid}").hex,
                "systemUUID": str(uuid.uuid5(uuid.NAMESPACE_URL, f"system/{uid}")),
            },
        },
    }


def _container(c: Container) -> Obj:
    resources = {k: dict(v) for k, v in (("requests", c.requests), ("limits", c.limits)) if v}
    out: Obj = {"name": c.name, "image": c.image or "registry.k8s.io/pause:3.10", "resources": resources}
    if c.restart_policy:
        out["restartPolicy"] = c.restart_policy
    return out


def _toleration(t: Toleration) -> Obj:
    fields = (("key", t.key), ("value", t.value), ("effect", t.effect), ("tolerationSeconds", t.toleration_seconds))
    return {"operator": t.operator} | {k: v for k, v in fields if v not in ("", None)}


def owner_reference(kind: str, name: str, uid: str) -> Obj:
    group = "v1" if kind == "Node" else ("batch/v1" if kind in ("Job", "CronJob") else "apps/v1")
    return {"apiVersion": group, "kind": kind, "name": name, "uid": uid, "controller": True, "blockOwnerDeletion": True}


def pod_object(pod: Pod, owner_uid: str | None) -> Obj:
    """The pod as the API holds it; status is the snapshot's, refined later by the node's kubelet."""
    meta: Obj = {
        "name": pod.name,
        "namespace": pod.namespace,
        "uid": pod.uid,
        "creationTimestamp": pod.created,
        "labels": dict(pod.labels),
    }
    if pod.owner:
        meta["ownerReferences"] = [owner_reference(pod.owner.kind, pod.owner.name, pod.owner.uid or owner_uid or "")]
    spec: Obj = {"containers": [_container(c) for c in pod.containers], "restartPolicy": "Always"}
    if pod.init_containers:
        spec["initContainers"] = [_container(c) for c in pod.init_containers]
    if pod.node:
        spec["nodeName"] = pod.node
    if pod.priority_class:
        spec["priorityClassName"] = pod.priority_class
    if pod.volumes_emptydir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    if pod.tolerations:
        spec["tolerations"] = [_toleration(t) for t in pod.tolerations]
    if pod.resources is not None:
        spec["resources"] = {
            k: dict(v) for k, v in (("requests", pod.resources.requests), ("limits", pod.resources.limits)) if v
        }
    status: Obj = {"phase": pod.phase, "qosClass": pod.qos_class}
    if pod.reason:
        status["reason"] = pod.reason
    if pod.message:
        status["message"] = pod.message
    if pod.phase == "Running":
        status.update(running_status(spec["containers"], pod.created))
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status}


def running_status(containers: list[Obj], started: str, *, ready: bool = True) -> Obj:
    """Conditions and container statuses of a pod whose containers (spec entries) all run; a
    just-started pod is not Ready yet (as while its readiness probe has not passed)."""
    flag = "True" if ready else "False"
    return {
        "startTime": started,
        "conditions": [
            {
                "type": t,
                "status": "True" if t in ("PodScheduled", "Initialized") else flag,
                "lastTransitionTime": started,
            }
            for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")
        ],
        "containerStatuses": [
            {
                "name": c["name"],
                "image": c.get("image", ""),
                "imageID": "",
                "ready": ready,
                "started": True,
                "restartCount": 0,
                "state": {"running": {"startedAt": started}},
            }
            for c in containers
        ],
    }


def pdb_object(pdb: DisruptionBudget, created: str) -> Obj:
    spec: Obj = {"selector": {"matchLabels": dict(pdb.selector)}}
    for key, value in (("minAvailable", pdb.min_available), ("maxUnavailable", pdb.max_unavailable)):
        if value is not None:
            spec[key] = int(value) if value.isdigit() else value
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": pdb.name, "namespace": pdb.namespace, "uid": new_uid(), "creationTimestamp": created},
        "spec": spec,
        "status": {},
    }


def controller_object(
    kind: str,
    namespace: str,
    name: str,
    uid: str,
    template: Obj,
    replicas: int,
    created: str,
    owner: tuple[str, str] | None = None,
) -> Obj:
    """A ReplicaSet, StatefulSet, DaemonSet or Job owning snapshot pods; the template is one of its pods' spec."""
    labels = dict(template["metadata"].get("labels") or {})
    spec: Obj = {
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {k: v for k, v in template["spec"].items() if k != "nodeName"},
        },
    }
    status: Obj = {"replicas": replicas}
    if kind == "Job":
        spec = {"parallelism": replicas, "template": spec["template"]}
        status = {"active": replicas}
    elif kind == "DaemonSet":
        status = {
            "currentNumberScheduled": replicas,
            "desiredNumberScheduled": replicas,
            "numberMisscheduled": 0,
            "numberReady": replicas,
        }
    else:
        spec["replicas"] = replicas
    meta: Obj = {"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": created, "labels": labels}
    if owner is not None:  # e.g. the Deployment of a ReplicaSet, the CronJob of a Job
        meta["ownerReferences"] = [owner_reference(owner[0], owner[1], new_uid())]
    return {
        "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
        "kind": kind,
        "metadata": meta,
        "spec": spec,
        "status": status,
    }


def event_object(
    namespace: str,
    kind: str,
    name: str,
    uid: str | None,
    reason: str,
    message: str,
    type_: str,
    *,
    component: str,
    host: str | None = None,
    when: str | None = None,
    count: int = 1,
) -> Obj:
    when = when or now_rfc3339()
    source: Obj = {"component": component}
    if host:
        source["host"] = host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": f"{name}.{uuid.uuid4().hex[:16]}", "namespace": namespace, "creationTimestamp": when},
        "involvedObject": {"kind": kind, "namespace": namespace, "name": name, **({"uid": uid} if uid else {})},
        "reason": reason,
        "message": message,
        "type": type_,
        "source": source,
        "count": count,
        "firstTimestamp": when,
        "lastTimestamp": when,
        "reportingComponent": component,
    }


def snapshot_event(e: Event) -> Obj:
    return event_object(
        e.namespace,
        e.kind,
        e.name,
        None,
        e.reason,
        e.message,
        e.type,
        component=e.component or "kubelet",
        host=e.node,
        when=e.last_seen or e.first_seen,
        count=e.count,
    )
