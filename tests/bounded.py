"""Run a snippet in a child Python with a memory ceiling and a deadline.

Tests of "refused at once" inputs (``/dev/zero``, ``0-99999999``) must also fail, not take the
machine down, when the code under test regresses to reading or expanding everything.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

_PRELUDE = """
import resource
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
"""


def run_bounded(code: str, *, memory: int = 1 << 30, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
    """``python -c code`` under ``memory`` bytes of address space; the result, or a failed one on timeout."""
    script = _PRELUDE.format(limit=memory) + textwrap.dedent(code)
    try:
        return subprocess.run(
            [sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, returncode=-1, stdout="", stderr=f"timed out after {timeout}s")
