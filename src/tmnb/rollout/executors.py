"""Executors: where the node operations of :mod:`tmnb.rollout.ops` actually run.

``dry-run`` (the default) records the commands and changes nothing; ``local`` runs them on this
host under an optional root prefix; ``ssh`` runs the same argv on the node as one quoted remote
command; ``node-pod`` runs each in a short-lived privileged pod that enters the host's namespaces;
``sandbox`` works on a sandbox node's directory and restarts its kubelet through the sandbox API.
Every failure is a :class:`RolloutError` naming the node, the operation and the command's last
stderr line, never a traceback and never a credential.
"""

from __future__ import annotations

import base64
import os
import re
import shlex
import ssl
import subprocess
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TypedDict, Unpack

import httpx
import yaml
from kubernetes import client

from tmnb.errors import CollectError, RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.parse.klog import parse_kubelet_log
from tmnb.rollout.ops import (
    ABSENT,
    JOURNAL_CAP,
    KUBELET_ACTIONS,
    KubeletAction,
    NodeOps,
    Op,
    command_for,
    parse_checksum,
    rooted,
    validate_node_name,
)
from tmnb.sources.cluster.api import raw_body
from tmnb.sources.cluster.retry import describe, status_of
from tmnb.sources.transports import POD_LABEL, POD_LABEL_VALUE, SshTransport, decode_bundle

DEFAULT_TIMEOUT = 120.0


class ExecutorOptions(TypedDict, total=False):
    """The keyword options of every executor that runs commands (``CommandExecutor``), but ``root``."""

    systemctl: Sequence[str]
    journalctl: Sequence[str]
    timeout: float


class RootedOptions(ExecutorOptions, total=False):
    """``ExecutorOptions`` and where the node's files are (``CommandExecutor``'s ``root``)."""

    root: str | Path


class SshOptions(RootedOptions, total=False):
    """The ``ssh`` executor's options besides its host (``SshExecutor``)."""

    user: str | None
    port: int | None
    sudo: bool
    options: Sequence[str]
    ssh: str


class NodePodOptions(RootedOptions, total=False):
    """The ``node-pod`` executor's options besides its API client (``NodePodExecutor``)."""

    namespace: str
    image: str
    poll: float


def _last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if lines else "(no message)"


