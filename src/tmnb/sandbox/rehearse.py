"""Change a sandbox node the way an operator changes a real one: edit its kubelet config file, then
restart the kubelet (which re-admits the pods it runs, and may refuse to start)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from tmnb.errors import InputError
from tmnb.sandbox.cluster import Cluster
from tmnb.sources.node_render import KUBELET_CONFIG


def apply_kubelet_change(cluster: Cluster, node: str, fields: Mapping[str, Any]) -> str | None:
    """Write ``fields`` into the node's config file and restart its kubelet; None when it came up,
    else the kubelet's error (its node then reports NotReady)."""
    kubelet = cluster.kubelets.get(node)
    if kubelet is None or kubelet.root is None:
        raise InputError(f"node {node!r} has no node files in this sandbox (started with --no-node-files?)")
    path = kubelet.root / KUBELET_CONFIG
    doc = yaml.safe_load(path.read_text()) or {}
    doc.update(fields)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return cluster.restart_kubelet(node)
