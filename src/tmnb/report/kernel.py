"""A notebook's kernel, started before papermill is imported, with the notebook's modules loading.

A run on 2 cores spent about 4 s in series before its first cell did any work: papermill's import
in the parent, then the kernel's boot, then the notebook's imports in its first cell (pandas, the
kubelet model, matplotlib). Started first, the kernel boots and imports the notebook's modules
(``tmnb.report.preload``) on the other core while the parent imports papermill; papermill is then
handed the running kernel.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.report.preload import PRELOAD_ENV

if TYPE_CHECKING:
    from jupyter_client.manager import AsyncKernelManager
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


class WarmKernel:
    """A started kernel with the notebook's modules importing; ``manager`` goes to papermill, which
    leaves a kernel it did not start running: ``stop`` ends it."""

    def __init__(self, notebook: Path, *, live: bool = False) -> None:
        from jupyter_core.utils import run_sync

        self._stopped = self._stop_requested = False
        self.manager = _kernel_manager()(kernel_name=KERNEL_NAME, config=kernel_config())
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
