"""The runner's fast paths change when work happens, never what a report says: a kernel started
before papermill with the notebook's imports preloaded, the HTML exporter built in the background,
and the demo's side-by-side runs give the same cell outputs as papermill's own plain run of the same
notebook with the same parameters (random table ids and the run folder's path aside)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import papermill as pm
import pytest

from tmnb.report.runner import NOTEBOOKS, run
from tmnb.twin.demo import _side_by_side

NOTEBOOK_PAIR = ("02-numa-occupancy.ipynb", "03-readiness.ipynb")  # figures and tables; both read only the sample
RANDOM_ID = re.compile(r"[0-9a-f]{8}([-_])[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{4}\1[0-9a-f]{12}")


def _outputs(notebook: Path, folder: Path) -> list[str]:
    """Each code cell's outputs as text, with itables' random ids and the run folder made neutral."""
    cells = json.loads(notebook.read_text())["cells"]
    texts = [json.dumps(c.get("outputs", []), sort_keys=True) for c in cells if c["cell_type"] == "code"]
    return [RANDOM_ID.sub("ID", text).replace(str(folder), "RUN") for text in texts]


def _plain(name: str, parameters: dict[str, Any], folder: Path) -> Path:
    folder.mkdir(parents=True)
    target = folder / name
    pm.execute_notebook(
        str(NOTEBOOKS / name),
        str(target),
        parameters={**parameters, "out_dir": str(folder)},
        kernel_name="python3",
        progress_bar=False,
    )
    return target


def test_fast_runs_side_by_side_say_what_plain_papermill_runs_say(tmp_path: Path) -> None:
    fast = _side_by_side([(name, {"source": "sample"}, tmp_path / "fast" / name) for name in NOTEBOOK_PAIR])
    for name, result in zip(NOTEBOOK_PAIR, fast, strict=True):
        assert result.status in ("ok", "alert"), result.message
        plain_folder = tmp_path / "plain" / name
        plain = _plain(name, json.loads(result.manifest.read_text())["parameters"], plain_folder)
        got, expected = _outputs(result.notebook, result.folder), _outputs(plain, plain_folder)
        assert len(got) == len(expected)
        differing = [i for i, (a, b) in enumerate(zip(got, expected, strict=True)) if a != b]
        assert not differing, f"{name}: code cells {differing} differ from papermill's plain run"
    assert any('"image/png"' in text for text in _outputs(fast[0].notebook, fast[0].folder)), "02 draws figures"


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


@pytest.mark.parametrize(("source", "loaded"), [("live", True), ("sample", False)])
def test_a_live_run_has_the_official_client_loaded_before_its_first_cell(tmp_path: Path, monkeypatch, source, loaded):  # type: ignore[no-untyped-def]
    """The official client's API classes (about 2 s of imports) are preloaded only for a live source,
    and every module the live preload names exists (the preload skips a missing one silently)."""
    import importlib

    from tmnb.report.kernel import LIVE_MODULES

    for name in LIVE_MODULES:
        importlib.import_module(name)
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")  # the probe never reads it
    monkeypatch.setenv("KUBECONFIG", str(tmp_path / "kubeconfig"))
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "Python 3"}
    parameters = nbformat.v4.new_code_cell('source = "sample"')
    parameters.metadata["tags"] = ["parameters"]
    nb.cells = [
        parameters,
        nbformat.v4.new_code_cell(f"import sys\nprint(all(m in sys.modules for m in {LIVE_MODULES!r}))"),
    ]
    nbformat.write(nb, tmp_path / "probe.ipynb")
    result = run(tmp_path / "probe.ipynb", params={"source": source}, out=tmp_path / "out")
    printed = "".join(json.loads(result.notebook.read_text())["cells"][-1]["outputs"][0]["text"])
    assert printed == f"{loaded}\n"
