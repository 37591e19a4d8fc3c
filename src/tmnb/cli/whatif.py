"""``tmnb whatif``: its arguments, its inputs (``--set`` values, the two ways to describe the nodes
and the selection of some of them) and the prediction, printed by ``whatif_view`` as a table or as
JSON Lines.

``check_inputs`` and ``check_selection`` need no snapshot machinery, so a wrong argument is reported
before pandas loads.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from tmnb.cli.exits import EXIT_ALERT, EXIT_OK
from tmnb.cli.terminal import WIDTH, wrap
from tmnb.cli.types import Subcommands, workers
from tmnb.errors import InputError
from tmnb.parse.files import MIB, read_capped
from tmnb.settings.target import check_target_fields
from tmnb.sources.node_files import NODE_FILES_HELP
from tmnb.sources.resolve import check_options, check_source, sources_help

if TYPE_CHECKING:
    import pandas as pd

    from tmnb.replay import NodePlan
    from tmnb.snapshot import Snapshot

T = TypeVar("T")
#: A PodList of every pod of a large cluster is some tens of MiB.
PODLIST_LIMIT = 512 * MIB
#: What ``-o`` prints: for a person (within the terminal module's width, or whole) or JSON Lines.
OUTPUTS = ("table", "wide", "json")


def add_parsers(sub: Subcommands) -> None:
    what = sub.add_parser("whatif", help="predict which pods each node admits under target kubelet settings")
    src = what.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshot", help=sources_help())
    src.add_argument("--node-root", help="a copy of one node's files laid out as on the node (needs --pods)")
    what.add_argument("--pods", help="PodList JSON (kubectl get pods -o json) for --node-root")
    what.add_argument(
        "--node-name",
        help="the name of the node copied under --node-root (default: the directory name; for / the name this "
        "host's kubelet registers); not with --snapshot",
    )
    add_selection(what)
    add_target(what)
    what.add_argument(
        "--mode",
        choices=["drain", "restart"],
        default="drain",
        help="drain: every pod re-admitted after a drain, with the state files the change spoils moved aside "
        "(one the kubelet cannot restore stays; default); restart: the running pods re-admitted over "
        "today's state files",
    )
    what.add_argument(
        "-o",
        "--output",
        choices=OUTPUTS,
        default="table",
        help=f"table: for a person, within {WIDTH} columns (default); wide: every column and cell whole; "
        "json: JSON Lines, a record per pod and per node",
    )
    what.add_argument("--format", dest="output", choices=("table", "json"), help="the same as -o table|json")
    what.add_argument(
        "--rejected-only", action="store_true", help="only the rejected pods, and the nodes with something to note"
    )
    what.add_argument(
        "--workers",
        type=workers,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes replaying the nodes (default: this machine's cores); the output is the same",
    )


def add_selection(parser: argparse.ArgumentParser) -> None:
    """The options that narrow a source to some nodes, and those of a live source."""
    parser.add_argument("--node", help="only the node of this name (on a live source, the only node read)")
    parser.add_argument("-l", "--selector", help="only the nodes with these labels (key=value,key in (a,b),...)")
    parser.add_argument("--context", help="kube context of a live source (default: the current context)")
    parser.add_argument("--kubeconfig", help="kubeconfig of a live source (default: $KUBECONFIG, ~/.kube/config)")
    parser.add_argument("--node-files", help=f"how a live source reads the nodes' files: {NODE_FILES_HELP}")


def add_target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        help="KubeletConfiguration field to set (repeatable); maps as YAML, e.g. "
        "topologyManagerPolicyOptions='{prefer-closest-numa-nodes: \"true\"}'",
    )
    parser.add_argument(
        "--kubelet-version",
        metavar="MINOR",
        help="predict after an upgrade to this kubelet minor (1.33 to 1.37), as --set kubeletVersion=MINOR does",
    )


def command(args: argparse.Namespace) -> int:
    check_selection(args)
    check_inputs(args.snapshot, args.node_root, args.pods, args.node_name)
    if not args.settings and args.kubelet_version is None:
        raise InputError(
            "expected what to predict: --set FIELD=VALUE (repeatable) or --kubelet-version MINOR", where="--set"
        )
    target = target_of(args.settings, args.kubelet_version)
    from tmnb.cli import whatif_view as view
    from tmnb.replay import plans_for

    snapshot = load_whatif_input(args.snapshot, args.node_root, args.pods, args.node_name, args)
    plans = plans_for(snapshot.nodes, target)
    nodes, rejected = (_json if args.output == "json" else _table)(args, snapshot, target, plans)
    # last on a terminal too, below a fleet's long table: wrapped there for a person, and in a log one line
    # a fact with the kubelet's words as they are (line breaks and all)
    width = WIDTH if args.output != "wide" and sys.stderr.isatty() else None
    for row in nodes.to_dict("records"):
        for fact in view.facts(row):
            said = f"tmnb: {row['node']}: {fact}"
            print(said if width is None else "\n".join(wrap(said, width)), file=sys.stderr)
    refused = bool(len(nodes)) and not nodes["kubelet starts"].all()
    return EXIT_ALERT if refused or rejected else EXIT_OK


def _width(args: argparse.Namespace) -> int | None:
    return WIDTH if args.output == "table" else None


def _json(
    args: argparse.Namespace, snapshot: Snapshot, target: dict[str, Any], plans: Mapping[str, NodePlan]
) -> tuple[pd.DataFrame, bool]:
    """JSON Lines, a node's pods then the node as each node comes back; the nodes' rows and whether a
    pod was rejected."""
    import pandas as pd

    from tmnb.analysis.whatif import whatif_rows
    from tmnb.cli import whatif_view as view

    node_rows, rejected = [], False
    held: list[str] | None = []  # records before the first node with an answer: none may come (an error)
    for rows, node_row in whatif_rows(snapshot, target, mode=args.mode, plans=plans, workers=args.workers):
        lines = [json.dumps(view.pod_record(r)) for r in rows if not (r["admitted"] and args.rejected_only)]
        if not args.rejected_only or node_row["rejected"] or view.facts(node_row):
            lines.append(json.dumps(view.node_record(node_row)))
        rejected = rejected or not all(r["admitted"] for r in rows)
        node_rows.append(node_row)
        if held is not None and node_row["kubelet starts"] and node_row["refusal"]:
            held += lines
            continue
        for line in [*(held or []), *lines]:
            print(line)
        held = None
    nodes = pd.DataFrame(node_rows)
    _refuse_nothing_predicted(nodes)
    return nodes, rejected


def _table(
    args: argparse.Namespace, snapshot: Snapshot, target: dict[str, Any], plans: Mapping[str, NodePlan]
) -> tuple[pd.DataFrame, bool]:
    """The summary, the pods, the nodes and an upgrade's changes, for a person."""
    from tmnb.analysis.whatif import whatif
    from tmnb.cli import whatif_view as view

    width = _width(args)
    pods, nodes = whatif(snapshot, target, mode=args.mode, plans=plans, progress=None, workers=args.workers)
    _refuse_nothing_predicted(nodes)
    shown_pods, shown_nodes = pods, nodes
    if args.rejected_only:
        shown_pods = pods[~pods["admitted"]]
        shown_nodes = nodes[[bool(r["rejected"] or view.facts(r)) for r in nodes.to_dict("records")]]
    changes: list[str] = []
    if any(p.upgrades for p in plans.values()):
        from tmnb.analysis.upgrade.admission import admission_changes

        changes = view.changes_table(admission_changes(snapshot, plans, pods, mode=args.mode), width=width)
    print(
        view.paragraphs(
            view.summary(pods, nodes, width=width),
            view.pod_table(shown_pods, width=width),
            view.node_table(shown_nodes, width=width) if len(shown_nodes) else [],
            changes,
        )
    )
    return nodes, bool(len(pods)) and not pods["admitted"].all()


