"""Turn a notebook's ``source`` parameter into a Snapshot: the one entry for every path.

The snapshot modules (pydantic) are imported where a snapshot is made, so that ``check_source``
can refuse a wrong argument at once.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.errors import InputError, SnapshotError

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

SOURCES_HELP = (
    "'sample' (the embedded fleet), 'live' (the cluster of a kube context) "
    "or the path of a snapshot file (.json or .json.gz)"
)


def check_source(source: str) -> None:
    """What the argument alone tells: a word that is no source, or a snapshot file that is not there."""
    if source in ("live", "sample"):
        return
    path = Path(source)
    if path.exists():
        return
    if path.suffix not in {".json", ".gz"}:
        raise InputError(f"unknown source {source!r}: expected {SOURCES_HELP}", where="source")
    raise SnapshotError(f"cannot read snapshot: {os.strerror(errno.ENOENT)}", source=source)


def open_snapshot(
    source: str,
    node_selector: str | None = None,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    node_files: str = "",
    progress: bool | None = None,
) -> Snapshot:
    """``sample``, ``live`` (``context`` of ``kubeconfig``; default the current context, or the
        in-cluster service account; ``node_files`` says how to read the nodes' own files, see
        ``tmnb.sources.node_files``) or a snapshot file, narrowed to ``node_selector``. ``progress``
    None shows bars on a terminal or notebook for a live collection."""
    from tmnb.snapshot import load
    from tmnb.snapshot.select import select_nodes

    if source != "live" and node_files:
        raise InputError("node_files applies to source='live' only", where="node_files")
    check_source(source)
    if source == "live":
        from tmnb.sources.cluster import collect_cluster
        from tmnb.sources.node_files import with_node_files

        snapshot = collect_cluster(context or None, kubeconfig or None, node_selector=node_selector, progress=progress)
        snapshot = with_node_files(
            snapshot, node_files, context=context or None, kubeconfig=kubeconfig or None, progress=progress
        )
    elif source == "sample":
        from tmnb.sources.sample import load_sample

        snapshot = load_sample()
    else:
        snapshot = load(source)
    return select_nodes(snapshot, node_selector)


def save_to_run(snapshot: Snapshot, out_dir: str | Path, name: str = "snapshot.json.gz") -> Path:
    """Write the snapshot (and its checksum manifest) into a run folder as evidence."""
    from tmnb.snapshot import save

    path = Path(out_dir) / name
    save(snapshot, path)
    return path
