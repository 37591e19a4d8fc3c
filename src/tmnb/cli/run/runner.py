"""Execute a notebook with papermill into an evidence folder: notebook, HTML, manifest.

papermill reports the three ways a run can fail differently (an error cell raises, a cell
timeout is recorded as "completed", a dead kernel raises something else); the runner turns
all three into one failed status, marks the kept partial notebook, and still renders it.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import platform
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from tmnb import __version__
from tmnb.cli.run.checks import check_parameters, check_snapshot, needs_snapshot, refusal
from tmnb.cli.run.kernel import KERNEL_NAME, KernelGone, WarmKernel, kernel_config
from tmnb.cli.run.params import check_choice, declared_parameters, default_value, typed_parameters
from tmnb.cli.run.warmup import without_iri_grammar
from tmnb.errors import InputError, RunError
from tmnb.parse.parameters import check_finite
from tmnb.redact import secret_in
from tmnb.report import ipynb
from tmnb.report.glue import read_glued
from tmnb.report.places import notebooks_dir, resolve_reports_dir

if TYPE_CHECKING:
    from jupyter_client.manager import AsyncKernelManager

#: "pending": the run stopped cleanly at a gate nobody approved (a rollout in execute mode)
Status = Literal["ok", "failed", "alert", "pending"]


@dataclass
class RunResult:
    folder: Path
    notebook: Path
    html: Path | None
    manifest: Path
    status: Status
    message: str = ""
    results: dict[str, Any] = field(default_factory=dict)


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _run_folder(notebook: Path, out: Path | None, reports_dir: Path) -> Path:
    if out is None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        out = reports_dir / f"{stamp}-{notebook.stem}"
        n = 1
        while out.exists():
            n += 1
            out = reports_dir / f"{stamp}-{notebook.stem}-{n}"
    if (out / "manifest.json").exists():
        raise InputError("refusing to overwrite an existing run folder (evidence is immutable)", source=str(out))
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot make the run folder here: {exc.strerror}", source=str(out)) from None
    return out.resolve()


def _execute(src: Path, dst: Path, parameters: dict[str, Any], timeout: float, running: WarmKernel) -> str | None:
    """Run papermill on the run's kernel; return None on success or a one-line failure description.
    The kernel is then asked to shut down and exits while the report renders (the run's owner waits
    for it at the end)."""
    try:
        return _papermill(src, dst, parameters, timeout, running.manager)
    finally:
        running.request_stop()


def _import_papermill() -> None:
    """papermill's import (about a second), while the kernel reads the snapshot; then the HTML
    renderer's, in the background (it would slow papermill's)."""
    import papermill  # noqa: F401

    from tmnb.report.html import prepare_in_background

    prepare_in_background()


def _papermill(
    src: Path, dst: Path, parameters: dict[str, Any], timeout: float, manager: AsyncKernelManager
) -> str | None:
    import papermill as pm
    from nbclient.exceptions import CellTimeoutError, DeadKernelError
    from papermill.exceptions import PapermillExecutionError

    logging.getLogger("papermill").setLevel(logging.WARNING)
    try:
        pm.execute_notebook(
            str(src),
            str(dst),
            parameters=parameters,
            kernel_name=KERNEL_NAME,
            language="python",  # the kernel's: a notebook saved without kernel metadata runs all the same
            progress_bar=False,
            execution_timeout=math.ceil(timeout),  # nbclient counts whole seconds
            request_save_on_cell_execute=True,
            config=kernel_config(),
            km=manager,
        )
    except PapermillExecutionError as exc:
        return f"cell {exc.cell_index} raised {exc.ename}: {exc.evalue}"
    except CellTimeoutError:
        return f"a cell ran longer than the {timeout:g}s cell timeout and was interrupted"
    except DeadKernelError:
        return "the kernel died during the run"
    except (RuntimeError, OSError, TimeoutError) as exc:  # kernel start-up and protocol failures
        return f"the kernel could not run the notebook: {type(exc).__name__}: {exc}"
    return None


def _mark_failed(executed: Path, message: str) -> None:
    if not executed.exists():
        return
    nb = ipynb.read(executed)
    nb.metadata["tmnb"] = {"status": "failed", "error": message}
    banner = ipynb.markdown_cell(f"**This run failed:** {message}")
    banner.metadata["tags"] = ["tmnb-failure"]
    nb.cells.insert(0, banner)
    ipynb.write(nb, executed)


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def find_notebook(notebook: str | Path) -> Path:
    """A path as given, else one of tmnb's notebooks by its name, number or topic (``05-compare``,
    ``05``, ``compare``; a topic is the name after the number, ``numa-occupancy``)."""
    src = Path(notebook)
    if src.is_file():
        return src
    known = sorted(notebooks_dir().glob("*.ipynb"))
    word = src.name.removesuffix(".ipynb")
    matches = [nb for nb in known if word in (nb.stem, *nb.stem.split("-", 1))]
    if len(matches) == 1 and src.parent == Path():
        return matches[0]
    names = ", ".join(nb.stem for nb in known) or f"none: {notebooks_dir()} is missing"
    raise InputError(f"notebook not found: expected a .ipynb file or one of the notebooks ({names})", source=str(src))


def start_kernel(notebook: str | Path, *, live: bool = False) -> WarmKernel:
    """A kernel for ``notebook`` started now, its modules importing (the official client's too when
    the run will read a ``live`` cluster), for a ``run`` to come (the demo starts the next
    notebook's kernel while the current one runs)."""
    return WarmKernel(find_notebook(notebook), live=live)


def run(
    notebook: str | Path,
    raw_params: list[tuple[str, str]] | None = None,
    *,
    params: dict[str, Any] | None = None,
    out: str | Path | None = None,
    reports_dir: str | Path | None = None,
    timeout: float = 600,
    show_code: bool = False,
    kernel: WarmKernel | None = None,
) -> RunResult:
    """Execute ``notebook`` with parameters typed against its ``parameters`` cell, on ``kernel`` when
    one was started ahead for it (``start_kernel``), else on one started as soon as the parameters are
    typed. The kernel is stopped whatever happens: a refused parameter leaves no kernel and no run folder."""
    with ExitStack() as kernels:
        if kernel is not None:
            kernels.enter_context(kernel)
        src = find_notebook(notebook)
        typed, given = _parameters(src, raw_params or [], params or {})
        # live given, or the notebook's default (04 reads the cluster unless told otherwise)
        running = kernel or kernels.enter_context(_started(src, live=given.get("source") == "live"))
        _check(src, given, running, timeout)
        return _run(src, typed, out, reports_dir, timeout, show_code, running)


def _started(src: Path, *, live: bool) -> WarmKernel:
    try:
        return WarmKernel(src, live=live)
    except (RuntimeError, OSError, TimeoutError) as exc:  # jupyter_client's start-up failures, a missing kernelspec
        raise RunError(f"{src.name}: the kernel could not start: {type(exc).__name__}: {exc}") from None


def _parameters(
    src: Path, raw_params: list[tuple[str, str]], params: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The parameters given, typed against the notebook's declarations, and all of them as the
    notebook will see them (its defaults under what was given)."""
    declared = declared_parameters(src)
    typed = typed_parameters(src, raw_params)
    for name, value in params.items():
        if name not in declared:
            raise InputError(f"unknown parameter {name!r}", source=str(src))
        check_choice(name, value, declared[name], source=str(src))
        typed[name] = value
    for name, value in typed.items():
        check_finite(value, where=f"parameter {name}")
        if secret_in(name, value):
            raise InputError(
                "looks like a credential: parameters are written into the notebook, the HTML and the manifest; "
                "pass secrets through the environment (e.g. env:VAR) instead",
                where=f"parameter {name}",
            )
    return typed, {**{name: default_value(d) for name, d in declared.items()}, **typed}


def _check(src: Path, given: dict[str, Any], running: WarmKernel, timeout: float) -> None:
    """The parameter checks: the runner's own while the kernel boots, then the snapshot checks in the
    kernel, on the snapshot it reads for the notebook (papermill is imported meanwhile); the runner
    runs those itself when the kernel cannot answer."""
    without_iri_grammar()
    check_parameters(src, given)
    if not needs_snapshot(src, given):
        _import_papermill()
        return
    try:
        running.ask_checks(src, given)
        _import_papermill()
        answer = running.checked(timeout)
    except KernelGone:
        check_snapshot(src.stem, given)
        return
    if answer is not None:
        raise refusal(answer)


def _run(
    src: Path,
    typed: dict[str, Any],
    out: str | Path | None,
    reports_dir: str | Path | None,
    timeout: float,
    show_code: bool,
    running: WarmKernel,
) -> RunResult:
    from tmnb.report.html import render_html

    declared = declared_parameters(src)
    if "out_dir" in typed:  # what the notebook writes there is evidence: that folder is the run folder
        asked = Path(typed["out_dir"])
        if out is not None and Path(out).resolve() != asked.resolve():
            raise InputError(
                f"names another folder than --out {out}; the run folder is where the notebook writes",
                where=f"parameter out_dir {asked}",
            )
        out = asked
    folder = _run_folder(src, Path(out) if out else None, resolve_reports_dir(reports_dir))
    if "out_dir" in declared:
        typed["out_dir"] = str(folder)

    executed = folder / src.name
    started, t0 = _now(), time.monotonic()
    failure = _execute(src, executed, typed, timeout, running)
    if failure:
        _mark_failed(executed, failure)
    finished, duration = _now(), time.monotonic() - t0

    results: dict[str, Any] = {}
    html: Path | None = None
    if executed.exists():
        nb = ipynb.read(executed)  # 27 MB for 03 at 5,000 nodes: read once, for its results and its page
        results = read_glued(nb)
        html = render_html(executed, folder / f"{src.stem}.html", show_code=show_code, title=src.stem, nb=nb)

    alert = results.get("alert") or results.get("pending")
    status: Status = "failed" if failure else ("alert" if results.get("alert") else "pending" if alert else "ok")
    message = failure or (str(alert.get("why", alert)) if isinstance(alert, dict) else str(alert or ""))
    manifest = folder / "manifest.json"
    manifest.write_text(
        json.dumps(
            {
                "notebook": str(src),
                "status": status,
                "message": message,
                "parameters": typed,
                "started": started,
                "finished": finished,
                "duration_s": round(duration, 2),
                "tmnb_version": __version__,
                "python": platform.python_version(),
                "results": results,
                "files": {
                    str(p.relative_to(folder)): _sha256(p)
                    for p in sorted(folder.rglob("*"))
                    if p.is_file() and p.name != "manifest.json"
                },
            },
            indent=2,
            default=str,
        )
        + "\n"
    )
    result = RunResult(folder, executed, html, manifest, status, message, results)
    if failure:
        raise RunError(f"{src.name}: {failure}", output=str(executed)) from None
    return result
