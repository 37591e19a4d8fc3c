"""What a person sees in a terminal 120 columns wide: every line of ``tmnb whatif``, ``tmnb check`` and
``tmnb rollout status`` fits, and none ends in blanks. Each command runs in a child process whose
stdout and stderr are a real pseudo-terminal (so a progress bar shows as it would), 120 x 50.

A progress bar redraws its line with carriage returns: what stays on the screen is the text after the
last one, and only that is measured; its padding is the bar's, not a line of tmnb's.
"""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios
from collections.abc import Iterator
from pathlib import Path

import pytest

from rollout.test_rollout_sandbox import fleet, rollout
from tmnb.twin.sandbox import Faults, Sandbox

COLUMNS, ROWS = 120, 50
SNA = ["--set", "topologyManagerPolicy=single-numa-node"]


def on_a_terminal(argv: list[str]) -> list[str]:
    """The lines ``tmnb argv`` leaves on a 120-column terminal (stdout and stderr both on it)."""
    main, child = pty.openpty()
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path), "COLUMNS": "", "LINES": ""}
    proc = subprocess.Popen(
        [sys.executable, "-m", "tmnb.cli", *argv], stdin=child, stdout=child, stderr=child, env=env, close_fds=True
    )
    os.close(child)
    chunks = []
    while True:
        try:
            data = os.read(main, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(main)
    assert proc.wait(timeout=300) in (0, 3), b"".join(chunks).decode(errors="replace")[-2000:]
    return b"".join(chunks).decode().replace("\r\n", "\n").split("\n")


def assert_fits(lines: list[str]) -> None:
    assert len(lines) > 3
    for number, line in enumerate(lines, 1):
        shown = line.rsplit("\r", 1)[-1]
        assert len(shown) <= COLUMNS, f"line {number} has {len(shown)} columns: {shown!r}"
        if "\r" not in line:
            assert shown == shown.rstrip(), f"line {number} ends in blanks: {line!r}"


@pytest.mark.parametrize(
    "argv",
    [
        ["whatif", "--snapshot", "sample", *SNA],
        ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=restricted",
         "--set", "topologyManagerScope=pod"],
        ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=best-effort",
         "--set", "topologyManagerPolicyOptions={prefer-closest-numa-nodes: \"true\"}", "--mode", "restart"],
        ["whatif", "--snapshot", "sample", "--kubelet-version", "1.37"],
        ["whatif", "--snapshot", "sample", "--kubelet-version", "1.33", "--set", "cpuManagerPolicy=static"],
        ["whatif", "--snapshot", "sample", *SNA, "--node", "gpu-h100-02"],
        ["whatif", "--snapshot", "sample", *SNA, "--rejected-only"],
        ["whatif", "--snapshot", "sample-after", *SNA, "-l", "tmnb.dev/pool in (gpu,telco)"],
        ["check", "gpu-h100-02", "--source", "sample", *SNA],
        ["check", "gb200-01", "--source", "sample", *SNA],
        ["check", "lat-icx-02", "--source", "sample", "--kubelet-version", "1.37"],
        ["check", "spr-snc4-01", "--source", "sample", "--set", "topologyManagerScope=pod"],
    ],
    ids=lambda argv: " ".join(argv[:2] + argv[3:]),
)  # fmt: skip
def test_whatif_and_check_fit_120_columns(argv: list[str]) -> None:
    assert_fits(on_a_terminal(argv))


@pytest.fixture(scope="module")
def changes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    """Two changes' state folders on the sandbox twin: one done, one rolled back (its node never Ready)."""
    tmp = tmp_path_factory.mktemp("changes")
    with Sandbox(fleet(), tmp / "run", controller_interval=0.1) as box:
        box.cluster.ready_after = 0.2
        kubeconfig = box.write_kubeconfig(tmp / "kubeconfig")
        change = ("--set", "topologyManagerPolicy=restricted", "--approve", "canary")
        assert rollout(kubeconfig, tmp / "c1", "--change-id", "c1", *change, "--node", "w3", "--canary", "w3") == 0
        box.api.set_faults(Faults(never_ready={"w2"}))
        back = ("--node", "w2", "--canary", "w2", "--ready-timeout", "1")
        assert rollout(kubeconfig, tmp / "c2", "--change-id", "c2", *change, *back) == 3
    yield {"c1": tmp / "c1", "c2": tmp / "c2"}


@pytest.mark.parametrize("change", ["c1", "c2"])
def test_rollout_status_fits_120_columns(change: str, changes: dict[str, Path]) -> None:
    asked = ["rollout", "status", "--change-id", change, "--state-dir", str(changes[change])]
    lines = on_a_terminal(asked)
    assert_fits(lines)
    assert lines[0].startswith(f"{change}: ")  # where the change stands, in one line first
    assert_fits(on_a_terminal([*asked, "-v"]))  # and the account behind it
