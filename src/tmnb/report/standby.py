"""A run's kernel process before it is a kernel: started while the runner checks the parameters, it
imports ipykernel and reads the run's snapshot file, then waits.

The runner's checks of a 5,000-node snapshot read the whole file (10 s), and so did the notebook's
first cell once the kernel had started: the same work twice, in series, on a machine with a second
core idle. Here the two reads overlap. The process is no kernel until the checks have passed: it
reads one line on stdin, the kernel's command line, environment and working directory as JSON
(``tmnb.report.kernel.Standby``), and only then starts ipykernel; end of input (the parameters were
refused, the runner went away) ends it without a kernel ever listening.

The notebook's own modules are imported by the kernel as before (``tmnb.report.preload``), once
ipykernel has chosen matplotlib's inline backend, which matplotlib reads at its import.

Run as ``python -m tmnb.report.standby``; the snapshot file to read comes from its environment
(``READ_AHEAD_ENV``).
"""

from __future__ import annotations

import json
import os
import sys

from tmnb.report.preload import without_iri_grammar

READ_AHEAD_ENV = "TMNB_READ_AHEAD"
#: The kernel command this process can become: ipykernel's launcher on this interpreter.
LAUNCHER = ["-m", "ipykernel_launcher"]


def main() -> None:
    without_iri_grammar()
    from ipykernel import kernelapp

    source = os.environ.get(READ_AHEAD_ENV, "")
    if source:
        from tmnb.sources.resolve import read_ahead

        read_ahead(source)
    line = sys.stdin.buffer.readline()
    if not line:
        return
    order = json.loads(line)
    os.environ.clear()
    os.environ.update(order["env"])
    if order["cwd"]:
        os.chdir(order["cwd"])
    sys.argv = ["ipykernel_launcher", *order["argv"]]
    kernelapp.launch_new_instance()


if __name__ == "__main__":
    main()
