"""The ``sandbox`` executor: a sandbox node's directory is its file system, and its kubelet is
stopped, started and read through the sandbox API (``/sandbox/v1``, docs/sandbox.md)."""

from __future__ import annotations

import base64
import os
import ssl
from datetime import UTC, datetime
from pathlib import Path
from typing import Unpack

import httpx
import yaml

from tmnb.errors import RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.parse.klog import parse_kubelet_log
from tmnb.rollout.executors.command import ExecutorOptions
from tmnb.rollout.executors.shell import LocalExecutor
from tmnb.rollout.ops import JOURNAL_CAP, KUBELET_ACTIONS, KubeletAction, validate_node_name


class SandboxClient:
    """The ``/sandbox/v1`` API of a running sandbox (docs/sandbox.md), with the kubeconfig's token and CA."""

    def __init__(self, server: str, token: str, ca_pem: str | None, *, timeout: float = 30.0) -> None:
        self.server = server.rstrip("/")
        self._token = token
        self._verify: ssl.SSLContext | bool = ssl.create_default_context(cadata=ca_pem) if ca_pem else True
        self.timeout = timeout

    def __repr__(self) -> str:
        return f"SandboxClient({self.server!r})"

    @classmethod
    def from_kubeconfig(cls, path: str | Path | None = None, context: str | None = None) -> SandboxClient:
        """Server, CA and bearer token of ``context`` (default: the current one) in ``path``
        (default: the first file of $KUBECONFIG, else ~/.kube/config)."""
        if path is None:
            first = (os.environ.get("KUBECONFIG") or "").split(os.pathsep)[0]
            path = first or Path.home() / ".kube" / "config"
        path = Path(path)
        try:
            doc = yaml.safe_load(path.read_text()) or {}
        except OSError as exc:
            raise RolloutError(f"cannot read the kubeconfig {path}: {exc.strerror or exc}") from None
        except yaml.YAMLError:
            raise RolloutError(f"the kubeconfig {path} is not valid YAML") from None

        def named(section: str, name: str | None) -> JsonDict:
            for item in doc.get(section) or []:
                if isinstance(item, dict) and item.get("name") == name:
                    return dict(item.get(section.rstrip("s")) or {})
            raise RolloutError(f"the kubeconfig {path} has no {section.rstrip('s')} named {name!r}")

        ctx = named("contexts", context or doc.get("current-context"))
        cluster, user = named("clusters", ctx.get("cluster")), named("users", ctx.get("user"))
        server, token = cluster.get("server"), user.get("token")
        if not server or not token:
            raise RolloutError(f"the kubeconfig {path} needs a server URL and a bearer token for the sandbox API")
        ca_pem = None
        if cluster.get("certificate-authority-data"):
            ca_pem = base64.b64decode(cluster["certificate-authority-data"]).decode()
        elif cluster.get("certificate-authority"):
            ca_pem = (path.parent / cluster["certificate-authority"]).read_text()
        return cls(server, token, ca_pem)

    def _call(self, method: str, path: str, node: str) -> httpx.Response:
        url = f"{self.server}/sandbox/v1/{path}"
        try:
            resp = httpx.request(
                method,
                url,
                headers={"Authorization": f"Bearer {self._token}"},
                verify=self._verify,
                timeout=self.timeout,
            )
        except httpx.HTTPError as exc:
            raise RolloutError(f"sandbox API {method} {path}: {type(exc).__name__}: {exc}", node=node) from None
        if resp.status_code >= 400:
            try:
                message = resp.json().get("message", resp.text)
            except ValueError:
                message = resp.text
            raise RolloutError(f"sandbox API {method} {path}: HTTP {resp.status_code}: {message}", node=node)
        return resp

    def kubelet(self, node: str, action: KubeletAction) -> JsonDict:
        """``{"node", "ready", "error"}``: a kubelet that would not start is a state, not a failed call."""
        return dict(self._call("POST", f"nodes/{validate_node_name(node)}/{action}", node).json())

    def journal(self, node: str) -> str:
        return self._call("GET", f"nodes/{validate_node_name(node)}/journal", node).text

    def node_root(self, node: str) -> Path:
        return Path(self._call("GET", f"nodes/{validate_node_name(node)}/root", node).json()["root"])


def klog_lines_since(text: str, since: datetime, *, now: datetime | None = None) -> str:
    """The lines of a kubelet journal (journalctl prefix or bare klog) stamped at or after ``since``
    (to the second, as ``--since``). Years as ``tmnb.parse.klog`` gives them, read at ``now``
    (default: the clock); lines it cannot read go with the line before them."""
    since = (since.replace(tzinfo=UTC) if since.tzinfo is None else since.astimezone(UTC)).replace(microsecond=0)
    lines = text.splitlines(keepends=True)
    reference = max(now or datetime.now(UTC), since)
    stamps = {r.line: r.time for r in parse_kubelet_log(lines, reference=reference).records if r.time is not None}
    keep, out = False, []
    for number, line in enumerate(lines, start=1):
        if number in stamps:
            keep = stamps[number].replace(microsecond=0) >= since
        if keep:
            out.append(line)
    return "".join(out)


class SandboxExecutor(LocalExecutor):
    """A sandbox node: its files are ``root`` (the node's directory, laid out like the node), and
    the kubelet is stopped, started and read through the sandbox API."""

    kind = "sandbox"

    def __init__(self, node: str, root: str | Path, api: SandboxClient, **common: Unpack[ExecutorOptions]) -> None:
        super().__init__(node, root=root, **common)
        self.api = api

    def where(self) -> str:
        return f"sandbox {self.api.server}, root {self.root}"

    def kubelet(self, action: KubeletAction) -> None:
        """A kubelet that will not start is no error here, as ``systemctl start`` does not wait
        for it either: the node stays NotReady and the journal says why."""
        if action not in KUBELET_ACTIONS:
            raise RolloutError(f"unknown kubelet action {action!r}", node=self.node)
        self._commands.append(["POST", f"/sandbox/v1/nodes/{self.node}/{action}"])
        self.api.kubelet(self.node, action)

    def journal_since(self, since: datetime) -> str:
        self._commands.append(["GET", f"/sandbox/v1/nodes/{self.node}/journal"])
        return klog_lines_since(self.api.journal(self.node), since)[-JOURNAL_CAP:]
