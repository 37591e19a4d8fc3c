"""A run's kernel, started the moment the runner knows the notebook, through jupyter_client's public API.

Three things a run does in series on 2 cores were each about a second or more: papermill's import,
the kernel's boot with the notebook's imports (pandas, the kubelet model, matplotlib), and a large
snapshot's read (7 s at 5,000 nodes), which the parameter checks and the notebook's first cell both
need. So the kernel starts first and imports the notebook's modules (``warmup``, an IPython
extension); the runner checks what the parameters alone tell meanwhile; then the kernel is asked,
as any client asks a kernel (``execute`` with a user expression), to run the checks that read the
snapshot, which it keeps for the notebook's first cell; papermill is imported while it reads, and is
handed the running kernel (``km=``). A refused parameter shuts the kernel down before any run
folder exists.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.cli.run.checks import in_kernel
from tmnb.cli.run.warmup import PRELOAD_ENV

if TYPE_CHECKING:
    from jupyter_client.asynchronous.client import AsyncKernelClient
    from jupyter_client.manager import AsyncKernelManager
    from traitlets.config import Config

KERNEL_NAME = "python3"
#: The warm-up extension, and the history in memory as nbclient sets it for kernels it starts: a
#: report's cells do not belong in the user's IPython history, and side-by-side runs do not share
#: its SQLite file.
KERNEL_ARGUMENTS = ["--IPKernelApp.extensions=tmnb.cli.run.warmup", "--HistoryManager.hist_file=:memory:"]
#: The kernel's answer to the snapshot checks: the module and function it evaluates.
CHECKS_IN_KERNEL = (in_kernel.__module__, in_kernel.__name__)

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


class KernelGone(Exception):
    """The kernel could not answer the snapshot checks (it died, or never came up); the runner then
    runs them itself, and papermill reports the kernel's state in the run."""


class WarmKernel:
    """A started kernel with the notebook's modules importing; ``manager`` goes to papermill, which
    leaves a kernel it did not start running: leaving the ``with`` block (or ``stop``) ends it."""

    def __init__(self, notebook: Path, *, live: bool = False) -> None:
        from jupyter_client.manager import AsyncKernelManager
        from jupyter_core.utils import run_sync

        self._stopped = self._stop_requested = False
        self._asked: tuple[AsyncKernelClient, str] | None = None
        self.manager: AsyncKernelManager = AsyncKernelManager(kernel_name=KERNEL_NAME, config=kernel_config())
        modules = imported_modules(notebook) + (LIVE_MODULES if live else [])
        env = {**os.environ, PRELOAD_ENV: ",".join(modules)}
        run_sync(self.manager.start_kernel)(extra_arguments=KERNEL_ARGUMENTS, env=env)

    def __enter__(self) -> WarmKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def ask_checks(self, notebook: Path, params: dict[str, Any]) -> None:
        """Ask the kernel to run the notebook's snapshot checks on the snapshot it reads and keeps for
        the first cell (``checks.in_kernel``); ``checked`` waits for the answer. Silent and without
        history: the notebook's execution counts and namespace stay what its cells make them."""
        from jupyter_core.utils import run_sync

        module, function = CHECKS_IN_KERNEL
        call = f"__import__({module!r}, fromlist=[{function!r}]).{function}({notebook.stem!r}, {_as_json(params)!r})"
        client = self.manager.client()
        client.start_channels()
        try:
            run_sync(client.wait_for_ready)(timeout=60)
        except RuntimeError as exc:
            client.stop_channels()
            raise KernelGone(str(exc)) from None
        msg_id = client.execute("", silent=True, store_history=False, user_expressions={"outcome": call})
        self._asked = (client, msg_id)

    def checked(self, timeout: float) -> dict[str, Any] | None:
        """The kernel's answer to ``ask_checks``: None when the checks passed, else the refusal's
        fields (``checks.in_kernel``)."""
        from jupyter_core.utils import run_sync

        if self._asked is None:
            raise KernelGone("the checks were not asked")
        client, msg_id = self._asked
        self._asked = None
        try:
            while True:
                reply = run_sync(client.get_shell_msg)(timeout=timeout)
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
        except Exception as exc:  # queue.Empty on a timeout, a closed channel: the kernel did not answer
            raise KernelGone(f"{type(exc).__name__}: {exc}") from None
        finally:
            client.stop_channels()
        outcome = reply["content"].get("user_expressions", {}).get("outcome", {})
        if outcome.get("status") != "ok":
            raise KernelGone(f"{outcome.get('ename', 'no answer')}: {outcome.get('evalue', '')}")
        answer: dict[str, Any] | None = json.loads(ast.literal_eval(outcome["data"]["text/plain"]))
        return answer

    def request_stop(self) -> None:
        """Ask the kernel to shut down and go on; ``stop`` then waits for it (the report renders
        meanwhile instead of waiting a second for the kernel process to exit)."""
        from jupyter_core.utils import run_sync

        if not (self._stopped or self._stop_requested):
            self._stop_requested = True
            run_sync(self.manager.request_shutdown)()

    def stop(self) -> None:
        """End the kernel and free its manager's resources; later calls do nothing. A kernel asked to
        stop is waited for (and signalled if it lingers); any other is killed: nothing it runs is kept."""
        from jupyter_core.utils import run_sync

        if self._stopped:
            return
        self._stopped = True
        if self._stop_requested:
            run_sync(self.manager.finish_shutdown)()
        elif run_sync(self.manager.is_alive)():
            run_sync(self.manager.shutdown_kernel)(now=True)
        run_sync(self.manager.cleanup_resources)()


def _as_json(params: dict[str, Any]) -> str:
    return json.dumps(params, default=str)
