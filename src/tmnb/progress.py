"""Whether a long step shows a progress bar: asked for, or on a terminal, never inside a kernel.

tqdm's own test (``disable=None``: the stream is a TTY) passes inside a Jupyter kernel, whose
streams claim to be terminals, so a papermill run wrote the collectors' bars into the report.
"""

from __future__ import annotations

import sys


def disabled(progress: bool | None) -> bool:
    """``progress`` None means: a bar on an interactive terminal only."""
    if progress is not None:
        return not progress
    return "ipykernel" in sys.modules or not sys.stderr.isatty()
