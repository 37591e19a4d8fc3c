"""``tmnb rollout plan|execute|status|list|rollback``: the guided rollout from the shell (same code as
04-rollout)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.cli.types import Subcommands, non_negative_seconds, positive_seconds
from tmnb.rollout.apply import APPLY_CHOICES
from tmnb.rollout.executors import EXECUTORS, executors_help
from tmnb.sources.node_files import NODE_FILES_HELP
from tmnb.sources.resolve import sources_help

if TYPE_CHECKING:
    from tmnb.parse.jsonable import JsonDict
    from tmnb.rollout.request import RolloutRequest
    from tmnb.rollout.session import Session


def add_parsers(sub: Subcommands) -> None:
    roll = sub.add_parser("rollout", help="plan, execute or inspect a guided kubelet change (canary, waves, rollback)")
    verbs = roll.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, text in (
        ("plan", "print the ordered plan (table or JSON); writes nothing"),
        ("execute", "carry out the approved gates; nothing is written for a gate not named in --approve"),
        ("status", "where a change stands, in one line, and the one next command"),
        ("list", "every change found, with its nodes done and where it stands"),
        ("rollback", "put back what was there on --node (needs --approve rollback)"),
    ):
        p = verbs.add_parser(verb, help=text)
        if verb == "list":
            p.add_argument(
                "folders",
                nargs="*",
                metavar="FOLDER",
                help=f"{_FOLDERS}, besides the default state folder (default: the whole reports folder)",
            )
            continue
        p.add_argument(
            "--change-id",
            required=verb != "status",
            help="DNS-1123 name of the change; re-use it to resume"
            if verb != "status"
            else "the change to look at (default: every change found)",
        )
        p.add_argument(
            "--state-dir",
            default="",
            help="plan, journal, backups (default: reports/rollouts/<change id> at the repository root)",
        )
        if verb == "status":
            p.add_argument(
                "folders", nargs="*", metavar="FOLDER", help=f"{_FOLDERS} (default: the whole reports folder)"
            )
            p.add_argument("-v", "--verbose", action="store_true", help="each node's account and the journal too")
            continue
        p.add_argument(
            "--set",
            dest="settings",
            action="append",
            default=[],
            metavar="FIELD=VALUE",
            help="KubeletConfiguration field to set (repeatable), as for whatif; a change id that has run "
            "before takes its own",
        )
        p.add_argument("--source", default="live", help=sources_help("live"))
        p.add_argument("--context", default="", help="kube context (default: the current one)")
        p.add_argument("--kubeconfig", default="", help="kubeconfig (default: $KUBECONFIG, ~/.kube/config)")
        p.add_argument("--node", dest="nodes", action="append", default=[], help="node to change (repeatable)")
        p.add_argument("--node-selector", default="", help="label selector of the nodes to change")
        p.add_argument("--canary", default="recommended", help="the first node, or 'recommended'")
        p.add_argument("--wave-size", type=int, default=5, help="nodes per wave after the canary (default 5)")
        p.add_argument(
            "--override",
            action="append",
            default=[],
            metavar="NODE",
            help="change this node although the what-if rejects pods there",
        )
        p.add_argument(
            "--executor",
            choices=list(EXECUTORS),
            default="dry-run" if verb == "plan" else "sandbox",
            help=executors_help(),
        )
        p.add_argument(
            "--node-files",
            default="",
            help=f"how to re-read node files (default: as the executor reads them): {NODE_FILES_HELP}",
        )
        p.add_argument(
            "--apply",
            choices=APPLY_CHOICES,
            default="auto",
            help="how the change is written: a drop-in file in the kubelet's --config-dir, an edit of its "
            "config file, or auto (a drop-in where the kubelet reads one, else the edit; default)",
        )
        p.add_argument(
            "--drain",
            choices=("auto", "always", "never"),
            default="auto",
            help="auto (default): drain a node only when its running pods cannot stay through the restart; "
            "always: drain every node; never: refuse a node that would need a drain",
        )
        p.add_argument(
            "--format", choices=("table", "json"), default="table", help="table for a person (default) or JSON"
        )
        if verb in ("execute", "rollback"):
            p.add_argument("--approve", action="append", default=[], metavar="GATE", help="canary, wave-1, ...")
            p.add_argument("--pause", type=non_negative_seconds, default=0.0, help="seconds between waves")
            p.add_argument(
                "--drain-timeout",
                type=positive_seconds,
                default=300.0,
                help="seconds to wait for a node's pods to leave before the drain fails (default 300)",
            )
            p.add_argument(
                "--ready-timeout",
                type=positive_seconds,
                default=180.0,
                help="seconds to wait for the node to report Ready after the restart (default 180)",
            )
            p.add_argument(
                "--evict-retry", type=positive_seconds, default=5.0, help="seconds between eviction retries (429)"
            )
            p.add_argument("--allow-emptydir", action="store_true", help="evict pods with emptyDir volumes")
            p.add_argument("--no-auto-rollback", action="store_true", help="leave a failed node as it is")
            p.add_argument(
                "--test-namespace", default="default", help="namespace of the verification test pod (default: default)"
            )
            p.add_argument("--test-image", default="busybox:1.37", help="image of the verification test pod")
            p.add_argument(
                "--soak",
                default="",
                metavar="YAML",
                help="after the canary: {minutes: 10, prometheus_url: URL | metrics_file: F, threshold_pct: 5, ...}",
            )


_FOLDERS = "a change's state folder, or a folder holding run or state folders (the demo's reports/<time>-demo)"


def command(args: argparse.Namespace) -> int:
    if args.verb == "status":
        return _status(args)
    if args.verb == "list":
        return _list(args)
    from tmnb.sources.resolve import check_source

    check_source(args.source)  # what the arguments alone tell, before the rollout machinery loads
    from tmnb.rollout.session import prepare

    request = _request(args)
    session = prepare(request)
    if args.verb == "plan":
        _print_plan(session, args.format)
        return 0
    if args.verb == "rollback":
        node = args.nodes[0]
        outcome = session.rollout.rollback_node(node)
        print(f"{node}: {outcome.nodes.get(node)}")
        return 3
    outcome = session.rollout.run()
    if args.format == "json":
        print(json.dumps(outcome.to_json()))
    else:
        for node, state in outcome.nodes.items():
            print(f"{node}: {state}")
        print(f"{outcome.status}: {outcome.message}")
    if outcome.exit_code:
        print(f"tmnb: rollout {outcome.status}: {outcome.message}", file=sys.stderr)
    return outcome.exit_code


def _request(args: argparse.Namespace) -> RolloutRequest:
    """The request the flags make. A rollback names the node to put back with --node; the change is
    the stored one. A run without --set resumes the stored change."""
    from tmnb.cli.whatif import parse_settings
    from tmnb.errors import InputError
    from tmnb.rollout.request import RolloutRequest
    from tmnb.rollout.steps import Options

    steps = Options()
    if args.verb in ("execute", "rollback"):
        steps = Options(
            drain_timeout=args.drain_timeout,
            ready_timeout=args.ready_timeout,
            evict_retry=args.evict_retry,
            allow_emptydir=args.allow_emptydir,
            auto_rollback=not args.no_auto_rollback,
            test_pod_namespace=args.test_namespace,
            test_pod_image=args.test_image,
        )
    if args.verb == "rollback" and len(args.nodes) != 1:
        raise InputError("rollback takes exactly one --node", where="--node")
    request = RolloutRequest(
        change_id=args.change_id,
        target=parse_settings(args.settings) if args.settings else {},
        source=args.source,
        context=args.context,
        kubeconfig=args.kubeconfig,
        nodes=tuple(args.nodes),
        node_selector=args.node_selector,
        canary=args.canary,
        waves=args.wave_size,
        override=tuple(args.override),
        mode="plan" if args.verb == "plan" else "execute",
        approve=tuple(getattr(args, "approve", [])),
        executor=args.executor,
        node_files=args.node_files,
        state_dir=args.state_dir,
        apply=args.apply,
        drain=args.drain,
        pause=getattr(args, "pause", 0.0),
        steps=steps,
        soak=_mapping(getattr(args, "soak", ""), "--soak"),
    )
    if args.verb == "rollback" or not args.settings:
        request = request.resumed(_stored(args))
    return request


def _print_plan(session: Session, fmt: str) -> None:
    if fmt == "json":
        print(json.dumps(session.plan.to_json(), indent=2, default=str))
        return
    print(session.plan_table().to_string(index=False))
    diffs = session.diffs()
    if diffs:
        print()
        print(diffs)


def _roots(folders: list[str], *, state_root: bool) -> list[Path]:
    """Where changes are looked for: the folders given (after the default state folder when
    ``state_root``), or the whole reports folder, which holds the state folder and the demo's."""
    from tmnb.report.places import reports_root
    from tmnb.report.places import state_root as default

    given = [Path(f).resolve() for f in folders]
    return ([default()] if state_root else []) + given if given else [reports_root()]


