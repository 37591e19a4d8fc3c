"""How a live collection reads the nodes' own files: the ``node_files`` parameter.

The API alone gives no CPU topology, cpusets or on-disk kubelet layers; the node collector does.
``""`` reads nothing, ``ssh[:USER]`` uses OpenSSH with the user's config (host = node name),
``pod`` starts a short-lived privileged node pod, ``dir:PATH`` reads copies of each node's files
under ``PATH/<node>`` (what an SRE gets by copying them off, and what the sandbox serves).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

from tmnb.errors import InputError
from tmnb.snapshot import Snapshot
from tmnb.sources.node import collect_nodes, merge_node
from tmnb.sources.transports import LocalTransport, NodePodTransport, SshTransport, Transport

NODE_FILES_HELP = "'' (API only), 'ssh', 'ssh:USER', 'pod' or 'dir:PATH' (copies of node files in PATH/<node>)"


def transport_for(spec: str, *, context: str | None, kubeconfig: str | None) -> Callable[[str], Transport]:
    kind, _, arg = spec.partition(":")
    if kind == "ssh":
        return lambda node: SshTransport(host=node, user=arg or None)
    if kind == "dir" and arg:
        root = Path(arg)
        if not root.is_dir():
            raise InputError("not a directory", source=arg, where="node_files")
        return lambda node: LocalTransport(root=str(root / node))
    if kind == "pod" and not arg:
        from tmnb.sources.cluster import connect

        api_client, _ = connect(context, kubeconfig)
        return lambda node: NodePodTransport(api_client, node)
    raise InputError(f"unknown node_files {spec!r}: expected {NODE_FILES_HELP}", where="node_files")


def with_node_files(
    snapshot: Snapshot, spec: str, *, context: str | None, kubeconfig: str | None, progress: bool | None = None
) -> Snapshot:
    """Complete an API-only snapshot with each node's files; a node that cannot be read keeps its
    API view and gets an issue saying why."""
    if not spec:
        return snapshot
    transport = transport_for(spec, context=context, kubeconfig=kubeconfig)
    bundles = collect_nodes([n.name for n in snapshot.nodes], transport, progress=progress)
    pods = {p.uid: p for p in snapshot.pods}
    return dataclasses.replace(snapshot, nodes=[merge_node(n, bundles[n.name], pods) for n in snapshot.nodes])
