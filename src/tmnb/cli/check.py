"""``tmnb check NODE``: the question SREs ask first, "what about this one node?", in one screen.

The node today (from a live cluster by default, a snapshot, or its own files with ``node-root:/`` on
the node) and the verdict under a target, each rejection explained. A live source reads that node
alone, its files through the chosen transport only. Arguments are checked before the snapshot
machinery loads, as ``tmnb whatif``'s are.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from tmnb.cli.exits import EXIT_ALERT, EXIT_OK
from tmnb.cli.terminal import WIDTH, wrap
from tmnb.cli.types import Subcommands
from tmnb.cli.whatif import add_target, flagged, load_whatif_input, target_of
from tmnb.errors import InputError
from tmnb.sources.node_files import NODE_FILES_HELP
from tmnb.sources.resolve import LIVE, NODE_ROOT, check_options, check_source, open_snapshot, sources_help

if TYPE_CHECKING:
    from tmnb.snapshot import Snapshot

#: The parameters a source's errors name, as this command's line names them.
FLAGS = {"node": "NODE", "node_files": "--node-files"}


def add_parsers(sub: Subcommands) -> None:
    check = sub.add_parser("check", help="one node today and under a target kubelet setting, in one screen")
    check.add_argument(
        "node",
        nargs="?",
        metavar="NODE",
        help=f"the node's name; with --source {NODE_ROOT}DIR its name (default: the directory's, or for "
        f"{NODE_ROOT}/ the name this host's kubelet registers)",
    )
    check.add_argument("--source", default=LIVE, help=sources_help(LIVE))
    check.add_argument("--context", help="kube context for --source live (default: the current context)")
    check.add_argument("--kubeconfig", help="kubeconfig for --source live (default: $KUBECONFIG, ~/.kube/config)")
    check.add_argument(
        "--node-files",
        help=f"how --source live reads the node's files (without them nothing is predicted): {NODE_FILES_HELP}",
    )
    check.add_argument(
        "--pods",
        help=f"the node's pods for --source {NODE_ROOT}DIR, as a PodList JSON "
        "(kubectl get pods -A --field-selector spec.nodeName=NODE -o json)",
    )
    add_target(check)
    check.add_argument(
        "--mode",
        choices=["drain", "restart"],
        default="drain",
        help="drain: every pod re-admitted after a drain (default); restart: the running pods re-admitted "
        "over today's state files",
    )
    check.add_argument(
        "-o",
        "--output",
        choices=("table", "wide"),
        default="table",
        help=f"table: within {WIDTH} columns (default); wide: every row and cell whole",
    )


def command(args: argparse.Namespace) -> int:
    check_arguments(args)
    target = target_of(args.settings, args.kubelet_version)
    from tmnb.analysis.diagnose import diagnose_whatif
    from tmnb.analysis.whatif import whatif
    from tmnb.cli import check_view as view
    from tmnb.cli.whatif_view import paragraphs

    snapshot = _snapshot(args)
    name = snapshot.nodes[0].name
    pods, nodes = whatif(snapshot, target, mode=args.mode, progress=None, workers=1)
    row = nodes.to_dict("records")[0]
    rejected = bool(len(pods)) and not pods["admitted"].all()
    diagnoses = diagnose_whatif(snapshot, name, target, mode=args.mode) if rejected else []
    width = WIDTH if args.output == "table" else None
    print(
        paragraphs(
            wrap(view.headline(name, target, pods, row), width),
            view.today(snapshot, name, width=width),
            view.verdict(target, args.mode, pods, row, diagnoses, width=width),
        )
    )
    if row["kubelet starts"] and row["refusal"]:  # no answer per pod: not a clean bill of health
        raise InputError(f"nothing predicted: {str(row['refusal']).removeprefix('not predicted: ')}", source=name)
    return EXIT_ALERT if rejected or not row["kubelet starts"] else EXIT_OK


def check_arguments(args: argparse.Namespace) -> None:
    """What the arguments alone tell: options of another source, a missing node name or PodList."""
    root = args.source.startswith(NODE_ROOT)
    live = {"context": args.context, "kubeconfig": args.kubeconfig, "node_files": args.node_files}
    check_options(args.source, live, flags=True)
    check_source(args.source)
    if not root and not args.node:
        raise InputError(f"expected the node's name (only --source {NODE_ROOT}DIR names its own)", where="NODE")
    if root and not args.pods:
        raise InputError(
            f"--source {NODE_ROOT}DIR needs the node's pods: kubectl get pods -A --field-selector "
            "spec.nodeName=NODE -o json > pods.json",
            where="--pods",
        )
    if args.pods and not root:
        raise InputError(f"the pods of a copied node root: with --source {NODE_ROOT}DIR only", where="--pods")
    if args.node_files:
        from tmnb.sources.node_files import node_files_kind

        flagged(lambda: node_files_kind(args.node_files), FLAGS)


def _snapshot(args: argparse.Namespace) -> Snapshot:
    """The one node: its copied files with its pods, or the source narrowed to it (on live, the only
    node read)."""
    if args.source.startswith(NODE_ROOT):
        return load_whatif_input(None, args.source.removeprefix(NODE_ROOT), args.pods, args.node)
    options = {"context": args.context, "kubeconfig": args.kubeconfig, "node_files": args.node_files or ""}
    return flagged(lambda: open_snapshot(args.source, node=args.node, **options), FLAGS)


COMMANDS = {"check": command}
