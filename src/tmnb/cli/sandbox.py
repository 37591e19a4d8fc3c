"""``tmnb sandbox up|down``: the rehearsal twin's simulated cluster on 127.0.0.1."""

from __future__ import annotations

import argparse
import os

from tmnb.cli.exits import EXIT_OK
from tmnb.cli.types import Subcommands, port
from tmnb.sources.resolve import sources_help


def add_parsers(sub: Subcommands) -> None:
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
    up.add_argument(
        "--deviate",
        action="append",
        default=[],
        metavar="NODE=KIND",
        help="node whose kubelet, restarted with a changed configuration, departs from the model: "
        "cpuset (pins a new pod on other CPUs), reject (rejects a new pod the model admits) or repin "
        "(re-pins a running pod at the restart)",
    )
    down = verbs.add_parser("down", help="stop a background sandbox")
    down.add_argument("--run-dir", help="as given to 'up' (default: $TMNB_SANDBOX_DIR or ~/.cache/tmnb/sandbox)")


def command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from tmnb.errors import InputError
    from tmnb.sources.resolve import check_source

    if args.verb == "up" and args.nodes is None:
        check_source(args.source)
    from tmnb.twin.sandbox import Faults, process

    run_dir = Path(args.run_dir) if args.run_dir else process.default_run_dir()
    if os.path.lexists(run_dir) and not run_dir.is_dir():
        raise InputError("not a folder: the sandbox keeps its state, node files and logs there", source=str(run_dir))
    if args.verb == "down":
        print(f"sandbox stopped (pid {process.stop(run_dir)})")
        return EXIT_OK
    _check_writable(args.kubeconfig)
    faults = Faults(
        latency=args.latency,
        error_rates=process.parse_rates(args.error_rate),
        throttle_rate=args.throttle_rate,
        never_ready=set(args.never_ready),
        reject_pods=set(args.reject_pods),
        deviate=dict(_deviation(text) for text in args.deviate),
    )
    if args.background:
        child = ["sandbox", "up", "--from", args.source, "--port", str(args.port), "--kubeconfig", args.kubeconfig]
        child += ["--run-dir", str(run_dir), "--latency", str(args.latency), "--throttle-rate", str(args.throttle_rate)]
        child += ["--nodes", str(args.nodes)] if args.nodes is not None else []
        child += ["--no-node-files"] if args.no_node_files else []
        child += [a for rate in args.error_rate for a in ("--error-rate", rate)]
        child += [a for node in args.never_ready for a in ("--never-ready", node)]
        child += [a for node in args.reject_pods for a in ("--reject-pods", node)]
        child += [a for text in args.deviate for a in ("--deviate", text)]
        state = process.start_background(child, run_dir)
        print(f"sandbox up at {state['url']} (pid {state['pid']}); kubeconfig {state['kubeconfig']}")
        return EXIT_OK
    snapshot = process.load_snapshot(args.source, args.nodes)
    names = {n.name for n in snapshot.nodes}
    for flag, wanted in (
        ("--never-ready", args.never_ready),
        ("--reject-pods", args.reject_pods),
        ("--deviate", list(faults.deviate)),
    ):
        unknown = sorted(set(wanted) - names)
        if unknown:
            raise InputError(
                f"no node {', '.join(unknown)} in the sandbox's snapshot (it has {', '.join(sorted(names)[:5])}"
                f"{', ...' if len(names) > 5 else ''})",
                where=flag,
            )
    process.serve(snapshot, run_dir, Path(args.kubeconfig), args.port, faults, node_files=not args.no_node_files)
    return EXIT_OK


def _deviation(text: str) -> tuple[str, str]:
    """``NODE=KIND`` of ``--deviate`` (the kind is checked with the other faults)."""
    from tmnb.errors import InputError

    node, sep, kind = text.partition("=")
    if not sep or not node or not kind:
        raise InputError(f"expected NODE=KIND, got {text!r}", where="--deviate")
    return node, kind


def _check_writable(path: str) -> None:
    """The kubeconfig must be writable before the sandbox starts (a background child would only
    report it in its log): a file is made there and removed again if it was not there before."""
    from tmnb.errors import InputError

    existed = os.path.lexists(path)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))
    except OSError as exc:
        raise InputError(f"cannot write the sandbox's kubeconfig here: {exc.strerror}", source=path) from None
    if not existed:
        os.unlink(path)


COMMANDS = {"sandbox": command}
