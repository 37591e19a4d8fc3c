"""Docstrings point only at files of this repository: a path from one of its top folders named in a
docstring of the package, the tests or the benchmarks must exist, so a reader who follows it finds
what it promises (a path in another project is written with that project's name in front)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: A path that starts at one of the repository's top folders (or at facts/, which lives outside it).
REPO_PATH = re.compile(r"(?<![\w./<>-])((?:bench|deploy|docs|facts|notebooks|reports|src|tests)/[\w./*<>-]*)")
#: Git-ignored places the runs make: they exist once the run a docstring describes has happened.
RUN_OUTPUT = ("reports/", "tests/artifacts/")


def docstrings(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    nodes = [tree, *(n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef))]
    return [(getattr(n, "lineno", 1), doc) for n in nodes if (doc := ast.get_docstring(n, clean=False))]


def repo_paths(text: str) -> list[str]:
    """The repository paths a docstring names, cut at the first wildcard or placeholder."""
    return [re.split(r"[*<]", m)[0].rstrip(".") for m in REPO_PATH.findall(text)]


def test_paths_named_in_docstrings_exist() -> None:
    missing = [
        f"{path.relative_to(ROOT)}:{line}: {named}"
        for top in ("src", "tests", "bench")
        for path in sorted((ROOT / top).rglob("*.py"))
        for line, doc in docstrings(path)
        for named in repo_paths(doc)
        if not named.startswith(RUN_OUTPUT) and not (ROOT / named).exists()
    ]
    assert missing == []


def test_the_scan_sees_a_missing_file() -> None:
    """The scan can fail: a path outside the repository is reported, one in another project's is not."""
    assert repo_paths("format of facts/conformance-format.md, see docs/snapshot.md.") == [
        "facts/conformance-format.md",
        "docs/snapshot.md",
    ]
    assert repo_paths("dumps in ``util-linux/tests/ts/lscpu/dumps/*.tar.gz``") == []
    assert repo_paths("cases as in tests/conformance/*.jsonl") == ["tests/conformance/"]
    assert not (ROOT / "facts/conformance-format.md").exists()
