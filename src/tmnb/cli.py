"""The ``tmnb`` command. User errors print one line and exit 2; failed runs exit 1;
runs whose report raises an alert (e.g. blockers found) exit 3 so schedulers can page."""

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
    return parser


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
    handler = {"run": _cmd_run, "snapshot": _cmd_snapshot}[args.command]
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
