"""The simulated cluster: API objects built from a snapshot, per-node kubelets, and the few
controllers a rollout meets (scheduler, ReplicaSet/StatefulSet replacements, eviction). The
scheduler's filters and score are in ``scheduling``, the NodeResourceTopology objects in ``nrt``.

All mutation goes through one lock; every write bumps a cluster-wide resourceVersion. Pods are
deleted at once (no graceful termination). Replacements are created by ``reconcile()`` (a tick of
the controllers), so a PDB sees the gap an eviction leaves until the replacement runs.
"""

from __future__ import annotations

import copy
import json
import random
import threading
import time
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path

from tmnb.errors import InputError
from tmnb.kubelet.node import PodResult
from tmnb.parse.kubelet_config import merge_patch
from tmnb.snapshot import OwnerRef, Pod, Snapshot
from tmnb.sources.kube_objects import pod_from_api
from tmnb.twin.sandbox import objects
from tmnb.twin.sandbox.budgets import budget, check_eviction
from tmnb.twin.sandbox.errors import ApiError, not_found
from tmnb.twin.sandbox.kubelet import KubeletDown, SimKubelet
from tmnb.twin.sandbox.nrt import nrt_object
from tmnb.twin.sandbox.objects import Obj
from tmnb.twin.sandbox.scheduling import cpu_load, unfit
from tmnb.twin.sandbox.selectors import paginate, select

ACTIVE = ("Pending", "Running")
#: Bound on rejected pods kept per owner: the real controller creates them without end (#84869).
MAX_FAILED_PER_OWNER = 20
OWNER_RESOURCES = {
    "ReplicaSet": "replicasets",
    "DaemonSet": "daemonsets",
    "StatefulSet": "statefulsets",
    "Job": "jobs",
}
#: Where an admitted pod shows the CPUs its containers got (sandbox-only; real clusters keep it on the node).
CPUSET_ANNOTATION = "sandbox.tmnb.dev/cpuset"


def _default_requests(spec: Obj) -> None:
    """API defaulting: a container's unset requests take its limits."""
    for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]:
        resources = c.setdefault("resources", {})
        for name, q in (resources.get("limits") or {}).items():
            resources.setdefault("requests", {}).setdefault(name, q)


