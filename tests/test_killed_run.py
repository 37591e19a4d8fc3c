"""A run killed mid-way leaves a notebook Jupyter reads, with the outputs of the cells that finished
(papermill saves it as each cell starts and ends), and its kernel does not outlive it; a notebook
saved without kernel metadata runs on the runner's python kernel."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import nbformat
import pytest

from notebook_factory import write_notebook
from tmnb.cli.run.runner import run

pytestmark = pytest.mark.notebook


def test_a_run_killed_mid_way_leaves_the_finished_cells_readable(tmp_path: Path) -> None:
    notebook = write_notebook(
        tmp_path / "slow.ipynb",
        'out_dir = "."',
        "import os\nprint('first cell done', os.getpid())",
        "import time\ntime.sleep(60)",
    )
    folder = tmp_path / "run"
    runner = subprocess.Popen(
        [sys.executable, "-m", "tmnb.cli", "run", str(notebook), "--out", str(folder)], start_new_session=True
    )
    executed = folder / "slow.ipynb"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not (_outputs(executed) and _last_status(executed) == "running"):
        time.sleep(0.2)
    runner.send_signal(signal.SIGKILL)
    runner.wait()
    nb = nbformat.read(executed, as_version=4)  # validates against the notebook schema
    printing, sleeping = nb.cells[-2:]
    words, kernel = printing.outputs[0]["text"].rsplit(" ", 1)
    assert words == "first cell done"
    assert sleeping.metadata.papermill["status"] == "running"
    deadline = time.monotonic() + 30  # ipykernel looks for its parent every second
    while time.monotonic() < deadline and _running(int(kernel)):
        time.sleep(0.2)
    assert not _running(int(kernel)), "the kernel outlived the run that started it"


def _running(pid: int) -> bool:
    """The process exists and has not exited (a zombie waits only for its reaper)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _last_status(executed: Path) -> str:
    """papermill's status of the last cell as saved so far: it saves the first cell's outputs and the
    next cell's start in two writes, and a kill between them would find the sleeping cell pending."""
    try:
        return str(json.loads(executed.read_text())["cells"][-1]["metadata"]["papermill"]["status"])
    except (OSError, ValueError, KeyError):
        return ""


def _outputs(executed: Path) -> list[object]:
    """The outputs of the cell before the last as saved so far (none while the file is not there)."""
    try:
        return list(json.loads(executed.read_text())["cells"][-2]["outputs"])
    except (OSError, ValueError):
        return []


def test_a_notebook_saved_without_kernel_metadata_runs_on_the_python_kernel(tmp_path: Path) -> None:
    parameters = nbformat.v4.new_code_cell("factor = 6", metadata={"tags": ["parameters"]})
    bare = nbformat.v4.new_notebook(cells=[parameters, nbformat.v4.new_code_cell("print(factor * 7)")])
    nbformat.write(bare, tmp_path / "bare.ipynb")  # no kernelspec, no language_info
    result = run(tmp_path / "bare.ipynb", out=tmp_path / "run")
    assert json.loads(result.notebook.read_text())["cells"][-1]["outputs"][0]["text"] == ["42\n"]
