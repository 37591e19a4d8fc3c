"""What the runner's fast paths do inside the kernel: the preload imports a notebook's modules (and
the official client's for a live run) without binding a name, and the history stays in memory.
That the fast paths change no report (the preload, a kernel started ahead, side-by-side runs) is
tested on the demo's own runs against papermill's plain run of them, in tests/test_demo.py."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import pytest

from tmnb.cli.run.runner import run


def test_the_kernel_has_the_notebooks_imports_loaded_and_keeps_no_history(tmp_path: Path) -> None:
    """The first cell already sees a module a later cell imports (the preload), no name is bound by
    it, and the kernel's history is in memory (a report's cells stay out of the user's history)."""
    nb = nbformat.v4.new_notebook()
    parameters = nbformat.v4.new_code_cell("")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        parameters,
        nbformat.v4.new_code_cell(
            "import sys\n"
            "print('loaded', 'fractions' in sys.modules, 'fractions' in dir())\n"
            "print('history', get_ipython().history_manager.hist_file)"
        ),
        nbformat.v4.new_code_cell("import fractions"),
    ]
    nbformat.write(nb, tmp_path / "probe.ipynb")
    result = run(tmp_path / "probe.ipynb", out=tmp_path / "out")
    printed = "".join(json.loads(result.notebook.read_text())["cells"][1]["outputs"][0]["text"])
    assert printed == "loaded True False\nhistory :memory:\n"


@pytest.mark.parametrize(
    ("default", "source", "loaded"), [("sample", "live", True), ("sample", "sample", False), ("live", None, True)]
)
def test_a_live_run_has_the_official_client_loaded_before_its_first_cell(
    tmp_path: Path, monkeypatch, default, source, loaded
):  # type: ignore[no-untyped-def]
    """The official client's API classes (about 2 s of imports) are preloaded only for a live source,
    given or the notebook's default (04's), and every module the live preload names exists (the
    preload skips a missing one silently)."""
    import importlib

    from tmnb.cli.run.kernel import LIVE_MODULES

    for name in LIVE_MODULES:
        importlib.import_module(name)
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")  # the probe never reads it
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    parameters = nbformat.v4.new_code_cell(f"source = {default!r}")
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        parameters,
        nbformat.v4.new_code_cell(f"import sys\nprint(all(m in sys.modules for m in {LIVE_MODULES!r}))"),
    ]
    nbformat.write(nb, tmp_path / "probe.ipynb")
    result = run(tmp_path / "probe.ipynb", params={"source": source} if source else {}, out=tmp_path / "out")
    printed = "".join(json.loads(result.notebook.read_text())["cells"][-1]["outputs"][0]["text"])
    assert printed == f"{loaded}\n"