class Cluster:
    """Objects by resource, then (namespace, name); ``nodes_dir`` holds one directory per node
    (None: no node files, for scale runs)."""

    def __init__(self, snapshot: Snapshot, nodes_dir: Path | None, *, seed: int = 0, ready_after: float = 2.0) -> None:
        self.lock = threading.RLock()
        #: seconds a newly started pod takes to turn Ready (PodDisruptionBudgets count Ready pods)
        self.ready_after = ready_after
        self._warming: dict[tuple[str, str], float] = {}
        self.rv = 1
        self._sorted: dict[str, tuple[int, list[Obj]]] = {}
        self.rng = random.Random(seed)
        self.store: dict[str, dict[tuple[str, str], Obj]] = {
            r: {} for r in ("nodes", "pods", "events", "poddisruptionbudgets", *OWNER_RESOURCES.values())
        }
        self.kubelets: dict[str, SimKubelet] = {}
        self.server_version = snapshot.cluster.server_version or "v1.36.2"
        created = snapshot.captured_at
        for node in snapshot.nodes:
            self._put("nodes", objects.node_object(node, created))
            self.kubelets[node.name] = SimKubelet(node, None if nodes_dir is None else nodes_dir / node.name)
        self._owners(snapshot, created)
        for pod in snapshot.pods:
            owner_uid = self._owner_uid(pod.namespace, pod.owner.kind, pod.owner.name) if pod.owner else None
            self._put("pods", objects.pod_object(pod, owner_uid))
        for pdb in snapshot.disruption_budgets:
            self._put("poddisruptionbudgets", objects.pdb_object(pdb, created))
        for event in snapshot.events:
            self._put("events", objects.snapshot_event(event))
        by_node: dict[str, list[Obj]] = {}
        for obj in self.store["pods"].values():  # one pass, not one per node (150,000 pods at scale)
            by_node.setdefault(obj["spec"].get("nodeName"), []).append(obj)
        for name in self.kubelets:
            self._start(name, _in_creation_order(by_node.get(name, [])))

    # ------------------------------------------------------------------ store
    def _put(self, resource: str, obj: Obj) -> Obj:
        self.rv += 1
        meta = obj["metadata"]
        meta["resourceVersion"] = str(self.rv)
        meta.setdefault("uid", objects.new_uid())
        meta.setdefault("creationTimestamp", objects.now_rfc3339())
        self.store[resource][(meta.get("namespace", ""), meta["name"])] = obj
        return obj

    def _view(self, resource: str, obj: Obj) -> Obj:
        """A copy for a client; PDB status is computed when read, as the disruption controller keeps it current."""
        out = copy.deepcopy(obj)
        if resource == "poddisruptionbudgets":
            out["status"] = budget(obj, list(self.store["pods"].values()), self._replicas_of).status()
        return out

    def list_page(self, resource: str, namespace: str | None, query: Mapping[str, str]) -> tuple[list[Obj], Obj]:
        """Select and page on the stored objects; only the page is copied (lists of 150,000 pods)."""
        with self.lock:
            page, meta = self._page(resource, namespace, query)
            return [self._view(resource, o) for o in page], meta

    def list_json(self, resource: str, namespace: str | None, query: Mapping[str, str], kind: str, gv: str) -> bytes:
        """The list response encoded while holding the lock, so no object is copied first."""
        with self.lock:
            page, meta = self._page(resource, namespace, query)
            if resource == "poddisruptionbudgets":
                page = [self._view(resource, o) for o in page]
            return json.dumps({"kind": f"{kind}List", "apiVersion": gv, "metadata": meta, "items": page}).encode()

    def _page(self, resource: str, namespace: str | None, query: Mapping[str, str]) -> tuple[list[Obj], Obj]:
        cached = self._sorted.get(resource)
        if cached is None or cached[0] != self.rv:
            cached = (self.rv, [o for _, o in sorted(self.store[resource].items(), key=lambda kv: kv[0])])
            self._sorted[resource] = cached
        items = cached[1]
        if namespace is not None:
            items = [o for o in items if o["metadata"].get("namespace") == namespace]
        if query.get("labelSelector") or query.get("fieldSelector"):
            items = select(items, query)
        return paginate(items, query, self.rv, ordered=True)

    def items(self, resource: str, namespace: str | None = None) -> list[Obj]:
        with self.lock:
            return [self._view(resource, o) for (ns, _), o in self.store[resource].items() if namespace in (None, ns)]

    def get(self, resource: str, namespace: str, name: str) -> Obj:
        with self.lock:
            obj = self.store[resource].get((namespace, name))
            if obj is None:
                raise not_found(resource, name)
            return self._view(resource, obj)

    def _owners(self, snapshot: Snapshot, created: str) -> None:
        groups: dict[tuple[str, str, str], tuple[OwnerRef, list[Pod]]] = {}
        for pod in snapshot.pods:
            if pod.owner and pod.owner.kind in OWNER_RESOURCES:
                groups.setdefault((pod.owner.kind, pod.namespace, pod.owner.name), (pod.owner, []))[1].append(pod)
        for (kind, ns, name), (ref, pods) in groups.items():  # ref: the first pod's owner
            template = objects.pod_object(pods[0], None)
            replicas = sum(p.phase in ACTIVE for p in pods)
            uid = ref.uid or objects.new_uid()
            owner = (ref.controller_kind, ref.controller_name) if ref.controller_kind and ref.controller_name else None
            self._put(
                OWNER_RESOURCES[kind],
                objects.controller_object(kind, ns, name, uid, template, replicas, created, owner),
            )

    def _owner_uid(self, namespace: str, kind: str, name: str) -> str | None:
        resource = OWNER_RESOURCES.get(kind)
        owner = self.store[resource].get((namespace, name)) if resource else None
        return owner["metadata"]["uid"] if owner else None

    def _controller(self, pod: Obj) -> Obj | None:
        ref = next((r for r in pod["metadata"].get("ownerReferences") or [] if r.get("controller")), None)
        if ref is None:
            return None
        resource = OWNER_RESOURCES.get(ref["kind"])
        return self.store[resource].get((pod["metadata"]["namespace"], ref["name"])) if resource else None

    def _replicas_of(self, pod: Obj) -> int | None:
        owner = self._controller(pod)
        return None if owner is None or "replicas" not in owner["spec"] else int(owner["spec"]["replicas"])

    # ------------------------------------------------------------------ nodes
    def _set_ready(self, name: str, error: str | None) -> None:
        node = self.store["nodes"][("", name)]
        stamp = objects.now_rfc3339()
        if error is None:
            ready = {
                "type": "Ready",
                "status": "True",
                "reason": "KubeletReady",
                "message": "kubelet is posting ready status",
            }
        else:  # the kubelet crash-loops, so it stops posting status and the node controller marks it Unknown
            ready = {
                "type": "Ready",
                "status": "Unknown",
                "reason": "NodeStatusUnknown",
                "message": "Kubelet stopped posting node status.",
            }
        node["status"]["conditions"] = [{**ready, "lastHeartbeatTime": stamp, "lastTransitionTime": stamp}]
        self._put("nodes", node)

    def _start(self, name: str, bound: list[Obj] | None = None) -> str | None:
        kubelet = self.kubelets[name]
        pods = [p for p in (self._bound(name) if bound is None else bound) if p["status"].get("phase") in ACTIVE]
        try:  # the bound pods come back in one batch, in creation order, each over what it held
            results = kubelet.restart(pods)
        except KubeletDown as down:
            self._set_ready(name, down.message)
            return down.message
        self._set_ready(name, None)
        for pod, result in zip(pods, results, strict=True):
            self._record(pod, name, result)
        return None

    def restart_kubelet(self, name: str) -> str | None:
        """``systemctl restart kubelet`` on the node: None when it came up, else the error it logged."""
        with self.lock:
            if name not in self.kubelets:
                raise not_found("nodes", name)
            return self._start(name)

    def stop_kubelet(self, name: str) -> None:
        """``systemctl stop kubelet`` on the node: Ready turns Unknown and configz answers 503 until a start."""
        with self.lock:
            if name not in self.kubelets:
                raise not_found("nodes", name)
            self.kubelets[name].stop()
            self._set_ready(name, "stopped")

    def patch_node(self, name: str, patch: Obj) -> Obj:
        with self.lock:
            node = self.store["nodes"].get(("", name))
            if node is None:
                raise not_found("nodes", name)
            # RFC 7386; a strategic merge patch of scalar fields (cordon, labels) means the same
            spec = merge_patch(node["spec"], patch.get("spec") or {})
            node["spec"] = objects.cordon_taint(spec, objects.now_rfc3339())
            meta = merge_patch(
                node["metadata"],
                {k: v for k, v in (patch.get("metadata") or {}).items() if k in ("labels", "annotations")},
            )
            node["metadata"] = meta
            return copy.deepcopy(self._put("nodes", node))

    def configz(self, name: str) -> Obj:
        with self.lock:
            kubelet = self.kubelets.get(name)
            if kubelet is None:
                raise not_found("nodes", name)
            if not kubelet.running:
                raise ApiError(
                    503,
                    "ServiceUnavailable",
                    f"error trying to reach service: dial tcp 127.0.0.1:10250: connect: connection refused ({name})",
                )
            # what the kubelet read at its last start: a file or flag changed since shows at the next start
            started = kubelet.node.kubelet.settings
            return {"kubeletconfig": {k: s.value for k, s in sorted(started.items())}}

    # ------------------------------------------------------------------ pods
    def _bound(self, node: str) -> list[Obj]:
        return _in_creation_order(p for p in self.store["pods"].values() if p["spec"].get("nodeName") == node)

    def _event(self, pod: Obj, reason: str, message: str, type_: str, component: str, host: str | None = None) -> None:
        m = pod["metadata"]
        self._put(
            "events",
            objects.event_object(
                m["namespace"], "Pod", m["name"], m["uid"], reason, message, type_, component=component, host=host
            ),
        )

    def _admit(self, pod: Obj, node: str, *, new: bool = False) -> None:
        """The node's kubelet decides; a rejection is final (Failed), as in rejectPod."""
        kubelet = self.kubelets[node]
        if not kubelet.running:
            return
        self._record(pod, node, kubelet.admit(pod, new=new))

    def _record(self, pod: Obj, node: str, result: PodResult) -> None:
        """The kubelet's decision in the pod's status: Running with its cpusets, or rejectPod's Failed
        with the reason and a Warning event (a running pod rejected at a restart included)."""
        status = pod["status"]
        if result.admitted:
            if status.get("phase") != "Running":  # a re-admitted running pod keeps its start time
                stamp = objects.now_rfc3339()
                ready = self.ready_after <= 0
                status.update(phase="Running", **objects.running_status(pod["spec"]["containers"], stamp, ready=ready))
                if not ready:
                    self._warming[(pod["metadata"]["namespace"], pod["metadata"]["name"])] = (
                        time.monotonic() + self.ready_after
                    )
            status.pop("reason", None)
            status.pop("message", None)
            cpusets = {c.name: str(c.cpuset) for c in result.containers if c.cpuset}
            if cpusets:
                pod["metadata"].setdefault("annotations", {})[CPUSET_ANNOTATION] = ",".join(
                    f"{k}={v}" for k, v in cpusets.items()
                )
        else:
            status.update(phase="Failed", reason=result.reason, message=result.pod_status_message)
            status.pop("conditions", None)
            status.pop("containerStatuses", None)
            self._event(pod, result.reason, result.message, "Warning", "kubelet", node)
        self._put("pods", pod)

    def _active(self, node: Obj) -> list[Obj]:
        return [p for p in self._bound(node["metadata"]["name"]) if p["status"].get("phase") in ACTIVE]

    def _schedule(self, pod: Obj) -> None:
        nodes = sorted(self.store["nodes"].values(), key=lambda n: n["metadata"]["name"])
        reasons: Counter[str] = Counter()
        fits = []
        for node in nodes:
            why = unfit(node, self._active(node), pod)
            if why:
                reasons[why] += 1
            else:
                fits.append(node)
        if not fits:
            detail = ", ".join(f"{n} {r}" for r, n in sorted(reasons.items()))
            message = f"0/{len(nodes)} nodes are available: {detail}."
            pod["status"]["conditions"] = [
                {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": message}
            ]
            self._put("pods", pod)
            self._event(pod, "FailedScheduling", message, "Warning", "default-scheduler")
            return

        target = min(fits, key=lambda node: cpu_load(node, self._active(node)))["metadata"]["name"]
        pod["spec"]["nodeName"] = target
        m = pod["metadata"]
        self._event(
            pod,
            "Scheduled",
            f"Successfully assigned {m['namespace']}/{m['name']} to {target}",
            "Normal",
            "default-scheduler",
        )
        self._admit(pod, target, new=True)

    def create_pod(self, namespace: str, body: Obj) -> Obj:
        with self.lock:
            meta = body.setdefault("metadata", {})
            if not meta.get("name") and meta.get("generateName"):
                meta["name"] = meta["generateName"] + self._suffix()
            if not meta.get("name"):
                raise ApiError(
                    422, "Invalid", 'Pod "" is invalid: metadata.name: Required value: name or generateName is required'
                )
            meta["namespace"] = namespace
            if (namespace, meta["name"]) in self.store["pods"]:
                raise ApiError(
                    409,
                    "AlreadyExists",
                    f'pods "{meta["name"]}" already exists',
                    {"name": meta["name"], "kind": "pods"},
                )
            meta.pop("resourceVersion", None)
            meta["uid"] = objects.new_uid()
            meta["creationTimestamp"] = objects.now_rfc3339()
            body.update(apiVersion="v1", kind="Pod")
            _default_requests(body.setdefault("spec", {}))
            try:
                qos = pod_from_api(body).qos_class
            except InputError as exc:
                raise ApiError(422, "Invalid", f'Pod "{meta["name"]}" is invalid: {exc}') from None
            body["status"] = {"phase": "Pending", "qosClass": qos}
            self._put("pods", body)
            created = copy.deepcopy(body)  # as the API server answers: before any kubelet has seen the pod
            self._place(body)
            return created

    def create_event(self, namespace: str, body: Obj) -> Obj:
        """An event as a client posts it (``kubectl create -f event.yaml``): stored as given."""
        with self.lock:
            meta = body.setdefault("metadata", {})
            if not meta.get("name") or not isinstance(body.get("involvedObject"), dict):
                raise ApiError(422, "Invalid", "Event is invalid: metadata.name and involvedObject are required")
            meta["namespace"] = namespace
            meta.pop("resourceVersion", None)
            body.update(apiVersion="v1", kind="Event")
            return copy.deepcopy(self._put("events", body))

    def _place(self, pod: Obj) -> None:
        node = pod["spec"].get("nodeName")
        if node:
            if node in self.kubelets:
                self._admit(pod, node, new=True)
        else:
            self._schedule(pod)

    def _suffix(self, n: int = 5) -> str:
        return "".join(self.rng.choice("bcdfghjklmnpqrstvwxz2456789") for _ in range(n))

    def delete_pod(self, namespace: str, name: str) -> Obj:
        with self.lock:
            pod = self.store["pods"].pop((namespace, name), None)
            if pod is None:
                raise not_found("pods", name)
            node = pod["spec"].get("nodeName")
            if node in self.kubelets and pod["status"].get("phase") in ACTIVE:
                self.kubelets[node].release(pod)
            self.rv += 1
            pod["metadata"]["deletionTimestamp"] = objects.now_rfc3339()
            return copy.deepcopy(pod)

    def evict(self, namespace: str, name: str) -> None:
        """The eviction subresource: refuse (429/500) or delete the pod."""
        with self.lock:
            pod = self.store["pods"].get((namespace, name))
            if pod is None:
                raise not_found("pods", name)
            check_eviction(
                pod,
                list(self.store["poddisruptionbudgets"].values()),
                list(self.store["pods"].values()),
                self._replicas_of,
            )
            self.delete_pod(namespace, name)

    # ------------------------------------------------------------------ controllers
    def reconcile(self) -> int:
        """One controller tick: each short ReplicaSet/StatefulSet gets one replacement. Returns pods created."""
        created = 0
        with self.lock:
            self._become_ready()
            owned = self._pods_by_owner()  # one pass over the pods, not one per owner
            for resource in ("replicasets", "statefulsets"):
                for owner in list(self.store[resource].values()):
                    created += self._replace(owner, owned.get(owner["metadata"]["uid"], []))
        return created

    def _become_ready(self) -> None:
        now = time.monotonic()
        for key, due in list(self._warming.items()):
            pod = self.store["pods"].get(key)
            if pod is None or pod["status"].get("phase") != "Running":
                del self._warming[key]
            elif due <= now:
                del self._warming[key]
                pod["status"].update(
                    objects.running_status(pod["spec"]["containers"], pod["status"]["startTime"], ready=True)
                )
                self._put("pods", pod)

    def _pods_by_owner(self) -> dict[str, list[Obj]]:
        owned: dict[str, list[Obj]] = {}
        for pod in self.store["pods"].values():
            for ref in pod["metadata"].get("ownerReferences") or []:
                owned.setdefault(ref.get("uid"), []).append(pod)
        return owned

    def _replace(self, owner: Obj, owned: list[Obj]) -> int:
        active = [p for p in owned if p["status"].get("phase") in ACTIVE]
        failed = [p for p in owned if p["status"].get("phase") == "Failed"]
        if len(active) >= int(owner["spec"].get("replicas", 0)) or len(failed) >= MAX_FAILED_PER_OWNER:
            return 0
        m = owner["metadata"]
        if owner["kind"] == "StatefulSet":
            names = {p["metadata"]["name"] for p in active}
            missing = [
                f"{m['name']}-{i}" for i in range(int(owner["spec"]["replicas"])) if f"{m['name']}-{i}" not in names
            ]
            if not missing:
                return 0
            name = missing[0]
            stale = self.store["pods"].pop((m["namespace"], name), None)  # a rejected ordinal is replaced in place
            if stale is not None:
                self.rv += 1
        else:
            name = f"{m['name']}-{self._suffix()}"
        template = owner["spec"]["template"]
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": name,
                "namespace": m["namespace"],
                "labels": dict(template["metadata"].get("labels") or {}),
                "ownerReferences": [objects.owner_reference(owner["kind"], m["name"], m["uid"])],
                "uid": objects.new_uid(),
                "creationTimestamp": objects.now_rfc3339(),
            },
            "spec": copy.deepcopy(template["spec"]),
            "status": {"phase": "Pending"},
        }
        pod["status"]["qosClass"] = pod_from_api(pod).qos_class
        self._put("pods", pod)
        self._put(
            "events",
            objects.event_object(
                m["namespace"],
                owner["kind"],
                m["name"],
                m["uid"],
                "SuccessfulCreate",
                f"Created pod: {name}",
                "Normal",
                component="replicaset-controller" if owner["kind"] == "ReplicaSet" else "statefulset-controller",
            ),
        )
        self._schedule(pod)
        return 1

    # ------------------------------------------------------------------ NodeResourceTopology
    def nrt_objects(self) -> list[Obj]:
        """What an RTE would publish per node: zones, costs and free CPUs from the kubelet model."""
        with self.lock:
            return [self._nrt(k) for k in self.kubelets.values()]

    def _nrt(self, kubelet: SimKubelet) -> Obj:
        node = kubelet.node
        free = kubelet.free_cpus() if kubelet.running else None
        return nrt_object(node, free, self.store["nodes"][("", node.name)], self.rv)


def namespaces(cluster: Cluster) -> Iterable[str]:
    with cluster.lock:
        return sorted({ns for (ns, _) in cluster.store["pods"]} | {"default", "kube-system"})


__all__ = ["Cluster", "namespaces"]


def _in_creation_order(pods: Iterable[Obj]) -> list[Obj]:
    return sorted(pods, key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))
