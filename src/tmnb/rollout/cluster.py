"""The rollout's calls to the Kubernetes API: cordon, evictions, the test pod, Ready, configz, events.

Every call carries a timeout and goes through the collector's ``Backoff`` (429 with Retry-After,
5xx and transport errors are retried), so injected throttling or a flaky API server slows a
rollout down instead of half-applying it. Failures end as ``RolloutError`` naming the node.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from kubernetes import client

from tmnb.errors import RolloutError
from tmnb.kubelet.names import ADMISSION_REASONS
from tmnb.parse.jsonable import JsonDict
from tmnb.sources.cluster.api import raw_body
from tmnb.sources.cluster.retry import Backoff, describe, status_of

T = TypeVar("T")
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
#: The kubelet's reasons for a pod it refused at admission (facts: node-artifacts §8).


@dataclass
class ClusterOps:
    api_client: client.ApiClient
    backoff: Backoff = field(default_factory=Backoff)
    timeout: tuple[float, float] = (5.0, 30.0)
    sleep: Callable[[float], None] = time.sleep

    def __post_init__(self) -> None:
        self.core = client.CoreV1Api(self.api_client)
        self.policy = client.PolicyV1Api(self.api_client)

    def _call(self, what: str, node: str | None, fn: Callable[[], T]) -> T:
        try:
            return self.backoff.call(fn)
        except Exception as exc:
            raise RolloutError(f"{what}: {describe(exc)}", node=node) from exc

    def _json(
        self, what: str, node: str | None, call: Callable[..., object], *args: object, **kwargs: object
    ) -> JsonDict:
        """``call`` (any method of the client's API classes) with a timeout, retried, its JSON object."""

        def once() -> JsonDict:
            doc: JsonDict = json.loads(
                raw_body(call(*args, _preload_content=False, _request_timeout=self.timeout, **kwargs))
            )
            return doc

        return self._call(what, node, once)

    # ------------------------------------------------------------------ nodes
    def node(self, name: str) -> JsonDict:
        return self._json("read the node", name, self.core.read_node, name)

    def ready(self, name: str) -> bool:
        conditions = (self.node(name).get("status") or {}).get("conditions") or []
        return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)

    def unschedulable(self, name: str) -> bool:
        return bool((self.node(name).get("spec") or {}).get("unschedulable"))

    def set_unschedulable(self, name: str, value: bool) -> None:
        body = {"spec": {"unschedulable": value or None}}
        self._json("cordon" if value else "uncordon", name, self.core.patch_node, name, body)

    def configz(self, name: str) -> JsonDict:
        def once() -> JsonDict:
            response = self.core.connect_get_node_proxy_with_path(
                name, "configz", _preload_content=False, _request_timeout=self.timeout
            )
            doc: JsonDict = json.loads(raw_body(response))
            return doc

        doc = self._call("read /configz", name, once)
        return dict(doc.get("kubeletconfig") or {})

    def wait_ready(self, name: str, timeout: float, poll: float = 1.0) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            try:
                if self.ready(name):
                    return True
            except RolloutError:
                pass  # a flaky read is not a verdict; the deadline is
            if time.monotonic() >= deadline:
                return False
            self.sleep(poll)

    # ------------------------------------------------------------------ pods
    def pods_on(self, name: str) -> list[JsonDict]:
        doc = self._json(
            "list the node's pods", name, self.core.list_pod_for_all_namespaces, field_selector=f"spec.nodeName={name}"
        )
        return list(doc.get("items") or [])

    def evict(self, pod: JsonDict, node: str) -> int:
        """POST the eviction; the HTTP status (201, 404 gone, 429 budget) — other failures raise."""
        meta = pod["metadata"]
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=meta["name"], namespace=meta["namespace"]))
        try:
            self.core.create_namespaced_pod_eviction(
                meta["name"], meta["namespace"], body, _request_timeout=self.timeout
            )
        except Exception as exc:
            status = status_of(exc)
            if status in (404, 429):
                return status
            if status is not None and status >= 500 and "more than one PodDisruptionBudget" not in describe(exc):
                return 503  # transient: retried by the drain loop under its deadline
            raise RolloutError(
                f"cannot evict {meta['namespace']}/{meta['name']}: {describe(exc)}", node=node, step="drain"
            ) from exc
        return 201

    def create_pod(self, namespace: str, body: JsonDict, node: str) -> JsonDict:
        return self._json("create the test pod", node, self.core.create_namespaced_pod, namespace, body)

    def pod(self, namespace: str, name: str, node: str) -> JsonDict | None:
        def once() -> JsonDict | None:
            try:
                response = self.core.read_namespaced_pod(
                    name, namespace, _preload_content=False, _request_timeout=self.timeout
                )
            except Exception as exc:
                if status_of(exc) == 404:
                    return None
                raise
            doc: JsonDict = json.loads(raw_body(response))
            return doc

        return self._call("read the test pod", node, once)

    def delete_pod(self, namespace: str, name: str, node: str) -> None:
        def once() -> None:
            try:
                self.core.delete_namespaced_pod(name, namespace, grace_period_seconds=0, _request_timeout=self.timeout)
            except Exception as exc:
                if status_of(exc) != 404:
                    raise

        self._call("delete the test pod", node, once)

    def blocking_budgets(self, pods: list[JsonDict], node: str) -> list[str]:
        """Budgets over these pods that allow no disruption right now (the drain would wait on them)."""
        doc = self._json("list PodDisruptionBudgets", node, self.policy.list_pod_disruption_budget_for_all_namespaces)
        out = []
        for pdb in doc.get("items") or []:
            meta, spec, status = pdb.get("metadata") or {}, pdb.get("spec") or {}, pdb.get("status") or {}
            wanted = ((spec.get("selector") or {}).get("matchLabels")) or {}
            covered = [
                p
                for p in pods
                if p["metadata"].get("namespace") == meta.get("namespace")
                and wanted
                and all((p["metadata"].get("labels") or {}).get(k) == v for k, v in wanted.items())
            ]
            if covered and int(status.get("disruptionsAllowed") or 0) == 0:
                out.append(f"{meta.get('namespace')}/{meta.get('name')} (covers {len(covered)} pod(s) here)")
        return out

    def admission_failures(self, name: str, since: str) -> list[str]:
        """Pods on the node that the kubelet rejected at admission and that were created at or after ``since``."""
        out = []
        for pod in self.pods_on(name):
            status = pod.get("status") or {}
            created = (pod.get("metadata") or {}).get("creationTimestamp") or ""
            if status.get("phase") == "Failed" and status.get("reason") in ADMISSION_REASONS and created >= since:
                meta = pod["metadata"]
                out.append(f"{meta['namespace']}/{meta['name']}: {status.get('reason')}")
        return out


def is_daemonset_pod(pod: JsonDict) -> bool:
    return any(ref.get("kind") == "DaemonSet" for ref in (pod.get("metadata") or {}).get("ownerReferences") or [])


def is_mirror_pod(pod: JsonDict) -> bool:
    return MIRROR_ANNOTATION in ((pod.get("metadata") or {}).get("annotations") or {})


def uses_emptydir(pod: JsonDict) -> bool:
    return any("emptyDir" in v for v in (pod.get("spec") or {}).get("volumes") or [])


def restarts(pod: JsonDict) -> int:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return sum(int(s.get("restartCount") or 0) for s in statuses)
