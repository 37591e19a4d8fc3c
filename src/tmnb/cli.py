"""The ``tmnb`` command. User errors print one line and exit 2; failed runs exit 1;
runs whose report raises an alert (blockers found, pods predicted to be rejected) exit 3."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from tmnb import __version__
from tmnb.errors import RunError, TmnbError

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ALERT = 0, 1, 2, 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tmnb", description=__doc__)
    parser.add_argument("--version", action="version", version=f"tmnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="execute a notebook into a run folder (ipynb, HTML, manifest)")
    run.add_argument("notebook")
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="typed against the notebook's parameters cell; lists and dicts as YAML",
    )
    run.add_argument("--out", help="run folder (default: reports/<UTC time>-<notebook>)")
    run.add_argument("--reports-dir", default="reports", help="where run folders go (default: reports)")
    run.add_argument("--timeout", type=float, default=600, help="per-cell timeout in seconds (default 600)")
    run.add_argument("--show-code", action="store_true", help="keep code cells in the HTML report")

    snap = sub.add_parser("snapshot", help="write a snapshot file from a source")
    snap.add_argument("--source", default="sample", help="'sample' or a snapshot file")
    snap.add_argument("--out", required=True, help="output file (.json or .json.gz)")
    what = sub.add_parser("whatif", help="predict which pods each node admits under target kubelet settings")
    src = what.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshot", help="snapshot file, or 'sample'")
    src.add_argument("--node-root", help="a copy of one node's files laid out as on the node (needs --pods)")
    what.add_argument("--pods", help="PodList JSON (kubectl get pods -o json) for --node-root")
    what.add_argument("--node-name", help="node name for --node-root (default: the directory name)")
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
        "--mode",
        choices=["drain", "restart"],
        default="drain",
        help="drain: re-admit from empty manager state (default); restart: keep today's allocations",
    )
    what.add_argument("--format", choices=["table", "json"], default="table")
    return parser


def _cmd_whatif(args: argparse.Namespace) -> int:
    import json

    from tmnb.analysis.whatif import whatif
    from tmnb.cli_whatif import load_whatif_input, parse_settings

    target = parse_settings(args.settings)
    snapshot = load_whatif_input(args.snapshot, args.node_root, args.pods, args.node_name)
    pods, nodes = whatif(snapshot, target, mode=args.mode, with_headroom=args.format == "table")
    if args.format == "json":
        records = pods[["node", "namespace", "pod", "admitted", "reason", "message", "numa", "cpuset"]]
        print(json.dumps(records.to_dict("records"), indent=2))
    else:
        print(pods.drop(columns=["uid"]).to_string(index=False) if len(pods) else "(no active pods)")
        print()
        print(nodes.to_string(index=False))
    refused = nodes[~nodes["kubelet starts"]] if len(nodes) else nodes
    for row in refused.itertuples():
        print(f"tmnb: {row.node}: the kubelet would not start: {row.refusal}", file=sys.stderr)
    return EXIT_ALERT if len(refused) or (len(pods) and not pods["admitted"].all()) else EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from tmnb.runner import run

    result = run(
        args.notebook,
        [tuple(p) for p in args.parameter],
        out=args.out,
        reports_dir=args.reports_dir,
        timeout=args.timeout,
        show_code=args.show_code,
    )
    print(f"report: {result.html}")
    print(f"run folder: {result.folder}")
    if result.status == "alert":
        print(f"tmnb: alert: {result.message}", file=sys.stderr)
        return EXIT_ALERT
    return EXIT_OK


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from tmnb.snapshot import save
    from tmnb.sources.resolve import open_snapshot

    manifest = save(open_snapshot(args.source), args.out)
    print(f"wrote {args.out}: {manifest['nodes']} nodes, {manifest['pods']} pods, sha256 {manifest['sha256']}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handler = {"run": _cmd_run, "snapshot": _cmd_snapshot, "whatif": _cmd_whatif}[args.command]
    try:
        return handler(args)
    except RunError as exc:
        print(f"tmnb: run failed: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except TmnbError as exc:
        print(f"tmnb: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tmnb: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
