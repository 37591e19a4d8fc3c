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
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Protocol

from kubernetes import client

from tmnb.errors import CollectError
from tmnb.parse.jsonable import JsonDict
from tmnb.sources.node_pod import DEFAULT_IMAGE, DEFAULT_NAMESPACE, NodePod

BEGIN, END = "--- tmnb bundle begin ---", "--- tmnb bundle end ---"


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
    """The collector in a privileged pod on ``node`` (``tmnb.sources.node_pod``) with the host's
    root mounted read-only at /host: it prints the bundle as base64 to its log and exits; the pod is
    deleted afterwards, always. Nothing else is written."""

    api_client: client.ApiClient
    node: str
    namespace: str = DEFAULT_NAMESPACE  # deploy/node-pod-collector-rbac.yaml
    image: str = DEFAULT_IMAGE
    poll: float = 1.0
    created: list[str] = field(default_factory=list)

    def _pod(self) -> NodePod:
        return NodePod(self.api_client, self.node, self.namespace, self.image, self.poll, self.created)

    def manifest(self, args: Sequence[str], *, timeout: float) -> JsonDict:
        command = ["sh", "-c", script(), "collect_node.sh", "-r", "/host", "-c", "-b", *args]
        return self._pod().manifest(
            prefix="tmnb-collect-", container="collect", command=command, timeout=timeout, annotations={},
            host_root=True,
        )  # fmt: skip

    def run(self, args: Sequence[str], *, timeout: float) -> bytes:
        where = f"node pod on {self.node}"
        name, phase, text = self._pod().run(self.manifest(args, timeout=timeout), timeout=timeout, where=where)
        if phase != "Succeeded":
            tail = text.strip().splitlines()[-1:] or ["(no output)"]
            raise CollectError(f"{where}: collector pod {name} ended {phase}: {tail[0]}")
        return decode_bundle(text, where=where)


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
