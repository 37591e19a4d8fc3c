"""Turn a notebook's ``source`` parameter into a Snapshot: the one entry for every path.

The snapshot modules (pydantic) are imported where a snapshot is made, so that ``check_source``
can refuse a wrong argument at once.
"""

from __future__ import annotations

import errno
import os
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.errors import InputError, SnapshotError

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

NODE_ROOT = "node-root:"
SAMPLES = ("sample", "sample-after")
SOURCES_HELP = (
    "'sample' (the embedded fleet), 'sample-after' (the same fleet after a rollout), "
    "'live' (the cluster of a kube context), "
    f"'{NODE_ROOT}DIR' (a copy of one node's files) or the path of a snapshot file (.json or .json.gz)"
)


def check_source(source: str) -> None:
    """What the argument alone tells: a word that is no source, or a snapshot file that is not there."""
    if "\0" in source:
        raise InputError(f"{source!r} holds a NUL byte: not a file name", where="source")
    if source == "live" or source in SAMPLES or source.startswith(NODE_ROOT) or _exists(source):
        return
    if Path(source).suffix not in {".json", ".gz"}:
        raise InputError(f"unknown source {source!r}: expected {SOURCES_HELP}", where="source")
    raise SnapshotError(f"cannot read snapshot: {os.strerror(errno.ENOENT)}", source=source)


def open_snapshot(
    source: str,
    node_selector: str | None = None,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    node_files: str = "",
    node_name: str | None = None,
    progress: bool | None = None,
) -> Snapshot:
    """``sample`` or ``sample-after``, ``live`` (``context`` of ``kubeconfig``; default the current context, or the
        in-cluster service account; ``node_files`` says how to read the nodes' own files, see
        ``tmnb.sources.node_files``) or a snapshot file, narrowed to ``node_selector``. ``progress``
    None shows bars on a terminal or notebook for a live collection. ``node-root:DIR`` is the one node
    ``whatif --node-root`` reads, named ``node_name`` (default: the directory's name), without pods."""
    from tmnb.snapshot import load
    from tmnb.snapshot.select import select_nodes

    if source != "live" and node_files:
        raise InputError("node_files applies to source='live' only", where="node_files")
    if node_name is not None and not source.startswith(NODE_ROOT):
        raise InputError(f"node_name applies to source='{NODE_ROOT}DIR' only", where="node_name")
    check_source(source)
    if source == "live":
        from tmnb.sources.cluster import collect_cluster
        from tmnb.sources.node_files import with_node_files

        snapshot = collect_cluster(context or None, kubeconfig or None, node_selector=node_selector, progress=progress)
        snapshot = with_node_files(
            snapshot, node_files, context=context or None, kubeconfig=kubeconfig or None, progress=progress
        )
    elif source.startswith(NODE_ROOT):
        snapshot = node_root_snapshot(source.removeprefix(NODE_ROOT), node_name)
    elif source in SAMPLES:
        from tmnb.sources.sample import load_sample, load_sample_after

        snapshot = load_sample() if source == "sample" else load_sample_after()
    else:
        snapshot = load(source)
    return select_nodes(snapshot, node_selector)


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except OSError:  # a name too long for the file system is not a file
        return False


def node_root_snapshot(directory: str, node_name: str | None = None) -> Snapshot:
    """A one-node snapshot of a copied node root, so what tmnb understood of a node (and the
    ``issues[]`` of every file it could not use) can be read before a prediction is trusted."""
    from tmnb.snapshot import Snapshot, SnapshotSource
    from tmnb.sources.node_root import read_node_root

    if not directory:
        raise InputError(f"expected {NODE_ROOT}DIR, the directory of a copy of a node's files", where="source")
    root = Path(directory)
    name = node_name if node_name is not None else root.resolve().name
    if not name.strip():
        raise InputError("a node name cannot be empty", where="node name")
    node = read_node_root(root, name=name)
    captured = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return Snapshot(captured_at=captured, source=SnapshotSource(kind="bundle", detail=str(root)), nodes=[node])


def save_to_run(snapshot: Snapshot, out_dir: str | Path, name: str = "snapshot.json.gz") -> Path:
    """Write the snapshot (and its checksum manifest) into a run folder as evidence."""
    from tmnb.snapshot import save

    path = Path(out_dir) / name
    save(snapshot, path)
    return path