def target_of(settings: list[str], kubelet_version: str | None) -> dict[str, Any]:
    """The target of ``--set`` and ``--kubelet-version`` (an upgrade is one field more)."""
    if kubelet_version is not None:
        from tmnb.kubelet.profiles import KUBELET_VERSION, parse_minor

        settings = [*settings, f"{KUBELET_VERSION}={parse_minor(kubelet_version, where='--kubelet-version').name}"]
    return parse_settings(settings)


def _refuse_nothing_predicted(nodes: pd.DataFrame) -> None:
    """When no node's pods were predicted though every kubelet starts, the answer is an error (an
    empty answer would read as "nothing to worry about")."""
    rows = nodes[nodes["kubelet starts"] & (nodes["refusal"] != "")] if len(nodes) else nodes
    if len(rows) == len(nodes):
        first = next(rows.itertuples(), None)
        why = str(first.refusal).removeprefix("not predicted: ") if first else "the snapshot has no nodes"
        raise InputError(f"nothing predicted: {why}", source=str(first.node) if first else None)


def parse_settings(items: list[str]) -> dict[str, Any]:
    """``FIELD=VALUE`` pairs; values are YAML. Option-map values become strings, as the kubelet wants."""
    pairs = []
    for item in items:
        field, sep, raw = item.partition("=")
        if not sep or not field.strip():
            raise InputError(f"expected FIELD=VALUE, got {item!r}", where="--set")
        pairs.append((field.strip(), raw))
    check_target_fields(dict(pairs), where="--set", values=False)  # names first: a typo needs no YAML parser
    from tmnb.parse.parameters import load_parameter

    target: dict[str, Any] = {}
    for field, raw in pairs:
        value = load_parameter(raw, where=f"--set {field}") if raw.strip() else ""
        if field.endswith("PolicyOptions"):
            if not isinstance(value, dict):
                raise InputError(f"{field}: expected a map, e.g. '{{name: \"value\"}}'", where="--set")
            value = {str(k): str(v).lower() if isinstance(v, bool) else str(v) for k, v in value.items()}
        target[field] = value
    check_target_fields(target, where="--set")
    return target


