"""The tmnb command: inventory, occupancy, readiness, rollout, comparison and postmortem reports
of the kubelet Topology Manager, from a live cluster, node files or a saved snapshot.

Every command checks what its arguments alone can tell (missing files, unknown setting names,
values outside a field's or a parameter's allowed set) before it loads the kubelet model or starts
a kernel, so a typo is answered at once.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tmnb import __version__
from tmnb.cli import check, evidence, reports, rollout, sandbox, whatif
from tmnb.cli.exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_SIGPIPE, EXIT_TAMPERED, EXIT_USAGE, MEANINGS
from tmnb.cli.run.warmup import without_iri_grammar
from tmnb.cli.types import Command
from tmnb.errors import RunError, Tampered, TmnbError

#: One module per subcommand family: each adds its parsers and names its handlers.
FAMILIES = (reports, whatif, check, sandbox, rollout, evidence)

#: kubectl runs the ``kubectl-tmnb`` on PATH (the same command, installed under a second name) for
#: ``kubectl tmnb``: usage and help say what the user typed.
PROGS = {"kubectl-tmnb": "kubectl tmnb"}


def _parser() -> argparse.ArgumentParser:
    codes = "\n".join(f"  {code:<5}{meaning}" for code, meaning in MEANINGS.items())
    parser = argparse.ArgumentParser(
        prog=PROGS.get(Path(sys.argv[0]).name, "tmnb"),
        description=__doc__,
        epilog=f"exit codes:\n{codes}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"tmnb {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for family in FAMILIES:
        family.add_parsers(sub)
    return parser


#: An error line stays readable in a terminal and a scheduler's log: a 100,000-character value is cut.
MESSAGE_LIMIT = 1000


def one_line(text: str, limit: int = MESSAGE_LIMIT) -> str:
    """``text`` on one line (line breaks shown as ``⏎``), cut at ``limit`` characters saying how many more."""
    flat = text.replace("\r\n", "\n").replace("\n", " ⏎ ")
    return flat if len(flat) <= limit else f"{flat[:limit]}… ({len(flat) - limit} more characters)"


def main(argv: Sequence[str] | None = None) -> int:
    without_iri_grammar()  # the official client's import would compile it: 0.9 s of every rollout command
    args = _parser().parse_args(argv)
    handlers: dict[str, Command] = {name: h for family in FAMILIES for name, h in family.COMMANDS.items()}
    try:
        return handlers[args.command](args)
    except RunError as exc:
        print(f"tmnb: run failed: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_FAILED
    except Tampered as exc:
        print(f"tmnb: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_TAMPERED
    except TmnbError as exc:
        print(f"tmnb: error: {one_line(str(exc))}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("tmnb: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (`tmnb whatif ... | head`): stop quietly, as cat does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_SIGPIPE
    except OSError as exc:  # a path the system refused (a folder under /proc, a file where a folder goes)
        if exc.filename is None:
            raise
        print(f"tmnb: error: {exc.filename}: {exc.strerror}", file=sys.stderr)
        return EXIT_USAGE
