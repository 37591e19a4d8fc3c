"""``tmnb sandbox up`` / ``down``: run the sandbox in the foreground, or detached with a state file.

The run directory holds everything of one sandbox: node directories, certificate, access log,
``server.log`` and ``sandbox.json`` (pid, URL, kubeconfig path; never the token). ``down`` only
signals a pid whose command line is a tmnb sandbox.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from tmnb.errors import InputError, TmnbError
from tmnb.report.commands import command
from tmnb.snapshot import Snapshot
from tmnb.twin.sandbox.faults import Faults
from tmnb.twin.sandbox.server import Sandbox

STATE_FILE = "sandbox.json"
READY_TIMEOUT = 60.0


def default_run_dir() -> Path:
    return Path(os.environ.get("TMNB_SANDBOX_DIR") or Path.home() / ".cache" / "tmnb" / "sandbox")


def load_snapshot(source: str, nodes: int | None) -> Snapshot:
    """The snapshot to twin: N generated nodes, or ``sample`` / a snapshot file."""
    if nodes is not None:
        if nodes < 1:
            raise InputError(f"--nodes must be at least 1, got {nodes}")
        from tmnb.twin.sample import generate_fleet

        return generate_fleet(nodes)
    from tmnb.sources.resolve import open_snapshot

    return open_snapshot(source)


def parse_rates(items: Sequence[str]) -> dict[str, float]:
    rates = {}
    for item in items:
        path, sep, rate = item.rpartition("=")
        try:
            rates[path] = float(rate)
        except ValueError:
            sep = ""
        if not sep or not path.startswith("/"):
            raise InputError(f"expected PATH=RATE with PATH starting with /, got {item!r}", where="--error-rate")
    return rates


def _recorded(state_file: Path) -> dict[str, Any]:
    """The state a running sandbox wrote; a clear error when the file is not one."""
    try:
        state = json.loads(state_file.read_text())
        int(state["pid"])
    except (OSError, ValueError, TypeError, KeyError) as exc:
        raise InputError(
            f"not a sandbox state file (expected JSON with pid, url, kubeconfig): {exc}", source=str(state_file)
        ) from None
    return dict(state)


def _sandbox_pid(pid: int) -> bool:
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False
    return b"tmnb" in cmdline and b"sandbox" in cmdline


def refuse_if_running(run_dir: Path) -> None:
    """One sandbox per run directory: a second one would overwrite the first one's node files."""
    state_file = run_dir / STATE_FILE
    if not state_file.exists():
        return
    try:
        state = _recorded(state_file)
    except InputError:
        return  # garbage from a crash: the new sandbox replaces it
    if _sandbox_pid(int(state["pid"])) and int(state["pid"]) != os.getpid():
        raise InputError(
            f"a sandbox is already running from this directory (pid {state['pid']}, {state.get('url')}); "
            f"stop it with: {command('sandbox', 'down', run_dir=run_dir)}",
            source=str(run_dir),
        )


def serve(
    snapshot: Snapshot, run_dir: Path, kubeconfig: Path, port: int, faults: Faults, *, node_files: bool = True
) -> None:
    """Run until SIGTERM or Ctrl-C; ``sandbox.json`` exists exactly while the API answers."""
    refuse_if_running(run_dir)
    stopped = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopped.set())
    with Sandbox(snapshot, run_dir, port=port, faults=faults, node_files=node_files) as sandbox:
        sandbox.write_kubeconfig(kubeconfig)
        state = {"pid": os.getpid(), "url": sandbox.url, "kubeconfig": str(kubeconfig.resolve())}
        (run_dir / STATE_FILE).write_text(json.dumps(state))
        print(f"sandbox up at {sandbox.url} ({len(snapshot.nodes)} nodes); kubeconfig {kubeconfig}", flush=True)
        try:
            while not stopped.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            sandbox.stop()  # the kubeconfig and the key are gone before ``down`` sees the state file go
            (run_dir / STATE_FILE).unlink(missing_ok=True)


def _ready(state: dict[str, Any]) -> bool:
    doc = yaml.safe_load(Path(state["kubeconfig"]).read_text())
    cluster, user = doc["clusters"][0]["cluster"], doc["users"][0]["user"]
    context = ssl.create_default_context(cadata=base64.b64decode(cluster["certificate-authority-data"]).decode())
    req = urllib.request.Request(f"{state['url']}/readyz", headers={"Authorization": f"Bearer {user['token']}"})
    try:
        with urllib.request.urlopen(req, context=context, timeout=2) as resp:
            status: int = resp.status  # urlopen's response is Any in typeshed
            return status == 200
    except (urllib.error.URLError, OSError):
        return False


def start_background(argv: Sequence[str], run_dir: Path) -> dict[str, Any]:
    """Start ``tmnb sandbox up`` (without --background) detached; return its state (the decoded state
    file: pid, url, kubeconfig) once /readyz answers."""
    run_dir.mkdir(parents=True, exist_ok=True)
    refuse_if_running(run_dir)
    (run_dir / STATE_FILE).unlink(missing_ok=True)
    with (run_dir / "server.log").open("w") as log:
        child = subprocess.Popen(
            [sys.executable, "-m", "tmnb.cli", *argv],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + READY_TIMEOUT
    while time.monotonic() < deadline:
        if child.poll() is not None:
            tail = (run_dir / "server.log").read_text()[-2000:]
            raise TmnbError(f"the sandbox exited with status {child.returncode}: {tail.strip()}")
        state_file = run_dir / STATE_FILE
        if state_file.exists():
            state: dict[str, Any] = json.loads(state_file.read_text())
            if state.get("pid") == child.pid and _ready(state):
                return state
        time.sleep(0.2)
    child.terminate()
    raise TmnbError(f"the sandbox did not answer /readyz within {READY_TIMEOUT:.0f}s; see {run_dir / 'server.log'}")


def stop(run_dir: Path, timeout: float = 15.0) -> int:
    """Stop the sandbox recorded in ``run_dir``; returns its pid."""
    state_file = run_dir / STATE_FILE
    if not state_file.exists():
        raise InputError(f"no running sandbox recorded in {run_dir} ({STATE_FILE} is missing)")
    pid = int(_recorded(state_file)["pid"])
    if not Path(f"/proc/{pid}").exists():
        state_file.unlink(missing_ok=True)
        raise InputError(f"the sandbox (pid {pid}) is not running; removed the stale {STATE_FILE}")
    if not _sandbox_pid(pid):
        raise InputError(f"pid {pid} in {state_file} is not a tmnb sandbox; not touching it")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and Path(f"/proc/{pid}").exists() and state_file.exists():
        time.sleep(0.1)
    if state_file.exists():
        raise TmnbError(f"the sandbox (pid {pid}) did not stop within {timeout:.0f}s")
    return pid


__all__ = ["default_run_dir", "load_snapshot", "parse_rates", "serve", "start_background", "stop"]