class CommandExecutor:
    """The operations on top of one primitive, ``_exec(argv, stdin)``: run a node-side argv.

    ``root`` is joined onto every node path (a copy of a node's files, a sandbox node, or "/");
    ``commands`` records the node-side argv, so dry-run and a real run can be compared.
    """

    kind = "command"

    def __init__(
        self,
        node: str,
        root: str | Path = "/",
        systemctl: Sequence[str] = ("systemctl",),
        journalctl: Sequence[str] = ("journalctl",),
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.node = validate_node_name(node)
        self.root = str(root)
        self.systemctl = tuple(systemctl)
        self.journalctl = tuple(journalctl)
        self.timeout = timeout
        self._commands: list[list[str]] = []

    @property
    def commands(self) -> list[list[str]]:
        return self._commands

    def where(self) -> str:
        """How the node is reached, for error messages."""
        return self.kind

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        raise NotImplementedError

    def _path(self, path: str) -> str:
        return rooted(self.root, path, node=self.node)

    def _command(
        self,
        op: Op,
        path: str | None = None,
        *,
        mode: int | None = None,
        suffix: str = "",
        action: KubeletAction | None = None,
        since: datetime | None = None,
    ) -> list[str]:
        try:
            where = "" if path is None else self._path(path)
            return command_for(
                op,
                where,
                mode=mode,
                suffix=suffix,
                action=action,
                since=since,
                systemctl=self.systemctl,
                journalctl=self.journalctl,
            )
        except RolloutError as exc:
            if exc.node:
                raise
            raise RolloutError(str(exc), node=self.node) from None

    def _run(self, op: str, what: str, argv: list[str], stdin: bytes = b"", absent_ok: bool = False) -> bytes | None:
        self._commands.append(argv)
        rc, out, err = self._exec(argv, stdin, op)
        if rc == 0:
            return out
        if absent_ok and rc == ABSENT:
            return None
        subject = f"{op} {what}" if what else op
        raise RolloutError(f"{subject} failed ({self.where()}, exit {rc}): {_last_line(err)}", node=self.node)

    # ------------------------------------------------------------------ NodeOps
    def read(self, path: str) -> bytes | None:
        return self._run("read", path, self._command("read", path), absent_ok=True)

    def write(self, path: str, data: bytes, mode: int) -> None:
        self._run("write", path, self._command("write", path, mode=mode), stdin=data)

    def move_aside(self, path: str, suffix: str) -> str | None:
        moved = self._run("move aside", path, self._command("move_aside", path, suffix=suffix), absent_ok=True)
        return None if moved is None else path + suffix

    def remove(self, path: str) -> None:
        self._run("remove", path, self._command("remove", path))

    def checksum(self, path: str) -> str | None:
        out = self._run("checksum", path, self._command("checksum", path), absent_ok=True)
        return None if out is None else parse_checksum(out)

    def kubelet(self, action: KubeletAction) -> None:
        self._run(f"{action} kubelet", "", self._command("kubelet", action=action))

    def journal_since(self, since: datetime) -> str:
        out = self._run("read journal", "", self._command("journal", since=since)) or b""
        return out[-JOURNAL_CAP:].decode("utf-8", "replace")


class DryRunExecutor(CommandExecutor):
    """Records the argv :class:`LocalExecutor` (same ``root``) would run and changes nothing.

    Reads are safe, so with a ``reader`` they are answered by it (the plan sees the real files);
    without one a read finds nothing. Mutations only append to ``commands``.
    """

    kind = "dry-run"

    def __init__(self, node: str, reader: NodeOps | None = None, **options: Unpack[RootedOptions]) -> None:
        super().__init__(node, **options)
        self.reader = reader

    def _record(self, argv: list[str]) -> None:
        self._commands.append(argv)

    def read(self, path: str) -> bytes | None:
        self._record(self._command("read", path))
        return self.reader.read(path) if self.reader else None

    def checksum(self, path: str) -> str | None:
        self._record(self._command("checksum", path))
        return self.reader.checksum(path) if self.reader else None

    def journal_since(self, since: datetime) -> str:
        self._record(self._command("journal", since=since))
        return self.reader.journal_since(since) if self.reader else ""

    def write(self, path: str, data: bytes, mode: int) -> None:
        self._record(self._command("write", path, mode=mode))

    def move_aside(self, path: str, suffix: str) -> str | None:
        self._record(self._command("move_aside", path, suffix=suffix))
        if self.reader is not None and self.reader.checksum(path) is None:
            return None
        return path + suffix

    def remove(self, path: str) -> None:
        self._record(self._command("remove", path))

    def kubelet(self, action: KubeletAction) -> None:
        self._record(self._command("kubelet", action=action))


def _subprocess(
    argv: list[str], stdin: bytes, timeout: float, where: str, op: str, node: str
) -> tuple[int, bytes, bytes]:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RolloutError(f"{op} did not finish within {timeout:g}s ({where})", node=node) from None
    except OSError as exc:
        raise RolloutError(f"{op}: cannot start {argv[0]} ({where}): {exc.strerror or exc}", node=node) from None
    return done.returncode, done.stdout, done.stderr


class LocalExecutor(CommandExecutor):
    """This host is the node (or ``root`` holds a copy of its files)."""

    kind = "local"

    def where(self) -> str:
        return "local" if self.root == "/" else f"local, root {self.root}"

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        return _subprocess(argv, stdin, self.timeout, self.where(), op, self.node)


class SshExecutor(CommandExecutor):
    """OpenSSH with the collector's conventions (BatchMode, the user's ssh config, ``--`` before
    the host): the node-side argv travels as ONE ``shlex.join``-quoted remote command, data on stdin."""

    kind = "ssh"

    def __init__(
        self,
        node: str,
        host: str,
        user: str | None = None,
        port: int | None = None,
        sudo: bool = True,
        options: Sequence[str] = (),
        *,
        ssh: str = "ssh",
        **common: Unpack[RootedOptions],
    ) -> None:
        super().__init__(node, **common)
        self.host = host
        self.sudo = sudo
        # The collector's transport builds the ssh part; its last word is its own remote command.
        self._ssh = SshTransport(host, user=user, port=port, sudo=False, options=tuple(options), ssh=ssh).argv([])[:-1]

    def where(self) -> str:
        return f"ssh {self.host}"

    def argv(self, remote: list[str]) -> list[str]:
        """The local ssh argv that runs ``remote`` on the node."""
        return [*self._ssh, shlex.join([*(("sudo", "-n") if self.sudo else ()), *remote])]

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        rc, out, err = _subprocess(self.argv(argv), stdin, self.timeout, self.where(), op, self.node)
        if rc == 255:  # ssh's own failure: the remote command never ran
            raise RolloutError(f"{op}: cannot reach the node ({self.where()}): {_last_line(err)}", node=self.node)
        return rc, out, err


#: nsenter into the host's namespaces from a hostPID pod: the command runs as if on the node.
NSENTER = ("nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--")
EXIT_MARK = re.compile(r"^--- tmnb exit (\d+) ---$", re.M)
STDERR_MARK = "--- tmnb stderr ---"
#: Data travels base64 in an env var, inside the pod object: keep it far below the object size limit.
MAX_POD_DATA = 512 << 10
# In the container: decode the data, run "$@" (nsenter + the node-side argv), then print the exit
# status, stdout as base64 between the collector's markers, and the stderr tail. It exits 0, so
# a Failed pod means the wrapper itself broke, and "absent" (exit 100) is an ordinary answer.
_POD_WRAPPER = """d=$(mktemp -d) || exit 1
printf %s "${TMNB_STDIN:-}" | base64 -d > "$d/in" || exit 1
"$@" < "$d/in" > "$d/out" 2> "$d/err"
echo "--- tmnb exit $? ---"
echo "--- tmnb bundle begin ---"
base64 "$d/out"
echo "--- tmnb bundle end ---"
echo "--- tmnb stderr ---"
tail -n 20 "$d/err"
"""


class NodePodExecutor(CommandExecutor):
    """Each command in its own privileged pod pinned to the node (hostPID, nsenter into PID 1's
    namespaces), deleted afterwards, always. Needs create/delete on pods and get on pods/log in
    ``namespace`` (deploy/node-pod-collector-rbac.yaml). The kubelet cannot be stopped this way:
    the pods that carry every later command need it running."""

    kind = "node-pod"

    def __init__(
        self,
        api_client: client.ApiClient,
        node: str,
        namespace: str = "tmnb-node-collector",
        image: str = "busybox:1.37",
        *,
        poll: float = 1.0,
        **common: Unpack[RootedOptions],
    ) -> None:
        super().__init__(node, **common)
        self.api_client = api_client
        self.namespace = namespace
        self.image = image
        self.poll = poll
        self.created: list[str] = []

    def where(self) -> str:
        return f"node pod in {self.namespace}"

    def manifest(self, argv: list[str], stdin: bytes, op: str) -> JsonDict:
        if len(stdin) > MAX_POD_DATA:
            raise RolloutError(
                f"{op}: {len(stdin)} bytes is too much to pass through a pod spec (at most {MAX_POD_DATA})",
                node=self.node,
            )
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "generateName": "tmnb-rollout-",
                "namespace": self.namespace,
                "labels": {POD_LABEL: POD_LABEL_VALUE},
                "annotations": {"tmnb.dev/node": self.node, "tmnb.dev/operation": op},
            },
            "spec": {
                "nodeName": self.node,
                "hostPID": True,
                "restartPolicy": "Never",
                "activeDeadlineSeconds": max(int(self.timeout), 1),
                "automountServiceAccountToken": False,
                "enableServiceLinks": False,
                "tolerations": [{"operator": "Exists"}],
                "containers": [
                    {
                        "name": "op",
                        "image": self.image,
                        "command": ["sh", "-c", _POD_WRAPPER, "tmnb-node-op", *NSENTER, *argv],
                        "env": [{"name": "TMNB_STDIN", "value": base64.b64encode(stdin).decode()}],
                        "securityContext": {"privileged": True},
                        # Burstable with fractional CPU, as the collector's: never takes exclusive CPUs.
                        "resources": {
                            "requests": {"cpu": "50m", "memory": "32Mi"},
                            "limits": {"cpu": "500m", "memory": "256Mi"},
                        },
                        "volumeMounts": [{"name": "tmp", "mountPath": "/tmp"}],
                    }
                ],
                "volumes": [{"name": "tmp", "emptyDir": {"sizeLimit": "64Mi"}}],
            },
        }

    def kubelet(self, action: KubeletAction) -> None:
        if action == "stop":
            raise RolloutError(
                "the node-pod executor cannot stop the kubelet: every later operation runs in a pod, and "
                "pods need a running kubelet; use the ssh or local executor for a stop/start sequence",
                node=self.node,
            )
        super().kubelet(action)

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        core = client.CoreV1Api(self.api_client)
        where = f"{op} ({self.where()})"
        try:
            body = client.V1Pod.model_validate(self.manifest(argv, stdin, op))
            pod = core.create_namespaced_pod(self.namespace, body)
        except RolloutError:
            raise
        except Exception as exc:
            raise RolloutError(f"{where}: cannot create the pod: {describe(exc)}", node=self.node) from None
        name = pod.metadata.name if pod.metadata else None
        if not name:
            raise RolloutError(f"{where}: the API server returned the pod without a name", node=self.node)
        self.created.append(name)
        try:
            phase = self._wait(core, name, where)
            log = raw_body(core.read_namespaced_pod_log(name, self.namespace, container="op", _preload_content=False))
        except RolloutError:
            raise
        except Exception as exc:
            raise RolloutError(f"{where}: pod {name}: {describe(exc)}", node=self.node) from None
        finally:
            self._delete(core, name)
        return parse_pod_log(log.decode("utf-8", "replace"), phase=phase, where=f"{where}: pod {name}", node=self.node)

    def _wait(self, core: client.CoreV1Api, name: str, where: str) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            status = core.read_namespaced_pod_status(name, self.namespace).status
            phase = status.phase if status else None
            if phase in ("Succeeded", "Failed"):
                return str(phase)
            time.sleep(self.poll)
        raise RolloutError(f"{where}: pod {name} did not finish within {self.timeout:g}s", node=self.node)

    def _delete(self, core: client.CoreV1Api, name: str) -> None:
        try:
            core.delete_namespaced_pod(name, self.namespace, grace_period_seconds=0)
        except Exception as exc:
            if status_of(exc) != 404:
                raise RolloutError(f"could not delete pod {name}: {describe(exc)}", node=self.node) from None


