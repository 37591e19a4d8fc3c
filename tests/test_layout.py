"""The package's top level reads as the product's data flow, with the rehearsal twin beside it.

A newcomer finds the command line in ``tmnb/cli/``, the report helpers in ``tmnb/report/`` and
everything that stands in for a real fleet in ``tmnb/twin/``; the product's rooms reach into the
twin only where a user asks for it by name (the demo, the sandbox, the embedded sample's metrics).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "tmnb"

TOP_LEVEL = {
    # modules
    "__init__.py",
    "py.typed",
    "errors.py",
    "cpuset.py",
    "versions.py",
    "redact.py",
    "progress.py",
    "evidence.py",
    # rooms, in the order data flows
    "sources",
    "snapshot",
    "parse",
    "settings",
    "replay",
    "kubelet",
    "analysis",
    "metrics",
    "plots",
    "report",
    "rollout",
    "postmortem",
    "cli",
    "twin",
    "templates",
}

#: Product modules that import the twin, and why: each is a user asking for the twin by name.
TWIN_DOORS = {
    "tmnb.cli.reports": "tmnb demo runs the whole pipeline on the twin",
    "tmnb.cli.sandbox": "tmnb sandbox serves the twin's simulated cluster",
    "tmnb.analysis.compare.report": "05 on the embedded sample pair compares the sample's rehearsal metrics",
}


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def test_top_level_is_the_product_and_the_twin():
    names = {p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"}
    assert names == TOP_LEVEL, f"unexpected: {sorted(names - TOP_LEVEL)}, missing: {sorted(TOP_LEVEL - names)}"
    assert not list(PACKAGE.glob("cli_*.py"))


def test_product_rooms_reach_the_twin_only_through_named_doors():
    reaching = {}
    for path in PACKAGE.rglob("*.py"):
        module = _module(path)
        if module.startswith("tmnb.twin"):
            continue
        twin = sorted(m for m in _imports(path) if m == "tmnb.twin" or m.startswith("tmnb.twin."))
        if twin:
            reaching[module] = twin
    assert set(reaching) == set(TWIN_DOORS), reaching


def test_the_twin_check_sees_an_import(tmp_path: Path):
    """The import walk itself can fail: a module that imports the twin is found."""
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    from tmnb.twin.sandbox import Sandbox\n")
    assert _imports(probe) == {"tmnb.twin.sandbox"}
