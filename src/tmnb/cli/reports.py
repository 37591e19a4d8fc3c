"""``tmnb run``, ``tmnb snapshot`` and ``tmnb demo``: reports into run folders, snapshots into files;
``tmnb params`` and ``tmnb notebooks``: the notebooks those runs execute, described and copied."""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.cli.exits import EXIT_ALERT, EXIT_OK, EXIT_PENDING
from tmnb.cli.types import Subcommands, positive_seconds
from tmnb.report.places import notebooks_dir
from tmnb.sources.resolve import NODE_ROOT, sources_help

if TYPE_CHECKING:
    from tmnb.cli.demo import Demo


NOTEBOOK_HELP = "a notebook's name (01-inventory ... 06-postmortem) or the path of a .ipynb file"


def add_parsers(sub: Subcommands) -> None:
    run = sub.add_parser(
        "run",
        help="execute a notebook into a run folder (ipynb, HTML, manifest)",
        epilog="tmnb params NOTEBOOK lists a notebook's parameters: types, defaults, allowed values",
    )
    run.add_argument("notebook", help=NOTEBOOK_HELP)
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
    run.add_argument(
        "--reports-dir",
        default="",
        help="where run folders go (default: $TMNB_REPORTS, else reports/ at the repository root or here)",
    )
    run.add_argument("--timeout", type=positive_seconds, default=600, help="per-cell timeout in seconds (default 600)")
    run.add_argument("--show-code", action="store_true", help="keep code cells in the HTML report")

    demo = sub.add_parser(
        "demo",
        help="every report on a sandbox twin of the sample fleet, a canary rollout executed on the twin included",
    )
    demo.add_argument(
        "--reports-dir",
        default="",
        help="where the demo folder goes (default: $TMNB_REPORTS, else reports/ at the repository root or here)",
    )

    params = sub.add_parser("params", help="a notebook's parameters: types, defaults, allowed values, help")
    params.add_argument("notebook", help=NOTEBOOK_HELP)

    copies = sub.add_parser("notebooks", help="copy the notebooks into a folder, to open and edit in JupyterLab")
    copies.add_argument("folder", help="where the copies go (made if missing)")
    copies.add_argument("--force", action="store_true", help="replace copies already there (edits to them are lost)")
    copies.add_argument("--lab", action="store_true", help="then open JupyterLab on it, from tmnb's environment")

    snap = sub.add_parser("snapshot", help="write a snapshot file from a source")
    snap.add_argument("--source", default="sample", help=sources_help("sample"))
    snap.add_argument(
        "--node-name",
        help=f"node name for --source {NODE_ROOT}DIR (default: the directory name; for {NODE_ROOT}/ "
        "the name this host's kubelet registers)",
    )
    snap.add_argument("--context", help="kube context for --source live (default: the current context)")
    snap.add_argument("--kubeconfig", help="kubeconfig file for --source live (default: $KUBECONFIG, ~/.kube/config)")
    snap.add_argument("--out", required=True, help="output file (.json or .json.gz)")
    snap.add_argument("--force", action="store_true", help="overwrite --out if it exists")


def _run(args: argparse.Namespace) -> int:
    from tmnb.cli.run.runner import run

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


def _demo(args: argparse.Namespace) -> int:
    from tmnb.cli.demo import run_demo

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


def _params(args: argparse.Namespace) -> int:
    from tmnb.cli.run.params import describe_parameters
    from tmnb.cli.run.runner import find_notebook

    notebook = find_notebook(args.notebook)
    print(f"{notebook.stem}: tmnb run {args.notebook} -p NAME VALUE (lists and dicts as YAML)")
    print("\n".join(describe_parameters(notebook)))
    return EXIT_OK


def _notebooks(args: argparse.Namespace) -> int:
    """Copies a user can edit and run in JupyterLab (the installed ones are the package's own); a copy
    already there is kept, so a second call, or ``--lab`` again, loses no edit."""
    folder = Path(args.folder)
    folder.mkdir(parents=True, exist_ok=True)
    for notebook in sorted(notebooks_dir().glob("*.ipynb")):
        copy = folder / notebook.name
        kept = copy.exists() and not args.force
        if not kept:
            shutil.copyfile(notebook, copy)  # not copy2: an installation's read-only mode stays behind
        print(f"{'kept' if kept else 'wrote'} {copy}")
    if args.lab:
        sys.stdout.flush()
        lab = [sys.executable, "-m", "jupyterlab", f"--ServerApp.root_dir={folder.resolve()}"]
        os.execv(sys.executable, lab)  # pipx exposes tmnb only: JupyterLab comes from tmnb's environment
    print(f"open them in JupyterLab: tmnb notebooks {args.folder} --lab (their reports go to reports/ beside them)")
    return EXIT_OK


def _snapshot(args: argparse.Namespace) -> int:
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


COMMANDS = {"run": _run, "demo": _demo, "params": _params, "notebooks": _notebooks, "snapshot": _snapshot}