def parse_pod_log(text: str, *, phase: str, where: str, node: str) -> tuple[int, bytes, bytes]:
    """(exit status, stdout, stderr) from the wrapper's log."""
    found = EXIT_MARK.search(text)
    if phase != "Succeeded" or found is None:
        tail = text.strip().splitlines()[-1:] or ["(no output)"]
        raise RolloutError(f"{where} ended {phase} without running the command: {tail[0]}", node=node)
    try:
        out = decode_bundle(text, where=where)
    except CollectError as exc:
        raise RolloutError(str(exc), node=node) from None
    err = text.split(STDERR_MARK + "\n", 1)[1] if STDERR_MARK + "\n" in text else ""
    return int(found.group(1)), out, err.encode()


# ---------------------------------------------------------------------- sandbox
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


# ---------------------------------------------------------------------- registry
def _dry_run(node: str, reader: NodeOps | None = None, **o: Unpack[RootedOptions]) -> NodeOps:
    return DryRunExecutor(node, reader, **o)


def _local(node: str, **o: Unpack[RootedOptions]) -> NodeOps:
    return LocalExecutor(node, **o)


def _ssh(node: str, host: str | None = None, **o: Unpack[SshOptions]) -> NodeOps:
    if not host:
        raise RolloutError("the ssh executor needs host= (the node's ssh address)", node=node)
    return SshExecutor(node, host, **o)


