"""A short-lived privileged pod on one node: how the collector reads a node and how the rollout's
``node-pod`` executor changes one, built and run in one place.

The pod is the ``kubectl debug node --profile=sysadmin`` pattern: pinned to the node, in the host's
PID namespace, privileged, tolerating every taint, Burstable with fractional CPU (it never takes
exclusive CPUs from the static CPU manager of the node it works on), no service account token. It
runs one command, prints to its log and exits; ``run`` waits for it, reads the log and deletes it,
always. Needs create/delete on pods and get on pods/log in the namespace
(deploy/node-pod-collector-rbac.yaml).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from kubernetes import client

from tmnb.errors import CollectError
from tmnb.parse.jsonable import JsonDict
from tmnb.sources.cluster.api import raw_body
from tmnb.sources.cluster.retry import describe, status_of

POD_LABEL = "app.kubernetes.io/name"
POD_LABEL_VALUE = "tmnb-node-collector"
DEFAULT_NAMESPACE = "tmnb-node-collector"
DEFAULT_IMAGE = "busybox:1.37"


@dataclass
class NodePod:
    """Privileged pods on ``node`` in ``namespace``; ``created`` names every pod made (each deleted)."""

    api_client: client.ApiClient
    node: str
    namespace: str = DEFAULT_NAMESPACE
    image: str = DEFAULT_IMAGE
    poll: float = 1.0
    created: list[str] = field(default_factory=list)

    def manifest(
        self,
        *,
        prefix: str,
        container: str,
        command: Sequence[str],
        timeout: float,
        annotations: Mapping[str, str],
        env: Mapping[str, str] | None = None,
        host_root: bool = False,
    ) -> JsonDict:
        """The pod; ``host_root`` mounts the node's ``/`` read-only at ``/host``."""
        mounts: list[JsonDict] = [{"name": "tmp", "mountPath": "/tmp"}]
        volumes: list[JsonDict] = [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}]
        if host_root:
            mounts.insert(0, {"name": "host", "mountPath": "/host", "readOnly": True})
            volumes.insert(0, {"name": "host", "hostPath": {"path": "/", "type": "Directory"}})
        spec: JsonDict = {
            "name": container,
            "image": self.image,
            "command": list(command),
            "securityContext": {"privileged": True},
            "resources": {
                "requests": {"cpu": "50m", "memory": "32Mi"},
                "limits": {"cpu": "500m", "memory": "256Mi"},
            },
            "volumeMounts": mounts,
        }
        if env:
            spec["env"] = [{"name": k, "value": v} for k, v in env.items()]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": prefix,
                "namespace": self.namespace,
                "labels": {POD_LABEL: POD_LABEL_VALUE},
                "annotations": {"tmnb.dev/node": self.node, **annotations},
            },
            "spec": {
                "nodeName": self.node,
                "hostPID": True,
                "restartPolicy": "Never",
                "activeDeadlineSeconds": max(int(timeout), 1),
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "tolerations": [{"operator": "Exists"}],
                "containers": [spec],
                "volumes": volumes,
            },
        }

    def run(self, manifest: JsonDict, *, timeout: float, where: str) -> tuple[str, str, str]:
        """Create the pod, wait until it ends, read its log, delete it: (name, phase, log).
        Every failure is a ``CollectError`` that starts with ``where``."""
        core = client.CoreV1Api(self.api_client)
        try:
            pod = core.create_namespaced_pod(self.namespace, client.V1Pod.model_validate(manifest))
        except Exception as exc:
            raise CollectError(f"{where}: cannot create the pod: {describe(exc)}") from None
        name = pod.metadata.name if pod.metadata else None
        if not name:
            raise CollectError(f"{where}: the API server returned the pod without a name")
        self.created.append(name)
        container = manifest["spec"]["containers"][0]["name"]
        try:
            phase = self._wait(core, name, timeout, where)
            log = raw_body(
                core.read_namespaced_pod_log(name, self.namespace, container=container, _preload_content=False)
            )
        except CollectError:
            raise
        except Exception as exc:
            raise CollectError(f"{where}: pod {name}: {describe(exc)}") from None
        finally:
            self._delete(core, name, where)
        return name, phase, log.decode("utf-8", "replace")

    def _wait(self, core: client.CoreV1Api, name: str, timeout: float, where: str) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = core.read_namespaced_pod_status(name, self.namespace).status
            phase = status.phase if status else None
            if phase in ("Succeeded", "Failed"):
                return str(phase)
            time.sleep(self.poll)
        raise CollectError(f"{where}: pod {name} did not finish within {timeout:g}s")

    def _delete(self, core: client.CoreV1Api, name: str, where: str) -> None:
        try:
            core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
        except Exception as exc:
            if status_of(exc) != 404:
                raise CollectError(f"{where}: could not delete pod {name}: {describe(exc)}") from None