def _list(args: argparse.Namespace) -> int:
    from tmnb.cli.rollout_view import list_lines
    from tmnb.rollout.standing import find_changes, standing

    roots = _roots(args.folders, state_root=True)
    changes = [standing(folder) for folder in find_changes(roots)]
    if not changes:
        print(f"no change found in {', '.join(str(r) for r in roots)}")
        return 0
    print("\n".join(list_lines(changes, Path.cwd())))
    return 0


def _status(args: argparse.Namespace) -> int:
    """Where each change asked for stands: ``--state-dir``'s, ``--change-id``'s (its default folder
    unless folders are given, else wherever it is found), or every change found."""
    from tmnb.cli.rollout_view import status_lines
    from tmnb.errors import InputError
    from tmnb.report.places import change_folder
    from tmnb.rollout.standing import JOURNAL, find_changes, standing

    roots = _roots(args.folders, state_root=False)
    default = args.change_id and not args.folders and (change_folder(args.change_id) / JOURNAL).is_file()
    if args.state_dir or default:
        folders = [change_folder(args.change_id or "", args.state_dir)]
    else:
        folders = find_changes(roots)
    changes = [standing(folder) for folder in folders]
    if args.change_id:
        changes = [c for c in changes if c.change_id == args.change_id]
    if not changes:
        asked = f"change {args.change_id}" if args.change_id else "change"
        where = args.state_dir or ", ".join(str(r) for r in roots)
        raise InputError(f"no {asked} found in {where}: tmnb rollout list FOLDER lists the changes a folder holds")
    print("\n\n".join("\n".join(status_lines(c, args.verbose)) for c in changes))
    return 0


def _stored(args: argparse.Namespace) -> JsonDict:
    """What a change id was first run with: a resume or a rollback need not restate it."""
    from tmnb.errors import InputError
    from tmnb.report.places import change_folder
    from tmnb.rollout.request import REQUEST, stored_request

    folder = change_folder(args.change_id, args.state_dir)
    request = stored_request(folder)
    if request is None:
        raise InputError(
            f"change {args.change_id} has not run before (no {folder / REQUEST}): "
            + ("give the change with --set" if args.verb != "rollback" else "there is nothing to roll back"),
            where="--change-id",
        )
    return request


def _mapping(text: str, where: str) -> JsonDict:
    from tmnb.errors import InputError
    from tmnb.parse.parameters import load_parameter

    if not text:
        return {}
    value = load_parameter(text, where=where)
    if not isinstance(value, dict):
        raise InputError(f"expected a YAML mapping, got {text!r}", where=where)
    return value


COMMANDS = {"rollout": command}
