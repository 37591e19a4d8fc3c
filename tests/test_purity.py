"""The pure layers stay pure: importing them loads no report, plotting, network or notebook stack.

Each package is imported in a fresh interpreter, so nothing another test imported can hide or
fake a heavy dependency; the check reads that interpreter's ``sys.modules``. The write path
(``rollout/``) keeps the notebook stack to one module, read from the source, since its imports are
made on first use.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

PURE = ("tmnb.kubelet", "tmnb.parse", "tmnb.replay")
FORBIDDEN = ("pandas", "matplotlib", "httpx", "IPython", "kubernetes.client")

_PROBE = """
import importlib, json, sys
importlib.import_module(sys.argv[1])
print(json.dumps({"loaded": sys.argv[1] in sys.modules,
                  "forbidden": sorted(m for m in sys.argv[2:] if m in sys.modules)}))
"""


def _probe(package: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, package, *FORBIDDEN], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout)


@pytest.mark.parametrize("package", PURE)
def test_pure_package_imports_no_heavy_stack(package):
    got = _probe(package)
    assert got["loaded"] is True
    assert got["forbidden"] == [], f"importing {package} loads {got['forbidden']}"


def test_probe_sees_a_forbidden_import():
    """The probe itself can fail: the plots are drawn with matplotlib from pandas frames."""
    assert {"pandas", "matplotlib"} <= set(_probe("tmnb.plots")["forbidden"])


ROLLOUT = Path(__file__).parents[1] / "src" / "tmnb" / "rollout"
NOTEBOOK_STACK = ("IPython", "ipywidgets")
#: The one module of rollout/ that imports the notebook stack: what a person at 04-rollout sees and clicks.
ROLLOUT_UI = "widgets.py"


def _notebook_imports(path: Path) -> list[str]:
    """The notebook-stack modules ``path`` imports anywhere: at the top, in a function, for type checking."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        found += [n for n in names if n.split(".")[0] in NOTEBOOK_STACK]
    return found


def test_rollout_imports_the_notebook_stack_in_its_ui_module_alone():
    found = {p.relative_to(ROLLOUT).as_posix(): _notebook_imports(p) for p in sorted(ROLLOUT.rglob("*.py"))}
    assert {module for module, names in found.items() if names} == {ROLLOUT_UI}, found


def test_the_import_scan_sees_a_function_local_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    import ipywidgets as w\n    from IPython.display import display\n    import json\n")
    assert _notebook_imports(probe) == ["ipywidgets", "IPython.display"]
