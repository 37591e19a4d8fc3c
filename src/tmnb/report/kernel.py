"""A notebook's kernel, started before papermill is imported, with the notebook's modules loading.

A run on 2 cores spent about 4 s in series before its first cell did any work: papermill's import
in the parent, then the kernel's boot, then the notebook's imports in its first cell (pandas, the
kubelet model, matplotlib). Started first, the kernel boots and imports the notebook's modules
(``tmnb.report.preload``) on the other core while the parent imports papermill; papermill is then
handed the running kernel.

Earlier still, the process that will be the kernel is started before the parameters are checked
(``Standby``): it imports ipykernel, reads the run's snapshot file and runs the checks on it; it
becomes the kernel only once they pass.
"""

from __future__ import annotations

import ast
import json
import os
import pickle
import subprocess
import sys
import uuid
from multiprocessing.connection import Connection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.report.preload import PRELOAD_ENV
from tmnb.report.standby import CHANNEL_ENV, LAUNCHER, READ_AHEAD_ENV

if TYPE_CHECKING:
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner
    from traitlets.config import Config

KERNEL_NAME = "python3"
#: The preload extension, and the history in memory as nbclient sets it for kernels it starts: a
#: report's cells do not belong in the user's IPython history, and side-by-side runs do not share
#: its SQLite file.
KERNEL_ARGUMENTS = ["--IPKernelApp.extensions=tmnb.report.preload", "--HistoryManager.hist_file=:memory:"]


#: What a notebook reading a live cluster imports at its first call to the API: the official client
#: and its API classes (about 2 s of imports), preloaded when the run's ``source`` is ``live``.
LIVE_MODULES = [
    "tmnb.sources.cluster.api",
    *(f"kubernetes.client.api.{name}" for name in ("core_v1_api", "apps_v1_api", "batch_v1_api", "policy_v1_api")),
    *(f"kubernetes.client.api.{name}" for name in ("custom_objects_api", "version_api")),
]


def imported_modules(notebook: Path) -> list[str]:
    """The absolute modules a notebook's code cells import, in order of first appearance; for
    ``from a import b`` both ``a`` and ``a.b`` (the kernel skips ``a.b`` when ``b`` is not a module).
    Cells that are not Python (magics) are skipped. Read as plain JSON: this runs before the kernel
    starts, and nbformat's import would delay it."""
    found: dict[str, None] = {}
    for cell in json.loads(notebook.read_text(encoding="utf-8")).get("cells", []):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        try:
            tree = ast.parse(source if isinstance(source, str) else "".join(source))
        except SyntaxError:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(dict.fromkeys(alias.name for alias in node.names))
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found[node.module] = None
                found.update(dict.fromkeys(f"{node.module}.{alias.name}" for alias in node.names))
    return list(found)


def kernel_config() -> Config:
    """Kernels get CurveZMQ keys from the manager when their kernelspec supports it (ipykernel 7
    does): the loopback channels carry code and outputs encrypted, and the kernel has no reason
    to warn that they are plain text."""
    from traitlets.config import Config

    config = Config()
    config.KernelManager.transport_encryption = "auto"
    return config


def _kernel_manager() -> type[AsyncKernelManager]:
    """jupyter_client sends a kernel SIGINT before every shutdown request; a kernel that finished
    the notebook has nothing to interrupt, and a SIGINT that lands in a message handler makes
    ipykernel log ``KeyboardInterrupt caught in kernel`` on a successful run. The shutdown request
    alone ends the kernel (and SIGTERM, then SIGKILL, follow as before when it does not). An
    interrupt on a cell timeout is not a shutdown and still happens."""
    from jupyter_client.manager import AsyncKernelManager

    class ShutdownWithoutInterrupt(AsyncKernelManager):
        async def _async_interrupt_kernel(self) -> None:
            if not self.shutting_down:
                await super()._async_interrupt_kernel()

    return ShutdownWithoutInterrupt


