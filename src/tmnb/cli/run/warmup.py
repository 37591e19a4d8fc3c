"""An IPython extension the runner's kernels load at start (``--IPKernelApp.extensions``): it imports
the modules a notebook's cells import, so that work happens while the runner is still checking the
parameters and importing papermill, not in the notebook's first cell. It binds no names: the
notebook's namespace is what its cells make it. It then settles the collector for a long-lived
process (``tmnb.collector.settled``).

It also leaves jsonschema's IRI checker out (``without_iri_grammar``), as the runner and every tmnb
command do: the official client imports jsonschema when kubernetes-validate is installed.

The modules come from the kernel's environment (``PRELOAD_ENV``, comma-separated), written by
``tmnb.cli.run.kernel``. A module that fails to import is left for the notebook's own import,
which reports the error in the cell where a reader looks for it.
"""

from __future__ import annotations

import importlib
import os
import sys

from tmnb.collector import settled

PRELOAD_ENV = "TMNB_PRELOAD_MODULES"


def without_iri_grammar() -> None:
    """jsonschema compiles an RFC 3987 grammar at import when rfc3987-syntax is installed (about
    0.7 s, a third of papermill's import); nbformat's schema and tmnb's checks have no ``iri``
    format to check, so a process that runs reports goes without that checker."""
    if "rfc3987_syntax" not in sys.modules:
        sys.modules["rfc3987_syntax"] = None  # type: ignore[assignment]  # Python's way to say "not installed"


def load_ipython_extension(shell: object) -> None:
    """IPython's extension hook: import each listed module (``shell`` is not needed)."""
    without_iri_grammar()
    for name in filter(None, os.environ.get(PRELOAD_ENV, "").split(",")):
        try:
            importlib.import_module(name)
        except Exception:
            continue
    settled()
