"""How the node collector script reaches a node: this host, ssh, or a short-lived node pod.

Each transport runs ``collect_node.sh`` with the given arguments and returns the gzip tar it
writes. The script travels on stdin (local, ssh) or inline in the pod's command (node pod), so
nothing is installed on the node.
"""

from __future__ import annotations

import base64
import binascii
import shlex
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Protocol

from kubernetes import client

from tmnb.errors import CollectError
from tmnb.parse.jsonable import JsonDict
from tmnb.sources.cluster.api import raw_body
from tmnb.sources.cluster.retry import describe, status_of

BEGIN, END = "--- tmnb bundle begin ---", "--- tmnb bundle end ---"
POD_LABEL = "app.kubernetes.io/name"
POD_LABEL_VALUE = "tmnb-node-collector"


def script() -> str:
    """The collector script shipped in the package."""
    return resources.files("tmnb.sources").joinpath("collect_node.sh").read_text()


class Transport(Protocol):
    def run(self, args: Sequence[str], *, timeout: float) -> bytes:
        """Run the collector with ``args`` on the node; the bundle bytes."""
        ...


def _run(argv: list[str], where: str, timeout: float) -> bytes:
    try:
        done = subprocess.run(argv, input=script().encode(), capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as exc:
        raise CollectError(f"{where}: the node collector did not finish within {timeout:g}s") from exc
    except OSError as exc:
        raise CollectError(f"{where}: cannot start {argv[0]}: {exc}") from exc
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise CollectError(f"{where}: collector exited {done.returncode}: {err[-1] if err else '(no message)'}")
    return done.stdout


@dataclass(frozen=True)
class LocalTransport:
    """This host, reading files under ``root`` (a copy of a node's files, or ``/``)."""

    root: str = "/"
    shell: str = "sh"

    def argv(self, args: Sequence[str]) -> list[str]:
        return [self.shell, "-s", "--", "-r", self.root, *args]

    def run(self, args: Sequence[str], *, timeout: float) -> bytes:
        return _run(self.argv(args), f"local {self.root}", timeout)


@dataclass(frozen=True)
class SshTransport:
    """OpenSSH to ``host`` with the user's ssh config (keys, jump hosts, known_hosts). BatchMode:
    a prompt for a password or host key fails fast instead of hanging a scheduled report."""

    host: str
    user: str | None = None
    port: int | None = None
    sudo: bool = True
    options: tuple[str, ...] = ()
    ssh: str = "ssh"

    def argv(self, args: Sequence[str]) -> list[str]:
        remote = [*(("sudo", "-n") if self.sudo else ()), "sh", "-s", "--", *args]
        argv = [self.ssh, "-T", "-o", "BatchMode=yes"]
        if self.port is not None:
            argv += ["-p", str(self.port)]
        if self.user:
            argv += ["-l", self.user]
        # ssh joins the remote words with spaces for the remote shell: quote them once here.
        return [*argv, *self.options, "--", self.host, shlex.join(remote)]

    def run(self, args: Sequence[str], *, timeout: float) -> bytes:
        return _run(self.argv(args), f"ssh {self.host}", timeout)


@dataclass
class NodePodTransport:
    """A privileged pod pinned to ``node`` (the ``kubectl debug node --profile=sysadmin`` pattern):
    host PID namespace, the host's root mounted read-only at /host, tolerating every taint. It
    prints the bundle as base64 to its log and exits; the pod is deleted afterwards, always.
    Needs create/delete on pods and get on pods/log in ``namespace``; nothing else is written."""

    api_client: client.ApiClient
    node: str
    namespace: str = "tmnb-node-collector"  # deploy/node-pod-collector-rbac.yaml
    image: str = "busybox:1.37"
    poll: float = 1.0
    created: list[str] = field(default_factory=list)

    def manifest(self, args: Sequence[str], *, timeout: float) -> JsonDict:
        command = ["sh", "-c", script(), "collect_node.sh", "-r", "/host", "-c", "-b", *args]
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": "tmnb-collect-",
                "namespace": self.namespace,
                "labels": {POD_LABEL: POD_LABEL_VALUE},
                "annotations": {"tmnb.dev/node": self.node},
            },
            "spec": {
                "nodeName": self.node,
                "hostPID": True,
                "restartPolicy": "Never",
                "activeDeadlineSeconds": max(int(timeout), 1),
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {
                        "name": "collect",
                        "image": self.image,
                        "command": command,
                        "securityContext": {"privileged": True},
                        # Burstable with fractional CPU: never takes exclusive CPUs from the
                        # static CPU manager on the node it inspects.
                        "resources": {
                            "requests": {"cpu": "50m", "memory": "32Mi"},
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                        },
                        "volumeMounts": [
                            {"name": "host", "mountPath": "/host", "readOnly": True},
                            {"name": "tmp", "mountPath": "/tmp"},
                        ],
                    }
                ],
                "volumes": [
                    {"name": "host", "hostPath": {"path": "/", "type": "Directory"}},
                    {"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}},
                ],
            },
        }

    def run(self, args: Sequence[str], *, timeout: float) -> bytes:
        core = client.CoreV1Api(self.api_client)
        where = f"node pod on {self.node}"
        try:
            body = client.V1Pod.model_validate(self.manifest(args, timeout=timeout))
            pod = core.create_namespaced_pod(self.namespace, body)
        except Exception as exc:
            raise CollectError(f"{where}: cannot create the collector pod: {describe(exc)}") from exc
        name = pod.metadata.name if pod.metadata else None
        if not name:
            raise CollectError(f"{where}: the API server returned the collector pod without a name")
        self.created.append(name)
        try:
            phase = self._wait(core, name, timeout)
            log = raw_body(
                core.read_namespaced_pod_log(name, self.namespace, container="collect", _preload_content=False)
            )
        except CollectError:
            raise
        except Exception as exc:
            raise CollectError(f"{where}: {describe(exc)}") from exc
        finally:
            self._delete(core, name)
        text = log.decode("utf-8", "replace")
        if phase != "Succeeded":
            tail = text.strip().splitlines()[-1:] or ["(no output)"]
            raise CollectError(f"{where}: collector pod {name} ended {phase}: {tail[0]}")
        return decode_bundle(text, where=where)

    def _wait(self, core: client.CoreV1Api, name: str, timeout: float) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            status = core.read_namespaced_pod_status(name, self.namespace).status
            phase = status.phase if status else None
            if phase in ("Succeeded", "Failed"):
                return str(phase)
            time.sleep(self.poll)
        raise CollectError(f"node pod on {self.node}: pod {name} did not finish within {timeout:g}s")

    def _delete(self, core: client.CoreV1Api, name: str) -> None:
        try:
            core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
        except Exception as exc:
            if status_of(exc) != 404:
                raise CollectError(f"node pod on {self.node}: could not delete pod {name}: {describe(exc)}") from exc


def decode_bundle(text: str, *, where: str) -> bytes:
    """The base64 bundle between the marker lines of a collector's log."""
    lines = text.splitlines()
    try:
        body = lines[lines.index(BEGIN) + 1 : lines.index(END)]
    except ValueError as exc:
        raise CollectError(f"{where}: no bundle in the collector's output (markers missing)") from exc
    try:
        return base64.b64decode("".join(body), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CollectError(f"{where}: the bundle in the collector's output is corrupt: {exc}") from exc
