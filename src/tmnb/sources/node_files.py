"""How a live collection reads the nodes' own files: the ``node_files`` parameter.

The API alone gives no CPU topology, cpusets or on-disk kubelet layers; the node collector does.
``""`` reads nothing; every other spec is ``WORD`` or ``WORD:ARG`` of one kind in ``NODE_FILES``,
which also gives the help text. A new transport is a ``Transport`` in ``tmnb.sources.transports``
and one ``NodeFilesKind`` here. Transports (and the Kubernetes client) are imported when used.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.errors import InputError

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot
    from tmnb.sources.transports import Transport

#: A node's transport, by node name.
TransportFor = Callable[[str], "Transport"]


@dataclass(frozen=True)
class NodeFilesKind:
    """One way to read the nodes' files: the spec's word, its argument's name (None: no argument),
    whether the argument is required, what it is, and the transport it gives each node from the
    argument and the kube context and kubeconfig of the collection."""

    word: str
    arg: str | None
    arg_required: bool
    what: str
    transports: Callable[[str, str | None, str | None], TransportFor]

    def describe(self) -> str:
        forms = [f"'{self.word}:{self.arg}'"] if self.arg_required else [f"'{self.word}'"]
        if self.arg and not self.arg_required:
            forms.append(f"'{self.word}:{self.arg}'")
        return f"{' or '.join(forms)} ({self.what})"

    def accepts(self, arg: str) -> bool:
        return bool(arg) if self.arg_required else self.arg is not None or not arg


def _ssh(user: str, context: str | None, kubeconfig: str | None) -> TransportFor:
    from tmnb.sources.transports import SshTransport

    return lambda node: SshTransport(host=node, user=user or None)


def _pod(arg: str, context: str | None, kubeconfig: str | None) -> TransportFor:
    from tmnb.sources.cluster import connect
    from tmnb.sources.transports import NodePodTransport

    api_client, _ = connect(context, kubeconfig)
    return lambda node: NodePodTransport(api_client, node)


def _dir(path: str, context: str | None, kubeconfig: str | None) -> TransportFor:
    from tmnb.sources.transports import LocalTransport

    root = Path(path)
    if not root.is_dir():
        raise InputError("not a directory", source=path, where="node_files")
    return lambda node: LocalTransport(root=str(root / node))


NODE_FILES: tuple[NodeFilesKind, ...] = (
    NodeFilesKind("ssh", "USER", False, "OpenSSH with your ssh config to each node by name, as USER", _ssh),
    NodeFilesKind("pod", None, False, "a short-lived privileged pod on each node", _pod),
    NodeFilesKind("dir", "PATH", True, "copies of node files in PATH/<node>", _dir),
)
NODE_FILES_HELP = f"'' (API only), {', '.join(k.describe() for k in NODE_FILES[:-1])} or {NODE_FILES[-1].describe()}"


def node_files_kind(spec: str) -> tuple[NodeFilesKind, str]:
    """The kind a non-empty spec names and its argument; what the spec alone tells, before any node is read."""
    word, _, arg = spec.partition(":")
    for kind in NODE_FILES:
        if kind.word == word and kind.accepts(arg):
            return kind, arg
    raise InputError(f"unknown node_files {spec!r}: expected {NODE_FILES_HELP}", where="node_files")


def transport_for(spec: str, *, context: str | None, kubeconfig: str | None) -> TransportFor:
    kind, arg = node_files_kind(spec)
    return kind.transports(arg, context, kubeconfig)


def with_node_files(
    snapshot: Snapshot, spec: str, *, context: str | None, kubeconfig: str | None, progress: bool | None = None
) -> Snapshot:
    """Complete an API-only snapshot with each node's files; a node that cannot be read keeps its
    API view and gets an issue saying why."""
    if not spec:
        return snapshot
    from tmnb.sources.node import collect_nodes, merge_node

    transport = transport_for(spec, context=context, kubeconfig=kubeconfig)
    bundles = collect_nodes([n.name for n in snapshot.nodes], transport, progress=progress)
    pods = {p.uid: p for p in snapshot.pods}
    return dataclasses.replace(snapshot, nodes=[merge_node(n, bundles[n.name], pods) for n in snapshot.nodes])
