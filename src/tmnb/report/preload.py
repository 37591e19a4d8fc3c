"""An IPython extension the runner's kernels load at start: it imports the modules a notebook's
cells import, so that work happens while the parent process is still starting papermill, not in
the notebook's first cell. It binds no names: the notebook's namespace is what its cells make it.

The modules come from the kernel's environment (``PRELOAD_ENV``, comma-separated), written by
``tmnb.report.kernel``. A module that fails to import is left for the notebook's own import,
which reports the error in the cell where a reader looks for it.
"""

from __future__ import annotations

import importlib
import os

PRELOAD_ENV = "TMNB_PRELOAD_MODULES"


def load_ipython_extension(shell: object) -> None:
    """IPython's extension hook: import each listed module (``shell`` is not needed)."""
    for name in filter(None, os.environ.get(PRELOAD_ENV, "").split(",")):
        try:
            importlib.import_module(name)
        except Exception:
            continue
