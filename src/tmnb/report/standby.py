"""A run's kernel process before it is a kernel: started before the runner checks the parameters,
it reads the run's snapshot file, runs the parameter checks, imports ipykernel, and waits.

The runner's checks of a 5,000-node snapshot read the whole file (7 s and 2 GB), and so did the
notebook's first cell once the kernel had started: the same work twice, in series. Here the file is
read once, by the process that will need it, and the checks run there on what it read. The process
is no kernel until the checks have passed: the runner (``tmnb.report.kernel.Standby``) sends it, on
a pipe of its own, first ``("check", notebook, parameters)``, answered with None, the exception the
checks raised, or ``UNCHECKED`` (the runner then checks itself), and then ``("kernel", argv, env,
cwd)``, the kernel's command line, on which it starts ipykernel. End of input (the parameters were
refused, the runner went away) ends it without a kernel ever listening.

The notebook's own modules are imported by the kernel as before (``tmnb.report.preload``), once
ipykernel has chosen matplotlib's inline backend, which matplotlib reads at its import.

Run as ``python -m tmnb.report.standby``; the snapshot file to read and the pipe's two file
descriptors come from its environment (``READ_AHEAD_ENV``, ``CHANNEL_ENV``).
"""

from __future__ import annotations

import gc
import os
import sys
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from tmnb.report.preload import without_iri_grammar

READ_AHEAD_ENV = "TMNB_READ_AHEAD"
CHANNEL_ENV = "TMNB_STANDBY_CHANNEL"
#: The kernel command this process can become: ipykernel's launcher on this interpreter.
LAUNCHER = ["-m", "ipykernel_launcher"]
#: The answer to a check that could not be sent back as it ended (an exception that does not pickle).
UNCHECKED = "unchecked"


def _checked(notebook: str, params: dict[str, Any]) -> BaseException | None:
    """The runner's own checks, on the snapshot read ahead (which they leave for the kernel)."""
    from tmnb.report.checks import check_parameters
    from tmnb.sources.resolve import read_ahead_kept

    try:
        with read_ahead_kept():
            check_parameters(Path(notebook), params)
    except Exception as exc:  # every outcome goes back to the runner, which raises it there
        return exc
    return None


def _settle() -> None:
    """What the kernel holds for good (its modules, a fleet's snapshot: millions of objects) frozen out
    of the cyclic collector's sight, and a young generation of 50,000 objects instead of 700: the
    report's cells allocate millions more, and each full collection walked the whole fleet (at 5,000
    nodes, 3.5 s of 03's 12 s in its kernel, 0.6 s so)."""
    gc.freeze()
    gc.set_threshold(50_000, 20, 20)


def main() -> None:
    without_iri_grammar()
    requests, replies = (Connection(int(fd)) for fd in os.environ[CHANNEL_ENV].split(","))
    source = os.environ.get(READ_AHEAD_ENV, "")
    if source:
        from tmnb.sources.resolve import read_ahead

        read_ahead(source)
    _settle()
    while True:
        try:
            message = requests.recv()
        except EOFError:
            return
        if message[0] == "check":
            outcome = _checked(message[1], message[2])
            try:
                replies.send(outcome)
            except Exception:
                replies.send(UNCHECKED)
            import ipykernel.kernelapp  # noqa: F401  # while the runner prepares the kernel's start, not before the answer

            continue
        _, argv, env, cwd = message
        break
    requests.close()
    replies.close()
    os.environ.clear()
    os.environ.update(env)
    if cwd:
        os.chdir(cwd)
    from ipykernel import kernelapp

    sys.argv = ["ipykernel_launcher", *argv]
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