def check_inputs(snapshot: str | None, node_root: str | None, pods: str | None, node_name: str | None = None) -> None:
    """What the arguments alone tell: files that are not there, a missing --pods, a --node-name
    that would be ignored (it names the node of --node-root; a snapshot's nodes have their names)."""
    if snapshot:
        if node_name is not None:
            raise InputError(
                "names the node of --node-root; a snapshot's nodes keep their own names (one of them: --node NAME)",
                where="--node-name",
            )
        try:
            check_source(snapshot)
        except InputError as exc:  # check_source says "source": here the argument has its own name
            raise InputError(exc.message, source=exc.source, where="--snapshot") from None
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


def check_selection(args: argparse.Namespace) -> None:
    """What ``add_selection``'s options alone tell: a copied node root is one node already (no
    --node or --selector), the live options go with a live source, a node-files spec and a selector
    must parse."""
    live = {"context": args.context, "kubeconfig": args.kubeconfig, "node_files": args.node_files}
    if args.node_root is not None:
        given = [name for name, value in (("node", args.node), ("selector", args.selector), *live.items()) if value]
        if given:
            raise InputError(
                "--node-root is one node's copied files (named by --node-name); not with a live source's or a "
                "selection's options",
                where=f"--{given[0].replace('_', '-')}",
            )
        return
    check_options(args.snapshot, live, flags=True, source_flag="--snapshot")
    if args.node_files:
        from tmnb.sources.node_files import node_files_kind

        flagged(lambda: node_files_kind(args.node_files))
    if args.selector is not None:
        from tmnb.snapshot.select import parse_selector

        flagged(lambda: parse_selector(args.selector))


#: The parameters a source's errors name, as the command line names them.
FLAGS = {"node": "--node", "node_selector": "--selector", "node_files": "--node-files"}


def flagged(call: Callable[[], T], flags: Mapping[str, str] = FLAGS) -> T:
    """``call()``; its error about a parameter of ``flags`` names the flag instead."""
    try:
        return call()
    except InputError as exc:
        flag = flags.get(exc.where or "")
        if flag is None:
            raise
        raise type(exc)(exc.message, source=exc.source, where=flag, line=exc.line) from None


def load_whatif_input(
    snapshot: str | None,
    node_root: str | None,
    pods: str | None,
    node_name: str | None,
    selection: argparse.Namespace | None = None,
) -> Snapshot:
    """The snapshot a what-if replays: ``--snapshot``'s source narrowed as ``selection`` (the
    ``add_selection`` options) says, or ``--node-root``'s node with ``--pods``."""
    from tmnb.parse.documents import load_json
    from tmnb.sources.kube_objects import pods_from_list
    from tmnb.sources.resolve import node_root_snapshot, open_snapshot

    check_inputs(snapshot, node_root, pods)
    if snapshot:
        if selection is None:
            return open_snapshot(snapshot)
        return flagged(
            lambda: open_snapshot(
                snapshot,
                selection.selector,
                context=selection.context,
                kubeconfig=selection.kubeconfig,
                node_files=selection.node_files or "",
                node=selection.node,
            ),
        )
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


COMMANDS = {"whatif": command}
