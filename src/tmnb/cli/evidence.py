"""``tmnb evidence pack|verify|open``: run folders as one checksummed bundle for a postmortem."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tmnb.cli.exits import EXIT_TAMPERED
from tmnb.cli.types import Subcommands

if TYPE_CHECKING:
    from tmnb.evidence import Verification
    from tmnb.parse.jsonable import JsonDict


def add_parsers(sub: Subcommands) -> None:
    ev = sub.add_parser("evidence", help="pack run folders into a checksummed bundle, verify it, open it")
    verbs = ev.add_subparsers(dest="verb", required=True, metavar="VERB")
    pack = verbs.add_parser("pack", help="RUN_DIR... into one .tar.gz with a sha256 manifest")
    pack.add_argument(
        "run_dirs", nargs="+", metavar="RUN_DIR", help="run folders (each with a manifest.json or journal.jsonl)"
    )
    pack.add_argument("--out", required=True, help="the bundle to write (.tar.gz)")
    pack.add_argument("--force", action="store_true", help="overwrite an existing bundle")
    pack.add_argument(
        "--with-node-secrets",
        action="store_true",
        help="also pack the rollouts' backups (node files byte for byte, credentials included); the manifest "
        "then says node_secrets: true",
    )
    check = verbs.add_parser("verify", help="exit 0 when intact, 4 with the missing, extra and modified files")
    check.add_argument("bundle", help="the bundle (.tar.gz) to check against its MANIFEST.json")
    opened = verbs.add_parser(
        "open", help="unpack read-only (refusing unsafe members), list the reports, run 06-postmortem on it"
    )
    opened.add_argument("bundle", help="the bundle (.tar.gz) to open")
    opened.add_argument("--to", required=True, help="a new directory to unpack into")


def command(args: argparse.Namespace) -> int:
    from tmnb import evidence

    if args.verb == "pack":
        manifest = evidence.pack(args.run_dirs, args.out, force=args.force, node_secrets=args.with_node_secrets)
        left = f"; {len(manifest['left_out'])} backup file(s) left out" if manifest["left_out"] else ""
        secrets = "; HOLDS NODE SECRETS (backups packed)" if manifest["node_secrets"] else ""
        counts = f"{len(manifest['runs'])} run folder(s), {len(manifest['files'])} file(s)"
        print(f"wrote {args.out}: {counts}{left}{secrets}")
        return 0
    if args.verb == "verify":
        manifest, result = evidence.verify(args.bundle)
        return _report(args.bundle, manifest, result)
    target, manifest, result = evidence.unpack(args.bundle, args.to)
    code = _report(args.bundle, manifest, result)
    if code:
        return code
    for report in sorted(target.glob("runs/*/*.html")):
        print(f"report: {report}")
    from tmnb.cli.run.runner import run
    from tmnb.report.places import notebooks_dir

    notebook = notebooks_dir() / "06-postmortem.ipynb"  # tmnb's own, whatever the working directory holds
    postmortem = run(notebook, params={"evidence": str(target)}, out=target / "postmortem")
    print(f"postmortem: {postmortem.html}")
    return 0


def _report(bundle: str, manifest: JsonDict, result: Verification) -> int:
    lines = result.lines()
    if not lines:
        held = "; holds node secrets (rollout backups)" if manifest.get("node_secrets") is True else ""
        print(f"{bundle}: intact: {len(manifest['files'])} file(s), packed {manifest.get('created')} by "
              f"{manifest.get('created_by')}{held}")  # fmt: skip
        return 0
    for line in lines:
        print(f"{bundle}: {line}", file=sys.stderr)
    return EXIT_TAMPERED


COMMANDS = {"evidence": command}
