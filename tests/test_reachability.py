"""No dead code in the package: every public function and class of ``src/tmnb`` is reached.

A public (no leading underscore) top-level function or class counts as reached when its name is
referenced somewhere in the package outside its own definition (a call, an attribute, a decorator,
an annotation, a registry entry: any ``Name`` or ``Attribute`` that reads it, or an ``import ... as``
of it), in a notebook's code cells, in pyproject's entry points, or inside code (a code span or a
fenced block) in README.md or docs/*.md, where public API is documented. A re-export (a bare import
or an ``__all__`` entry) is not a use, and neither is a reference from tests/ or bench/: code only
they reach is dead, and is deleted with its tests, or the tests go through the path users reach.

The check is by name, like a reader's search: two definitions sharing a name are reached together.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "tmnb"

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_FENCED = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)
_SPAN = re.compile(r"`([^`\n]+)`")


@dataclass(frozen=True)
class Definition:
    name: str
    path: Path
    line: int
    end: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.name}"


def definitions(path: Path, tree: ast.Module) -> list[Definition]:
    """The public top-level functions and classes of one module."""
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    return [
        Definition(node.name, path, node.lineno, node.end_lineno or node.lineno)
        for node in tree.body
        if isinstance(node, kinds) and not node.name.startswith("_")
    ]


def uses(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every name ``tree`` reads: names, attributes, the originals of ``import x as y``."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
            found.append((node.lineno, node.attr))
        elif isinstance(node, ast.ImportFrom | ast.Import):
            found += [(node.lineno, alias.name.rpartition(".")[2]) for alias in node.names if alias.asname]
    return found


def notebook_names(paths: Iterable[Path]) -> set[str]:
    """Names the code cells of the notebooks import or read (IPython magics and shell escapes left out)."""
    names: set[str] = set()
    for path in paths:
        cells = json.loads(path.read_text())["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        plain = "\n".join(line for line in code.splitlines() if not line.lstrip().startswith(("%", "!")))
        tree = ast.parse(plain, str(path))
        names |= {name for _, name in uses(tree)}
        names |= {alias.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for alias in n.names}
    return names


def documented_names(paths: Iterable[Path]) -> set[str]:
    """Identifiers written as code in the documents: fenced blocks and inline code spans, not prose."""
    names: set[str] = set()
    for path in paths:
        text = path.read_text()
        code = _FENCED.findall(text)
        names.update(w for block in code for w in _IDENTIFIER.findall(block))
        names.update(w for span in _SPAN.findall(_FENCED.sub("", text)) for w in _IDENTIFIER.findall(span))
    return names


def entry_point_names(pyproject: Path) -> set[str]:
    """The objects pyproject's scripts and entry points name (``module:object.attr``)."""
    project = tomllib.loads(pyproject.read_text()).get("project", {})
    groups = [project.get("scripts", {}), project.get("gui-scripts", {}), *project.get("entry-points", {}).values()]
    return {name for group in groups for target in group.values() for name in target.partition(":")[2].split(".")}


def unreached(package: Path, *, notebooks: Iterable[Path], docs: Iterable[Path], pyproject: Path) -> list[Definition]:
    """The package's public functions and classes that nothing outside tests and benches reaches."""
    modules = {path: ast.parse(path.read_text(), str(path)) for path in sorted(package.rglob("*.py"))}
    used = {path: uses(tree) for path, tree in modules.items()}
    names = {path: {name for _, name in found} for path, found in used.items()}
    outside = notebook_names(notebooks) | documented_names(docs) | entry_point_names(pyproject)
    dead = []
    for path, tree in modules.items():
        for d in definitions(path, tree):
            if d.name in outside or any(d.name in seen for other, seen in names.items() if other != path):
                continue
            if not any(name == d.name and not d.line <= line <= d.end for line, name in used[path]):
                dead.append(d)
    return dead


