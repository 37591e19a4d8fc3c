"""``tmnb whatif``: its arguments, its inputs (``--set`` values and the two ways to describe the
nodes) and the prediction as a table or JSON Lines.

``check_inputs`` needs no snapshot machinery, so a wrong argument is reported before pandas loads.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.cli.exits import EXIT_ALERT, EXIT_OK
from tmnb.cli.types import Subcommands, workers
from tmnb.errors import InputError
from tmnb.parse.files import MIB, read_capped
from tmnb.settings.target import check_target_fields
from tmnb.sources.resolve import check_source, sources_help

if TYPE_CHECKING:
    import pandas as pd

    from tmnb.snapshot import Snapshot

#: A PodList of every pod of a large cluster is some tens of MiB.
PODLIST_LIMIT = 512 * MIB
#: A pod's fields in ``--format json``.
JSON_FIELDS = ("node", "namespace", "pod", "admitted", "reason", "message", "numa", "cpuset")


def add_parsers(sub: Subcommands) -> None:
    what = sub.add_parser("whatif", help="predict which pods each node admits under target kubelet settings")
    src = what.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshot", help=sources_help())
    src.add_argument("--node-root", help="a copy of one node's files laid out as on the node (needs --pods)")
    what.add_argument("--pods", help="PodList JSON (kubectl get pods -o json) for --node-root")
    what.add_argument(
        "--node-name",
        help="the name of the node copied under --node-root (default: the directory name); not with --snapshot",
    )
    what.add_argument(
        "--set",
        dest="settings",
        action="append",
        default=[],
        metavar="FIELD=VALUE",
        required=True,
        help="KubeletConfiguration field to set (repeatable); maps as YAML, e.g. "
        "topologyManagerPolicyOptions='{prefer-closest-numa-nodes: \"true\"}'",
    )
    what.add_argument(
        "--kubelet-version",
        metavar="MINOR",
        help="predict after an upgrade to this kubelet minor (1.33 to 1.37), as --set kubeletVersion=MINOR does",
    )
    what.add_argument(
        "--mode",
        choices=["drain", "restart"],
        default="drain",
        help="drain: every pod re-admitted after a drain, with the state files the change spoils moved aside "
        "(one the kubelet cannot restore stays; default); restart: the running pods re-admitted over "
        "today's state files",
    )
    what.add_argument(
        "--format",
        choices=["table", "json"],
        default="table",
        help="table: pods and nodes for a person (default); json: one pod per line (JSON Lines)",
    )
    what.add_argument(
        "--workers",
        type=workers,
        default=os.cpu_count() or 1,
        metavar="N",
        help="processes replaying the nodes (default: this machine's cores); the output is the same",
    )


def command(args: argparse.Namespace) -> int:
    import json

    check_inputs(args.snapshot, args.node_root, args.pods, args.node_name)
    settings = list(args.settings)
    if args.kubelet_version is not None:
        from tmnb.kubelet.profiles import KUBELET_VERSION, parse_minor

        settings.append(f"{KUBELET_VERSION}={parse_minor(args.kubelet_version, where='--kubelet-version').name}")
    target = parse_settings(settings)
    from tmnb.analysis.whatif import whatif, whatif_rows
    from tmnb.replay import plans_for

    snapshot = load_whatif_input(args.snapshot, args.node_root, args.pods, args.node_name)
    plans = plans_for(snapshot.nodes, target)
    if args.format == "json":  # JSON Lines: one pod per line as its node comes back, for jq and streaming readers
        import pandas as pd

        node_rows, all_admitted = [], True
        for rows, node_row in whatif_rows(snapshot, target, mode=args.mode, plans=plans, workers=args.workers):
            for row in rows:
                print(json.dumps({k: row[k] for k in JSON_FIELDS}))
                all_admitted = all_admitted and row["admitted"]
            node_rows.append(node_row)
        nodes = pd.DataFrame(node_rows)
        pods_rejected = not all_admitted
        unpredicted = _refuse_nothing_predicted(nodes)  # a node not predicted printed no pod above
    else:
        pods, nodes = whatif(snapshot, target, mode=args.mode, plans=plans, progress=None, workers=args.workers)
        unpredicted = _refuse_nothing_predicted(nodes)
        pods_rejected = bool(len(pods)) and not pods["admitted"].all()
        from tmnb.report.tables import humanize  # cells as a person reads them: 0,1 and "shared pool", not reprs

        print(humanize(pods.drop(columns=["uid"])).to_string(index=False) if len(pods) else "(no active pods)")
        print()
        print(humanize(nodes).to_string(index=False))
        if any(p.upgrades for p in plans.values()):
            from tmnb.analysis.upgrade.admission import admission_changes

            changes = admission_changes(snapshot, plans, pods, mode=args.mode)
            print()
            print("Pods admitted or pinned differently than as today's kubelet minor:")
            print(humanize(changes).to_string(index=False) if len(changes) else "(none)")
    for node, why in unpredicted.items():  # in every format: the pods of this node are missing above
        print(f"tmnb: {node}: nothing predicted: {why}", file=sys.stderr)
    for node, note in zip(nodes.get("node", []), nodes.get("kubelet note", []), strict=True):
        if note:  # never silent: the prediction is not the node's own kubelet minor
            print(f"tmnb: {node}: {note}", file=sys.stderr)
    refused = nodes[~nodes["kubelet starts"]] if len(nodes) else nodes
    for row in refused.itertuples():
        print(f"tmnb: {row.node}: the kubelet would not start: {row.refusal}", file=sys.stderr)
    return EXIT_ALERT if len(refused) or pods_rejected else EXIT_OK


def _refuse_nothing_predicted(nodes: pd.DataFrame) -> dict[str, str]:
    """Nodes whose kubelet starts but whose pods were not predicted, and why; when that is every
    node, the answer is an error (an empty answer would read as "nothing to worry about")."""
    rows = nodes[nodes["kubelet starts"] & (nodes["refusal"] != "")] if len(nodes) else nodes
    unpredicted = {row.node: str(row.refusal).removeprefix("not predicted: ") for row in rows.itertuples()}
    if len(unpredicted) == len(nodes):
        first = next(iter(unpredicted.items()), ("", "the snapshot has no nodes"))
        raise InputError(f"nothing predicted: {first[1]}", source=first[0] or None)
    return unpredicted


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
                "names the node of --node-root; a snapshot's nodes keep their own names (the table lists every "
                "node: filter it, e.g. with --format json and jq)",
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


COMMANDS = {"whatif": command}
