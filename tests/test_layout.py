"""The package's rooms stand on floors: each imports only rooms below it, function-local imports
included, so "dependencies point downward" (docs/architecture.md) is a contract, not a hope.

A newcomer finds the command line and the run machinery in ``tmnb/cli/``, the page toolkit in
``tmnb/report/`` and everything that stands in for a real fleet in ``tmnb/twin/``; the product's
rooms reach into the twin only where a user asks for it by name (the demo, the sandbox).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).parents[1] / "src" / "tmnb"

#: What the package holds beside its rooms.
NOT_ROOMS = {"__init__.py", "py.typed", "templates", "__pycache__"}

#: The rooms from the ground up: a room may import the rooms before it in this list, never one after.
FLOORS = (
    "errors",
    "progress",
    "collector",
    "redact",
    "cpuset",
    "versions",
    "parse",
    "evidence",
    "report",
    "kubelet",
    "conformance",
    "snapshot",
    "settings",
    "replay",
    "metrics",
    "sources",
    "analysis",
    "plots",
    "rollout",
    "postmortem",
    "twin",
    "cli",
)

#: Product modules that import the twin, and why: each is a user asking for the twin by name.
TWIN_DOORS = {
    "tmnb.cli.demo": "tmnb demo runs the whole pipeline on the twin",
    "tmnb.cli.sandbox": "tmnb sandbox serves the twin's simulated cluster",
}

#: Imports of a room above the importing one, and why: each keeps a published name working.
UP_DOORS = {
    "tmnb.kubelet.conformance -> tmnb.conformance.runner": (
        "python -m tmnb.kubelet.conformance is the published command; the runner is the room above the model"
    ),
}

#: Modules that import tmnb modules inside functions, and why. Every other import of a tmnb module
#: stands at the top of its module, where a reader (and the floor check) sees it first.
LAZY = {
    "tmnb.cli.demo": "each stage loads its room when it starts: the demo announces itself at once",
    "tmnb.cli.check": "a refused argument is answered before pandas or the kubelet model loads",
    "tmnb.cli.evidence": "a refused argument is answered before the evidence and run machinery load",
    "tmnb.cli.reports": "a refused argument is answered before the runner, papermill or a snapshot loads",
    "tmnb.cli.rollout": "a refused argument is answered before the kubelet model or the client loads",
    "tmnb.cli.sandbox": "a refused argument is answered before the twin loads",
    "tmnb.cli.whatif": "a refused argument is answered before pandas or the kubelet model loads",
    "tmnb.cli.run.checks": "a parameter check loads only what that check needs: the runner answers within a second",
    "tmnb.cli.run.params": "YAML loads only for a parameter that needs it (lists, mappings, untyped values)",
    "tmnb.cli.run.runner": "nbconvert's HTML exporter (a second of imports) loads after papermill, in the background",
    "tmnb.sources.resolve": "checking a source's name loads no snapshot model, client or collector",
    "tmnb.sources.node_files": "a transport loads only when chosen (ssh, the node pod's client)",
    "tmnb.settings.target": "the target's field names are checked before the kubelet model loads",
    "tmnb.rollout.executors": "an executor loads only when chosen (the official client, ssh)",
    "tmnb.rollout.session": "04's parameters are checked before the plan's analysis loads",
    "tmnb.rollout.plan": "the what-if loads only where the plan predicts a node (a plan from settings alone does not)",
    "tmnb.rollout.steps": "the what-if and the snapshot writer load only at the steps that use them",
    "tmnb.rollout.soak": "pandas and the metrics load only when a soak has a Prometheus to ask",
    "tmnb.rollout.apply": "the YAML editor loads only when a change is written",
    "tmnb.rollout.arguments": "the selector's parser loads only when a selector is given",
    "tmnb.rollout.journal": "the state folder's place is looked up only when a command is printed",
    "tmnb.postmortem.report": "each of 06's sections loads its room when its cell runs",
    "tmnb.kubelet.conformance": "the published command loads the runner above the model only when it runs",
    "tmnb.twin.sample.fleet": "pandas loads only when the comparison's metrics are written",
    "tmnb.twin.sandbox.process": "the generator loads only for a generated fleet, the snapshot model only for a file",
}


def _module(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _local_imports(path: Path) -> set[str]:
    """The tmnb modules imported inside a function (or method) of the file."""
    found = set()
    for function in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            found |= {m for m in _imports_in(function) if m == "tmnb" or m.startswith("tmnb.")}
    return found


def _imports_in(tree: ast.AST) -> set[str]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _room(module: str) -> str | None:
    """The room of a tmnb module (``tmnb.kubelet.profiles`` -> ``kubelet``); None for ``tmnb`` itself."""
    parts = module.split(".")
    return parts[1] if parts[0] == "tmnb" and len(parts) > 1 else None


def upward_imports(package: Path) -> list[str]:
    """Every import of a room above the importing one, as ``module -> imported``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = _module(path, package)
        here = _room(module)
        if here is None:
            continue
        for imported in sorted(_imports(path)):
            there = _room(imported)
            if there is not None and there != here and FLOORS.index(there) > FLOORS.index(here):
                found.append(f"{module} -> {imported}")
    return found


def test_every_room_has_a_floor():
    rooms = {p.name.removesuffix(".py") for p in PACKAGE.iterdir() if p.name not in NOT_ROOMS}
    assert rooms == set(FLOORS), f"unexpected: {sorted(rooms - set(FLOORS))}, missing: {sorted(set(FLOORS) - rooms)}"
    assert not list(PACKAGE.glob("cli_*.py"))


def test_rooms_import_only_rooms_below_them():
    assert upward_imports(PACKAGE) == list(UP_DOORS)


def test_the_floor_check_sees_an_upward_import(tmp_path: Path):
    """The check itself can fail: a kubelet module that reaches up into the analysis is found,
    inside a function too."""
    room = tmp_path / "tmnb" / "kubelet"
    room.mkdir(parents=True)
    (room / "probe.py").write_text("def f():\n    from tmnb.analysis.lint import RULES\n")
    assert upward_imports(tmp_path / "tmnb") == ["tmnb.kubelet.probe -> tmnb.analysis.lint"]


def test_function_local_imports_of_tmnb_say_why():
    lazy = {_module(p) for p in PACKAGE.rglob("*.py") if _local_imports(p)}
    assert lazy == set(LAZY), f"unexplained: {sorted(lazy - set(LAZY))}, no longer lazy: {sorted(set(LAZY) - lazy)}"


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