def test_every_public_function_and_class_is_reached() -> None:
    dead = unreached(
        PACKAGE,
        notebooks=sorted((ROOT / "notebooks").glob("*.ipynb")),
        docs=[ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
        pyproject=ROOT / "pyproject.toml",
    )
    offenders = [str(d).replace(f"{ROOT}/", "") for d in dead]
    for line in offenders:
        print(line)
    assert not offenders, (
        "reached from no module, notebook, entry point or documented API (only tests or bench use them, "
        "or nothing does): delete them, or document them if they are public API:\n  " + "\n  ".join(offenders)
    )


# ---------------------------------------------------------------------------------------------
# The check itself: it finds what is dead, and only that


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _notebook(path: Path, *cells: tuple[str, str]) -> Path:
    doc = {"cells": [{"cell_type": kind, "metadata": {}, "source": source} for kind, source in cells]}
    return _write(path, json.dumps(doc))


def test_a_synthetic_package_shows_each_way_to_be_reached(tmp_path: Path) -> None:
    package = tmp_path / "src" / "pkg"
    _write(package / "__init__.py", "from pkg.a import exported\n\n__all__ = ['exported']\n")
    _write(
        package / "a.py",
        "def called(): ...\n"
        "class Base: ...\n"
        "def by_attribute(): ...\n"
        "def aliased(): ...\n"
        "def registered(): ...\n"
        "REGISTRY = {'r': registered}\n"
        "def from_notebook(): ...\n"
        "def documented(): ...\n"
        "def entry(): ...\n"
        "def exported(): ...\n"
        "def recursive(n):\n    return recursive(n - 1) if n else 0\n"
        "def only_tests(): ...\n"
        "def named_in_prose(): ...\n"
        "def in_a_markdown_cell(): ...\n"
        "def _private(): ...\n",
    )
    _write(
        package / "b.py",
        "import pkg.a as mod\n"
        "from pkg.a import Base, called\n"
        "from pkg.a import aliased as other\n\n"
        "class Child(Base):\n    pass\n\n"
        "def run():\n    called()\n    mod.by_attribute()\n    other()\n    return Child\n",
    )
    _write(tmp_path / "tests" / "test_a.py", "from pkg.a import only_tests\n\nonly_tests()\n")
    notebook = _notebook(
        tmp_path / "notebooks" / "n.ipynb",
        ("code", "%matplotlib inline\nfrom pkg.a import from_notebook\nfrom_notebook()"),
        ("markdown", "`in_a_markdown_cell()` is no call"),
    )
    readme = _write(tmp_path / "README.md", "named_in_prose is a word here.\n\n```python\npkg.a.documented()\n```\n")
    pyproject = _write(tmp_path / "pyproject.toml", '[project.scripts]\npkg = "pkg.a:entry"\n')

    dead = unreached(package, notebooks=[notebook], docs=[readme], pyproject=pyproject)
    assert [d.name for d in dead] == [
        "exported",
        "recursive",
        "only_tests",
        "named_in_prose",
        "in_a_markdown_cell",
        "run",
    ]
    assert str(dead[0]).replace(f"{tmp_path}/", "") == "src/pkg/a.py:10: exported"


def _only_python(folder: str, names: list[str]) -> list[str]:
    """What copytree leaves out: everything but Python sources and their folders."""
    return [n for n in names if n == "__pycache__" or ("." in n and not n.endswith(".py"))]


def test_an_unused_function_added_to_the_package_fails_the_check(tmp_path: Path) -> None:
    package = tmp_path / "tmnb"
    shutil.copytree(PACKAGE, package, ignore=_only_python)
    _write(package / "analysis" / "extra.py", 'def forgotten() -> int:\n    """Nobody calls it."""\n    return 1\n')
    dead = unreached(
        package,
        notebooks=sorted((ROOT / "notebooks").glob("*.ipynb")),
        docs=[ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))],
        pyproject=ROOT / "pyproject.toml",
    )
    assert [(d.path.relative_to(package).as_posix(), d.name) for d in dead] == [("analysis/extra.py", "forgotten")]
