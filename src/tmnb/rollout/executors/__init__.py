"""Executors: where the node operations of :mod:`tmnb.rollout.ops` run, in one registry.

``EXECUTORS`` lists each kind: the word users write, what it is, what it can do (read node files,
write them, stop the kubelet), how a collection reads the nodes it reaches (its ``node_files``
spec) and how it is made. The CLI's ``--executor`` choices and help, the notebook's ``executor``
parameter, the session and the "unknown executor" message read it; a new executor is one
``ExecutorKind`` here and a module beside this one. The modules (and the Kubernetes client, httpx)
are imported when an executor is made, so the command line can list the kinds at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

from tmnb.errors import RolloutError
from tmnb.rollout.ops import validate_node_name

if TYPE_CHECKING:
    from tmnb.rollout.executors.command import ExecutorOptions, RootedOptions
    from tmnb.rollout.executors.node_pod import NodePodOptions
    from tmnb.rollout.executors.sandbox import SandboxClient
    from tmnb.rollout.executors.shell import SshOptions
    from tmnb.rollout.ops import NodeOps

#: The executor of each node, by name.
ExecutorFor = Callable[[str], "NodeOps"]


@dataclass(frozen=True)
class Reach:
    """How a session reaches the cluster and its nodes: the kube context and kubeconfig (None: the
    defaults) and the executor's own keyword options (``ExecutorKind.make``'s)."""

    context: str | None = None
    kubeconfig: str | None = None
    options: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecutorKind:
    """One way to reach a node's files and kubelet. ``reads``: the plan's diffs and the preflight read
    the node's own bytes through it; ``writes``: it can carry a change out (restart the kubelet
    included); ``stops``: it can stop the kubelet, which moving a state file needs. ``make(node,
    **options)`` builds it for one node; ``connect`` once per session (a client, a sandbox API);
    ``node_files`` is the spec that makes a collection read the nodes as this executor reaches them;
    ``through_cluster``: it reaches the nodes through the cluster's API, so it needs a kubeconfig."""

    word: str
    what: str
    reads: bool
    writes: bool
    stops: bool
    make: Callable[..., NodeOps]
    connect: Callable[[ExecutorKind, Reach], ExecutorFor] | None = None
    node_files: Callable[[Reach, ExecutorFor, Sequence[str]], str] | None = None
    through_cluster: bool = False

    def executors(self, reach: Reach) -> ExecutorFor:
        """Each node's executor for one session."""
        if self.connect is not None:
            return self.connect(self, reach)
        return lambda node: make_executor(self.word, node, **reach.options)

    def files_spec(self, reach: Reach, executor_for: ExecutorFor, nodes: Sequence[str]) -> str:
        """The ``node_files`` spec that reads the nodes as this executor does ('' for none)."""
        return self.node_files(reach, executor_for, nodes) if self.node_files is not None else ""


# ---------------------------------------------------------------------- factories (imports when used)
def _dry_run(node: str, reader: NodeOps | None = None, **o: Unpack[RootedOptions]) -> NodeOps:
    from tmnb.rollout.executors.command import DryRunExecutor

    return DryRunExecutor(node, reader, **o)


def _local(node: str, **o: Unpack[RootedOptions]) -> NodeOps:
    from tmnb.rollout.executors.shell import LocalExecutor

    return LocalExecutor(node, **o)


def _ssh(node: str, host: str | None = None, **o: Unpack[SshOptions]) -> NodeOps:
    from tmnb.rollout.executors.shell import SshExecutor

    if not host:
        raise RolloutError("the ssh executor needs host= (the node's ssh address)", node=node)
    return SshExecutor(node, host, **o)


def _ssh_connect(kind: ExecutorKind, reach: Reach) -> ExecutorFor:
    """Each node by its name unless ``host`` names the one address of every node."""
    rest = {k: v for k, v in reach.options.items() if k != "host"}
    return lambda node: make_executor(kind.word, node, host=reach.options.get("host") or node, **rest)


def _ssh_files(reach: Reach, executor_for: ExecutorFor, nodes: Sequence[str]) -> str:
    user = reach.options.get("user")
    return f"ssh:{user}" if isinstance(user, str) and user else "ssh"


