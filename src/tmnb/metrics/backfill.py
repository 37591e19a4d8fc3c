"""A throw-away Prometheus holding given series: OpenMetrics backfilled with ``promtool tsdb
create-blocks-from openmetrics`` and served on 127.0.0.1, stopped when the block ends.

The demo compares through it, so the comparison runs its real PromQL against a real server.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from tmnb.errors import CollectError

#: No scrape targets: the server only answers queries over the backfilled blocks.
CONFIG = "global:\n  scrape_interval: 1m\nscrape_configs: []\n"


def available() -> bool:
    """Whether both ``prometheus`` and ``promtool`` are on PATH."""
    return bool(shutil.which("prometheus") and shutil.which("promtool"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tail(path: Path) -> str:
    return path.read_text(errors="replace")[-2000:] if path.exists() else ""


def _wait_ready(url: str, proc: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise CollectError(f"prometheus exited with {proc.returncode}: {_tail(log)}")
        try:
            if httpx.get(f"{url}/-/ready", timeout=1).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.1)
    raise CollectError(f"prometheus not ready after {timeout:.0f} s: {_tail(log)}")


@contextmanager
def served(openmetrics: Path, workdir: Path, *, timeout: float = 60.0) -> Iterator[str]:
    """The URL of a Prometheus over ``openmetrics`` (TSDB and log in ``workdir``), for the block's length."""
    promtool, server = shutil.which("promtool"), shutil.which("prometheus")
    if not (promtool and server):
        raise CollectError("prometheus and promtool are needed on PATH to serve backfilled series")
    workdir.mkdir(parents=True, exist_ok=True)
    tsdb = workdir / "tsdb"
    made = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(tsdb)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if made.returncode:
        raise CollectError(f"promtool could not backfill {openmetrics}: {made.stderr[-2000:]}")
    (workdir / "prometheus.yml").write_text(CONFIG)
    address = f"127.0.0.1:{_free_port()}"
    log = workdir / "prometheus.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                server,
                f"--config.file={workdir / 'prometheus.yml'}",
                f"--storage.tsdb.path={tsdb}",
                "--storage.tsdb.retention.time=3650d",  # backfilled samples may be months old
                f"--web.listen-address={address}",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_ready(f"http://{address}", proc, log, timeout)
        yield f"http://{address}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
