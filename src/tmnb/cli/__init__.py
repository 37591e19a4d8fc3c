"""The ``tmnb`` command line: ``main`` (the parser and the exit codes) and one module per
subcommand family (``reports``: run, snapshot, demo; ``whatif``; ``sandbox``; ``rollout``;
``evidence``)."""

from tmnb.cli.main import main

__all__ = ["main"]
