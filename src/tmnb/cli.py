"""The ``tmnb`` command. User errors print one line and exit 2; failed runs exit 1;
runs whose report raises an alert (blockers found, pods predicted to be rejected, a node rolled
back) exit 3; a rollout that stopped cleanly at an unapproved gate in execute mode exits 5.

Each command checks what its arguments alone can tell (files that are not there, unknown setting
names, values outside a parameter's choices) before it imports pandas, papermill or the kubelet
model, so a typo is answered at once; bench/cli_latency.py measures it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tmnb import __version__, cli_evidence, cli_rollout
from tmnb.cli_types import port, positive_seconds
from tmnb.errors import RunError, TmnbError
from tmnb.sources.resolve import NODE_ROOT, sources_help

if TYPE_CHECKING:
    from tmnb.demo import Demo

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_ALERT, EXIT_PENDING = 0, 1, 2, 3, 5
EXIT_SIGPIPE = 128 + 13  # what a shell reports for a writer killed by SIGPIPE


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
    run.add_argument("--timeout", type=positive_seconds, default=600, help="per-cell timeout in seconds (default 600)")
    run.add_argument("--show-code", action="store_true", help="keep code cells in the HTML report")

    demo = sub.add_parser("demo", help="the read-only pipeline on a sandbox twin of the sample fleet")
    demo.add_argument("--reports-dir", default="reports", help="where the demo folder goes (default: reports)")

    snap = sub.add_parser("snapshot", help="write a snapshot file from a source")
    snap.add_argument("--source", default="sample", help=sources_help("sample"))
    snap.add_argument("--node-name", help=f"node name for --source {NODE_ROOT}DIR (default: the directory name)")
    snap.add_argument("--context", help="kube context for --source live (default: the current context)")
    snap.add_argument("--kubeconfig", help="kubeconfig file for --source live (default: $KUBECONFIG, ~/.kube/config)")
    snap.add_argument("--out", required=True, help="output file (.json or .json.gz)")
    snap.add_argument("--force", action="store_true", help="overwrite --out if it exists")
    what = sub.add_parser("whatif", help="predict which pods each node admits under target kubelet settings")
    src = what.add_mutually_exclusive_group(required=True)
    src.add_argument("--snapshot", help=sources_help())
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
    _sandbox_parser(sub)
    cli_rollout.add_parser(sub)
    cli_evidence.add_parser(sub)
    return parser


def _sandbox_parser(sub: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    box = sub.add_parser("sandbox", help="a simulated cluster on 127.0.0.1 for kubectl and rollout rehearsals")
    verbs = box.add_subparsers(dest="verb", required=True, metavar="VERB")
    up = verbs.add_parser("up", help="start a sandbox built from a snapshot (the sample fleet by default)")
    up.add_argument("--from", dest="source", default="sample", help=sources_help("sample"))
    up.add_argument("--nodes", type=int, help="generate N sample nodes instead of --from")
    up.add_argument("--port", type=port, default=0, help="port on 127.0.0.1 (default: a free one)")
    up.add_argument("--kubeconfig", required=True, help="kubeconfig to write for the sandbox (mode 0600)")
    up.add_argument("--background", action="store_true", help="detach; return once the API answers")
    up.add_argument(
        "--run-dir", help="state, node files and logs (default: $TMNB_SANDBOX_DIR or ~/.cache/tmnb/sandbox)"
    )
    up.add_argument(
        "--no-node-files",
        action="store_true",
        help="keep nodes in memory only (thousands of nodes; no file-level rehearsal)",
    )
    up.add_argument("--latency", type=float, default=0.0, help="seconds added to every API request")
    up.add_argument(
        "--error-rate", action="append", default=[], metavar="PATH=RATE", help="HTTP 500 rate by path prefix"
    )
    up.add_argument("--throttle-rate", type=float, default=0.0, help="rate of HTTP 429 (Retry-After: 1) answers")
    up.add_argument(
        "--never-ready",
        action="append",
        default=[],
        metavar="NODE",
        help="node that never comes back Ready after a restart with a changed kubelet config",
    )
    up.add_argument(
        "--reject-pods", action="append", default=[], metavar="NODE", help="node whose kubelet rejects every new pod"
    )
    down = verbs.add_parser("down", help="stop a background sandbox")
    down.add_argument("--run-dir", help="as given to 'up' (default: $TMNB_SANDBOX_DIR or ~/.cache/tmnb/sandbox)")


def _cmd_sandbox(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tmnb.errors import InputError
    from tmnb.sources.resolve import check_source

    if args.verb == "up" and args.nodes is None:
        check_source(args.source)
    from tmnb.sandbox import Faults, process

    run_dir = Path(args.run_dir) if args.run_dir else process.default_run_dir()
    if args.verb == "down":
        print(f"sandbox stopped (pid {process.stop(run_dir)})")
        return EXIT_OK
    faults = Faults(
        latency=args.latency,
        error_rates=process.parse_rates(args.error_rate),
        throttle_rate=args.throttle_rate,
        never_ready=set(args.never_ready),
        reject_pods=set(args.reject_pods),
    )
    if args.background:
        child = ["sandbox", "up", "--from", args.source, "--port", str(args.port), "--kubeconfig", args.kubeconfig]
        child += ["--run-dir", str(run_dir), "--latency", str(args.latency), "--throttle-rate", str(args.throttle_rate)]
        child += ["--nodes", str(args.nodes)] if args.nodes is not None else []
        child += ["--no-node-files"] if args.no_node_files else []
        child += [a for rate in args.error_rate for a in ("--error-rate", rate)]
        child += [a for node in args.never_ready for a in ("--never-ready", node)]
        child += [a for node in args.reject_pods for a in ("--reject-pods", node)]
        state = process.start_background(child, run_dir)
        print(f"sandbox up at {state['url']} (pid {state['pid']}); kubeconfig {state['kubeconfig']}")
        return EXIT_OK
    snapshot = process.load_snapshot(args.source, args.nodes)
    names = {n.name for n in snapshot.nodes}
    for flag, wanted in (("--never-ready", args.never_ready), ("--reject-pods", args.reject_pods)):
        unknown = sorted(set(wanted) - names)
        if unknown:
            raise InputError(
                f"no node {', '.join(unknown)} in the sandbox's snapshot (it has {', '.join(sorted(names)[:5])}"
                f"{', ...' if len(names) > 5 else ''})",
                where=flag,
            )
    process.serve(snapshot, run_dir, Path(args.kubeconfig), args.port, faults, node_files=not args.no_node_files)
    return EXIT_OK


def _cmd_whatif(args: argparse.Namespace) -> int:
    import json

    from tmnb.cli_whatif import check_inputs, load_whatif_input, parse_settings

    check_inputs(args.snapshot, args.node_root, args.pods)
    target = parse_settings(args.settings)
    from tmnb.analysis.whatif import whatif

    snapshot = load_whatif_input(args.snapshot, args.node_root, args.pods, args.node_name)
    pods, nodes = whatif(snapshot, target, mode=args.mode, with_headroom=args.format == "table", progress=None)
    if args.format == "json":  # JSON Lines: one pod per line, for jq and for streaming readers
        records = pods[["node", "namespace", "pod", "admitted", "reason", "message", "numa", "cpuset"]]
        for record in records.to_dict("records"):
            print(json.dumps(record))
    else:
        from tmnb.tables import humanize  # cells as a person reads them: 0,1 and "shared pool", not reprs

        print(humanize(pods.drop(columns=["uid"])).to_string(index=False) if len(pods) else "(no active pods)")
        print()
        print(humanize(nodes).to_string(index=False))
    refused = nodes[~nodes["kubelet starts"]] if len(nodes) else nodes
    for row in refused.itertuples():
        print(f"tmnb: {row.node}: the kubelet would not start: {row.refusal}", file=sys.stderr)
    return EXIT_ALERT if len(refused) or (len(pods) and not pods["admitted"].all()) else EXIT_OK


def _cmd_run(args: argparse.Namespace) -> int:
    from tmnb.report.runner import run

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
    if result.status == "pending":
        print(f"tmnb: waiting: {result.message}", file=sys.stderr)
        return EXIT_PENDING
    return EXIT_OK


def _cmd_demo(args: argparse.Namespace) -> int:
    from tmnb.demo import run_demo

    return report_demo(run_demo(args.reports_dir))


def report_demo(demo: Demo) -> int:
    """Every folder the demo wrote, its reports, its bundle; exit 3 when a report raised an alert,
    as ``tmnb run`` does for one report."""
    print(f"demo folder: {demo.folder}")
    for folder in demo.written():
        print(f"  {folder}")
    for result in demo.runs:
        print(f"report: {result.html}")
    print(f"evidence: {demo.bundle} (verified)")
    for result in demo.alerts():
        print(f"tmnb: alert: {result.folder.name}: {result.message}", file=sys.stderr)
    return EXIT_ALERT if demo.alerts() else EXIT_OK


def _cmd_snapshot(args: argparse.Namespace) -> int:
    from tmnb.errors import InputError
    from tmnb.sources.resolve import check_options, check_source, open_snapshot

    given = {"context": args.context or None, "kubeconfig": args.kubeconfig or None, "node_name": args.node_name}
    check_options(args.source, given, flags=True)
    if os.path.lexists(args.out) and not args.force:
        raise InputError("exists; pass --force to overwrite it (a snapshot is evidence)", source=args.out)
    check_source(args.source)
    from tmnb.snapshot import save

    snapshot = open_snapshot(args.source, context=args.context, kubeconfig=args.kubeconfig, node_name=args.node_name)
    manifest = save(snapshot, args.out)
    print(f"wrote {args.out}: {manifest['nodes']} nodes, {manifest['pods']} pods, sha256 {manifest['sha256']}")
    if args.source.startswith(NODE_ROOT):  # one node: say at once what could not be used
        for issue in snapshot.nodes[0].issues:
            print(f"tmnb: {issue.severity}: {issue.source}: {issue.message}", file=sys.stderr)
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    handlers = {
        "run": _cmd_run,
        "demo": _cmd_demo,
        "snapshot": _cmd_snapshot,
        "whatif": _cmd_whatif,
        "sandbox": _cmd_sandbox,
        "rollout": cli_rollout.command,
        "evidence": cli_evidence.command,
    }
    handler = handlers[args.command]
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
    except BrokenPipeError:  # the reader went away (`tmnb whatif ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