def _node_pod(node: str, api_client: client.ApiClient | None = None, **o: Unpack[NodePodOptions]) -> NodeOps:
    if api_client is None:
        raise RolloutError("the node-pod executor needs api_client= (a Kubernetes API client)", node=node)
    return NodePodExecutor(api_client, node, **o)


def _sandbox(
    node: str,
    api: SandboxClient | None = None,
    kubeconfig: str | Path | None = None,
    context: str | None = None,
    root: str | Path | None = None,
    **o: Unpack[ExecutorOptions],
) -> NodeOps:
    api = api or SandboxClient.from_kubeconfig(kubeconfig, context)
    return SandboxExecutor(node, root or api.node_root(validate_node_name(node)), api, **o)


#: Each kind's factory: the node, then that executor's keyword options (checked when it is called).
EXECUTORS: dict[str, Callable[..., NodeOps]] = {
    "dry-run": _dry_run,
    "local": _local,
    "ssh": _ssh,
    "node-pod": _node_pod,
    "sandbox": _sandbox,
}


def make_executor(kind: str, node: str, **options: object) -> NodeOps:
    """The executor ``kind`` for ``node``; options are the executor's keyword arguments (the
    ``*Options`` above; they come from a notebook parameter, so an unknown one is a RolloutError)."""
    factory = EXECUTORS.get(kind)
    if factory is None:
        raise RolloutError(f"unknown executor {kind!r}: expected one of {', '.join(EXECUTORS)}")
    validate_node_name(node)
    try:
        return factory(node, **options)
    except TypeError as exc:  # an option the executor does not take
        raise RolloutError(f"executor {kind!r}: {exc}", node=node) from None


__all__ = [
    "EXECUTORS",
    "CommandExecutor",
    "DryRunExecutor",
    "LocalExecutor",
    "NodePodExecutor",
    "SandboxClient",
    "SandboxExecutor",
    "SshExecutor",
    "make_executor",
]
