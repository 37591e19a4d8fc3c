"""Inputs of ``tmnb whatif``: ``--set`` values and the two ways to describe the nodes.

``check_inputs`` needs no snapshot machinery, so a wrong argument is reported before pandas loads.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.errors import InputError
from tmnb.parse.files import MIB, read_capped
from tmnb.settings.target import check_target_fields
from tmnb.sources.resolve import check_source

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

#: A PodList of every pod of a large cluster is some tens of MiB.
PODLIST_LIMIT = 512 * MIB


def parse_settings(items: list[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` pairs; values are YAML. Option-map values become strings, as the kubelet wants."""
    pairs = []
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field.strip():
            raise InputError(f"expected FIELD=VALUE, got {item!r}", where="--set")
        pairs.append((field.strip(), raw))
    check_target_fields(dict(pairs), where="--set", values=False)  # names first: a typo needs no YAML parser
    import yaml

    target: dict[str, Any] = {}
    for field, raw in pairs:
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError as exc:
            raise InputError(f"{field}: value is not valid YAML: {exc}", where="--set") from None
        if field.endswith("PolicyOptions"):
            if not isinstance(value, dict):
                raise InputError(f"{field}: expected a map, e.g. '{{name: \"value\"}}'", where="--set")
            value = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
        target[field] = value
    check_target_fields(target, where="--set")
    return target


def check_inputs(snapshot: str | None, node_root: str | None, pods: str | None) -> None:
    """What the arguments alone tell: files that are not there, a missing --pods."""
    if snapshot:
        check_source(snapshot)
        return
    if not pods:
        raise InputError("--node-root needs --pods (a PodList JSON, e.g. kubectl get pods -o json)")
    if not _is(Path.is_dir, node_root or "."):
        raise InputError("not a directory (a copy of one node's files)", source=node_root, where="--node-root")
    if not _is(Path.is_file, pods):
        raise InputError("no such file (a PodList JSON, e.g. kubectl get pods -o json)", source=pods, where="--pods")


def _is(test: Callable[[Path], bool], path: str) -> bool:
    try:
        return test(Path(path))
    except (OSError, ValueError):  # a name too long for the file system, or with a NUL byte, is no file
        return False


def load_whatif_input(snapshot: str | None, node_root: str | None, pods: str | None, node_name: str | None) -> Snapshot:
    from tmnb.parse.documents import load_json
    from tmnb.sources.kube_objects import pods_from_list
    from tmnb.sources.resolve import node_root_snapshot, open_snapshot

    check_inputs(snapshot, node_root, pods)
    if snapshot:
        return open_snapshot(snapshot)
    assert pods is not None  # check_inputs refused a missing --pods
    base = node_root_snapshot(node_root or ".", node_name)
    node = base.nodes[0]
    try:
        raw = read_capped(pods, limit=PODLIST_LIMIT, what="a PodList JSON (kubectl get pods -o json)")
    except OSError as exc:
        raise InputError(f"cannot read: {exc.strerror}", source=pods) from None
    doc = load_json(raw, source=pods, expected="a PodList JSON (kubectl get pods -o json)")
    listed = pods_from_list(doc, source=pods)
    bound = [dataclasses.replace(p, node=node.name) for p in listed if p.node in (None, node.name)]
    if listed and not bound:
        elsewhere = ", ".join(sorted({p.node or "" for p in listed}))
        raise InputError(
            f"no pod is bound to node {node.name!r} (pods are bound to: {elsewhere}); use --node-name", source=pods
        )
    by_uid = {p.uid: p for p in bound}
    node = dataclasses.replace(
        node,
        allocations=[
            dataclasses.replace(a, namespace=by_uid[a.pod_uid].namespace, pod=by_uid[a.pod_uid].name)
            if a.pod_uid in by_uid
            else a
            for a in node.allocations
        ],
    )
    return dataclasses.replace(base, nodes=[node], pods=bound)