def _node_pod(node: str, api_client: Any = None, **o: Unpack[NodePodOptions]) -> NodeOps:
    from tmnb.rollout.executors.node_pod import NodePodExecutor

    if api_client is None:
        raise RolloutError("the node-pod executor needs api_client= (a Kubernetes API client)", node=node)
    return NodePodExecutor(api_client, node, **o)


def _node_pod_connect(kind: ExecutorKind, reach: Reach) -> ExecutorFor:
    from tmnb.sources.cluster import connect

    api_client, _ = connect(reach.context, reach.kubeconfig)
    return lambda node: make_executor(kind.word, node, api_client=api_client, **reach.options)


def _sandbox(
    node: str,
    api: SandboxClient | None = None,
    kubeconfig: str | Path | None = None,
    context: str | None = None,
    root: str | Path | None = None,
    **o: Unpack[ExecutorOptions],
) -> NodeOps:
    from tmnb.rollout.executors.sandbox import SandboxClient, SandboxExecutor

    api = api or SandboxClient.from_kubeconfig(kubeconfig, context)
    return SandboxExecutor(node, root or api.node_root(validate_node_name(node)), api, **o)


def _sandbox_connect(kind: ExecutorKind, reach: Reach) -> ExecutorFor:
    from tmnb.rollout.executors.sandbox import SandboxClient

    api = SandboxClient.from_kubeconfig(reach.kubeconfig, reach.context)
    return lambda node: make_executor(kind.word, node, api=api, **reach.options)


def _sandbox_files(reach: Reach, executor_for: ExecutorFor, nodes: Sequence[str]) -> str:
    """A sandbox node's files sit beside every other node's: read them all from there."""
    from tmnb.rollout.executors.command import CommandExecutor

    first = next(iter(nodes), None) or _any_node(reach)
    ops = executor_for(first) if first else None
    return f"dir:{Path(ops.root).parent}" if isinstance(ops, CommandExecutor) else ""


def _any_node(reach: Reach) -> str | None:
    from kubernetes import client

    from tmnb.sources.cluster import connect

    api_client, _ = connect(reach.context, reach.kubeconfig)
    items = client.CoreV1Api(api_client).list_node(limit=1, _request_timeout=(5, 30)).items
    meta = items[0].metadata if items else None
    return meta.name if meta else None


#: Every executor, in the order help texts list them; the first is the default of a plan.
EXECUTORS: dict[str, ExecutorKind] = {
    kind.word: kind
    for kind in (
        ExecutorKind("dry-run", "records the commands, changes nothing", False, False, False, _dry_run),
        ExecutorKind("local", "this host is the node", True, True, True, _local),
        ExecutorKind("ssh", "OpenSSH to each node, sudo", True, True, True, _ssh, _ssh_connect, _ssh_files),
        ExecutorKind(
            "node-pod",
            "a privileged pod per command; cannot stop the kubelet",
            True, True, False, _node_pod, _node_pod_connect, lambda r, e, n: "pod", through_cluster=True,
        ),
        ExecutorKind(
            "sandbox", "a node of `tmnb sandbox`", True, True, True, _sandbox, _sandbox_connect, _sandbox_files,
            through_cluster=True,
        ),
    )
}  # fmt: skip


def executor_kind(word: str) -> ExecutorKind:
    """The kind ``word`` names; an unknown word is a RolloutError listing every kind."""
    kind = EXECUTORS.get(word)
    if kind is None:
        raise RolloutError(f"unknown executor {word!r}: expected one of {', '.join(EXECUTORS)}")
    return kind


def words(able: Callable[[ExecutorKind], bool]) -> str:
    """The kinds that can do something, as a message lists them ("local, ssh or sandbox")."""
    found = [k.word for k in EXECUTORS.values() if able(k)]
    return ", ".join(found[:-1]) + f" or {found[-1]}" if len(found) > 1 else "".join(found)


def executors_help() -> str:
    """The kinds as the command line's help lists them."""
    return "; ".join(f"{k.word}: {k.what}" for k in EXECUTORS.values())


def make_executor(kind: str, node: str, **options: object) -> NodeOps:
    """The executor ``kind`` for ``node``; options are the executor's keyword arguments (they come
    from a notebook parameter, so an unknown one is a RolloutError)."""
    factory = executor_kind(kind).make
    validate_node_name(node)
    try:
        return factory(node, **options)
    except TypeError as exc:  # an option the executor does not take
        raise RolloutError(f"executor {kind!r}: {exc}", node=node) from None