class Standby:
    """The process a run's kernel will be (``tmnb.report.standby``), started before the parameters
    are checked: it reads the run's snapshot file, runs the checks on it (``check``) and becomes the
    kernel when the kernel manager launches one (``become``); otherwise leaving the ``with`` block
    ends it, and no kernel ever ran."""

    def __init__(self, read_ahead: str = "") -> None:
        self.handed = False
        self.options = _interpreter_options()
        requests, self._requests = os.pipe()
        self._replies, replies = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, *self.options, "-m", "tmnb.report.standby"],
            stdin=subprocess.PIPE,
            pass_fds=(requests, replies),
            # ipykernel reads JPY_PARENT_PID when it is imported, to end the kernel when its parent goes;
            # jupyter_client gives the kernel this process's pid, so the standby has it from the start
            env={
                **os.environ,
                READ_AHEAD_ENV: read_ahead,
                CHANNEL_ENV: f"{requests},{replies}",
                "JPY_PARENT_PID": str(os.getpid()),
            },
            start_new_session=True,  # as jupyter_client starts kernels: signals go to its group
        )
        os.close(requests)
        os.close(replies)
        self.channel = (Connection(self._requests, readable=False), Connection(self._replies, writable=False))

    def __enter__(self) -> Standby:
        return self

    def __exit__(self, *exc: object) -> None:
        """Not a kernel (or one whose start failed half-way): end it; a kernel has ended by now."""
        for end in self.channel:
            end.close()
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        if self.process.stdin and not self.handed:
            self.process.stdin.close()

    def check(self, notebook: Path, params: dict[str, Any]) -> bool:
        """The parameter checks, run in the standby on the snapshot it read; what they raise is raised
        here. False: the standby could not run them or say how they ended (it is gone, a value does
        not pickle), and the caller checks itself."""
        try:
            self.channel[0].send(("check", str(notebook), params))
            outcome = self.channel[1].recv()
        except (OSError, EOFError, pickle.PickleError, TypeError, AttributeError):
            return False
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome is None

    def become(self, cmd: list[str], env: dict[str, str], cwd: str | None) -> subprocess.Popen[bytes] | None:
        """Hand the kernel's command line to the waiting process; None when it cannot take it (another
        interpreter's kernel, or the process is gone), and the kernel is then launched as usual."""
        head = [*self.options, *LAUNCHER]
        if self.handed or cmd[1 : len(head) + 1] != head or not _same_file(cmd[0], sys.executable):
            return None
        try:
            self.channel[0].send(("kernel", cmd[len(head) + 1 :], env, cwd or ""))
        except OSError:
            return None
        self.handed = True
        return self.process


def _interpreter_options() -> list[str]:
    """The interpreter's options on the kernel's command line (ipykernel 7 turns frozen modules
    off for its debugger): the process that becomes the kernel starts with the same."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    try:
        argv = KernelSpecManager().get_kernel_spec(KERNEL_NAME).argv
    except NoSuchKernel:
        return []
    return argv[1 : argv.index(LAUNCHER[0])] if LAUNCHER[0] in argv else []


def _same_file(a: str, b: str) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _standby_provisioner(standby: Standby, manager: AsyncKernelManager) -> LocalProvisioner:
    """jupyter_client's local provisioner, launching into ``standby`` instead of a new process."""
    from jupyter_client.provisioning.local_provisioner import LocalProvisioner

    class StandbyProvisioner(LocalProvisioner):
        async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> Any:
            process = standby.become(cmd, kwargs.get("env") or dict(os.environ), kwargs.get("cwd"))
            if process is None:
                return await super().launch_kernel(cmd, **kwargs)
            self.process, self.pid, self.cwd = process, process.pid, kwargs.get("cwd", Path.cwd())
            self.pgid = os.getpgid(process.pid)
            return self.connection_info

    return StandbyProvisioner(kernel_id=manager.kernel_id, kernel_spec=manager.kernel_spec, parent=manager)


class WarmKernel:
    """A started kernel with the notebook's modules importing; ``manager`` goes to papermill, which
    leaves a kernel it did not start running: ``stop`` ends it. With a ``standby`` process, that
    process becomes the kernel."""

    def __init__(self, notebook: Path, *, live: bool = False, standby: Standby | None = None) -> None:
        from jupyter_core.utils import run_sync

        self._stopped = self._stop_requested = False
        self.manager = _kernel_manager()(kernel_name=KERNEL_NAME, config=kernel_config())
        if standby is not None:
            self.manager.kernel_id = str(uuid.uuid4())
            self.manager.provisioner = _standby_provisioner(standby, self.manager)
        modules = imported_modules(notebook) + (LIVE_MODULES if live else [])
        env = {**os.environ, PRELOAD_ENV: ",".join(modules)}
        run_sync(self.manager.start_kernel)(extra_arguments=KERNEL_ARGUMENTS, env=env)

    def __enter__(self) -> WarmKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def request_stop(self) -> None:
        """Ask the kernel to shut down and go on; ``stop`` then waits for it (the report renders
        meanwhile instead of waiting a second for the kernel process to exit)."""
        from jupyter_core.utils import run_sync

        if not (self._stopped or self._stop_requested):
            self._stop_requested = True
            run_sync(self.manager.request_shutdown)()

    def stop(self) -> None:
        """End the kernel (asked, then signalled if it lingers) and free its manager's resources;
        later calls do nothing."""
        from jupyter_core.utils import run_sync

        if self._stopped:
            return
        self._stopped = True
        if self._stop_requested:
            run_sync(self.manager.finish_shutdown)()
        elif run_sync(self.manager.is_alive)():
            run_sync(self.manager.shutdown_kernel)()
        run_sync(self.manager.cleanup_resources)()
