"""Turn a notebook's ``source`` parameter into a Snapshot: the one entry for every path.

``SOURCES`` lists the kinds of source; help texts, the "unknown source" message and the check of
parameters that apply to one source only (``check_options``) are read from it. A new source is
one ``SourceKind`` there. The snapshot modules (pydantic) are imported where a snapshot is made,
so that ``check_source`` can refuse a wrong argument at once.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import socket
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.errors import InputError, SnapshotError, TmnbError
from tmnb.report.places import anchored

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

NODE_ROOT = "node-root:"
LIVE = "live"
SAMPLES = ("sample", "sample-after")


@dataclass(frozen=True)
class OpenOptions:
    """What a source may need beyond its name; ``None`` is "not given"."""

    node_selector: str | None = None
    context: str | None = None
    kubeconfig: str | None = None
    node_files: str | None = None
    node_name: str | None = None
    progress: bool | None = None
    node: str | None = None


@dataclass(frozen=True)
class SourceKind:
    """One way to name a snapshot source: the word users write (None for a file's path), what it is,
    which parameters apply to it alone, and how its snapshot is read."""

    form: str | None
    what: str
    claims: Callable[[str], bool]
    read: Callable[[str, OpenOptions], Snapshot]
    only: tuple[str, ...] = ()

    def describe(self, *, default: bool = False) -> str:
        what = f"default; {self.what}" if default else self.what
        return what if self.form is None else f"'{self.form}' ({what})"


def _read_sample(source: str, options: OpenOptions) -> Snapshot:
    from tmnb.sources.embedded import load_sample

    return load_sample()


def _read_sample_after(source: str, options: OpenOptions) -> Snapshot:
    from tmnb.sources.embedded import load_sample_after

    return load_sample_after()


def _read_live(source: str, options: OpenOptions) -> Snapshot:
    from tmnb.sources.cluster import collect_cluster
    from tmnb.sources.node_files import node_files_kind, with_node_files

    if options.node_files:  # a spec that names no transport is refused before the cluster is read
        node_files_kind(options.node_files)
    snapshot = collect_cluster(
        options.context or None,
        options.kubeconfig or None,
        node_selector=options.node_selector,
        node_name=options.node,
        progress=options.progress,
    )
    return with_node_files(
        snapshot,
        options.node_files or "",
        context=options.context or None,
        kubeconfig=options.kubeconfig or None,
        progress=options.progress,
    )


def _read_node_root(source: str, options: OpenOptions) -> Snapshot:
    return node_root_snapshot(source.removeprefix(NODE_ROOT), options.node_name)


def _read_file(source: str, options: OpenOptions) -> Snapshot:
    from tmnb.snapshot import load

    ahead = _READ_AHEAD.pop(os.path.realpath(source), None)
    if ahead is not None and ahead[0] == _stamp(source):
        return ahead[1]
    return load(source)


#: A snapshot file the run's kernel read for the parameter checks (``read_ahead``), by real path, with
#: the file's stamp when it was read: the first ``open_snapshot`` of the same, unchanged file takes it
#: instead of reading the file again.
_READ_AHEAD: dict[str, tuple[tuple[int, int, int, int], Snapshot]] = {}


def _stamp(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def read_ahead(source: str) -> Snapshot | None:
    """A snapshot file loaded now and kept for the first ``open_snapshot`` of it (a run's parameter
    checks and its notebook both need a file that takes seconds to read at 5,000 nodes: see
    ``tmnb.cli.run.checks``). None for anything but a snapshot file, a file that cannot be loaded, or
    one changed while it was read: ``open_snapshot`` itself reads it again and says what is wrong."""
    from tmnb.snapshot import load

    stamp = _stamp(source)
    if stamp is None or source_kind(source) is not SNAPSHOT_FILE:
        return None
    try:
        snapshot = load(source)
    except (InputError, SnapshotError):
        return None
    if _stamp(source) != stamp:
        return None
    _READ_AHEAD[os.path.realpath(source)] = (stamp, snapshot)
    return snapshot


#: A snapshot file: whatever no other source claims.
SNAPSHOT_FILE = SourceKind(None, "the path of a snapshot file (.json or .json.gz)", lambda s: True, _read_file)
#: Every source, matched in order.
SOURCES: tuple[SourceKind, ...] = (
    SourceKind("sample", "the embedded fleet", lambda s: s == "sample", _read_sample),
    SourceKind("sample-after", "the same fleet after a rollout", lambda s: s == "sample-after", _read_sample_after),
    SourceKind(LIVE, "the cluster of a kube context", lambda s: s == LIVE, _read_live,
               ("context", "kubeconfig", "node_files")),
    SourceKind(f"{NODE_ROOT}DIR", "a copy of one node's files", lambda s: s.startswith(NODE_ROOT), _read_node_root,
               ("node_name",)),
    SNAPSHOT_FILE,
)  # fmt: skip


def sources_help(default: str | None = None) -> str:
    """The sources as help texts and errors list them; ``default`` names the one a command assumes."""
    parts = [k.describe(default=k.form is not None and k.form == default) for k in SOURCES]
    return f"{', '.join(parts[:-1])} or {parts[-1]}"


SOURCES_HELP = sources_help()


def source_kind(source: str) -> SourceKind:
    return next(k for k in SOURCES if k.claims(source))


def source_argument(source: str) -> str | Path:
    """``source`` as a printed command (``report.commands``) passes it, to run from any directory: a
    snapshot file as its path (which the command makes absolute), a node root's folder absolute, a
    word as it is."""
    if source_kind(source) is SNAPSHOT_FILE:
        return Path(source)
    if source.startswith(NODE_ROOT):
        return NODE_ROOT + str(Path(source.removeprefix(NODE_ROOT)).resolve())
    return source


def check_source(source: str) -> None:
    """What the argument alone tells: a word that is no source, or a snapshot file that is not there."""
    if "\0" in source:
        raise InputError(f"{source!r} holds a NUL byte: not a file name", where="source")
    if source_kind(source) is not SNAPSHOT_FILE:
        return
    if _exists(source):
        from tmnb.snapshot.io import sniff

        sniff(source)
        return
    if Path(source).suffix not in {".json", ".gz"}:
        raise InputError(f"unknown source {source!r}: expected {SOURCES_HELP}", where="source")
    raise SnapshotError(f"cannot read snapshot: {os.strerror(errno.ENOENT)}", source=source)


def check_options(
    source: str, given: Mapping[str, object], *, flags: bool = False, source_flag: str = "--source"
) -> None:
    """Refuse a parameter given (not None) with a source it does not apply to: the one check of
    "only with live" and "only with node-root". ``flags`` names them as the command line does, the
    source as ``source_flag``."""
    kind = source_kind(source)
    for owner in SOURCES:
        wrong = [name for name in owner.only if given.get(name) is not None]
        if owner is kind or not wrong:
            continue
        names = " and ".join(f"--{n.replace('_', '-')}" if flags else n for n in wrong)
        verb = "applies" if len(wrong) == 1 else "apply"
        to = f"{source_flag} {owner.form}" if flags else f"source='{owner.form}'"
        raise InputError(f"{names} {verb} to {to} only", where=source_flag if flags else wrong[0])


def open_snapshot(
    source: str,
    node_selector: str | None = None,
    *,
    context: str | None = None,
    kubeconfig: str | None = None,
    node_files: str = "",
    node_name: str | None = None,
    progress: bool | None = None,
    node: str | None = None,
) -> Snapshot:
    """The snapshot a source names (``SOURCES``), narrowed to ``node_selector``. ``live`` reads the
    ``context`` of ``kubeconfig`` (default the current context, or the in-cluster service account)
    and, after ``node_files`` (``tmnb.sources.node_files``), the nodes' own files; ``progress`` None
    shows bars on a terminal or notebook. ``node-root:DIR`` is the one node ``whatif --node-root``
    reads, named ``node_name`` (default: the directory's name; for ``/``, the host's node), without
    pods. ``context`` and ``kubeconfig`` are ignored by the other sources: a rollout hands them to its
    executor too. ``node`` narrows to the node of that name; ``live`` then reads that node alone, its
    files included."""
    from tmnb.snapshot.select import select_named, select_nodes

    check_options(source, {"node_files": node_files or None, "node_name": node_name})
    check_source(source)
    options = OpenOptions(node_selector, context, kubeconfig, node_files, node_name, progress, node)
    return select_named(select_nodes(source_kind(source).read(source, options), node_selector), node)


def _exists(path: str) -> bool:
    try:
        return Path(path).exists()
    except OSError:  # a name too long for the file system is not a file
        return False


def node_root_snapshot(directory: str, node_name: str | None = None) -> Snapshot:
    """A one-node snapshot of a copied node root, so what tmnb understood of a node (and the
    ``issues[]`` of every file it could not use) can be read before a prediction is trusted. The node
    is ``node_name``, else the directory's name; ``/`` (tmnb run on the node) is the node whose kubelet
    runs here (``own_node_name``)."""
    from tmnb.snapshot import Snapshot, SnapshotSource
    from tmnb.sources.node_root import read_node_root

    if not directory:
        raise InputError(f"expected {NODE_ROOT}DIR, the directory of a copy of a node's files", where="source")
    root = Path(directory)
    here = node_name is None and not root.resolve().name  # "/": the node's own files, read on the node
    name = node_name if node_name is not None else root.resolve().name
    if not here and not name.strip():
        raise InputError("a node name cannot be empty", where="node name")
    node = read_node_root(root, name=name or "localhost")
    if here:
        node = dataclasses.replace(node, name=own_node_name(node.kubelet.flags))
    captured = datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")
    return Snapshot(captured_at=captured, source=SnapshotSource(kind="bundle", detail=str(root)), nodes=[node])


def own_node_name(argv: Sequence[str]) -> str:
    """The name this host's kubelet registers its node under, as its ``GetHostname`` makes it: the
    command line's ``--hostname-override``, else the host name, trimmed and lower-cased."""
    from tmnb.parse.kubelet_flags import parse_kubelet_args

    override = None
    if argv:
        try:
            override = parse_kubelet_args(argv, source="kubelet command line").last("hostname-override")
        except TmnbError:  # a command line the kubelet refuses: the collection has its issue already
            override = None
    name = ((override.value if override else None) or socket.gethostname()).strip().lower()
    if not name:
        raise InputError("empty hostname is invalid: name the node with --node-name", where="node name")
    return name


def save_to_run(snapshot: Snapshot, out_dir: str | Path, name: str = "snapshot.json.gz") -> Path:
    """Write the snapshot (and its checksum manifest) into a run folder as evidence."""
    from tmnb.snapshot import save

    path = anchored(out_dir) / name
    save(snapshot, path)
    return path
