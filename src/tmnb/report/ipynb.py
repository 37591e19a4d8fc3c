"""Notebook files through nbformat, typed.

nbformat ships ``py.typed`` but leaves ``read``, ``write`` and its cell constructors unannotated,
so strict mypy will not let typed code call them; the casts here state, once, the signatures tmnb
relies on. A notebook is nbformat's ``NotebookNode`` (a dict with attribute access, whose
attributes mypy sees as Any). nbformat is imported on first use: its import alone is not cheap.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from nbformat import NotebookNode


def read(path: Path) -> NotebookNode:
    """The notebook at ``path``, as nbformat version 4."""
    import nbformat

    return cast("Callable[..., NotebookNode]", nbformat.read)(path, as_version=4)


def write(nb: NotebookNode, path: Path) -> None:
    import nbformat

    cast("Callable[..., None]", nbformat.write)(nb, path)


def markdown_cell(source: str) -> NotebookNode:
    import nbformat.v4

    return cast("Callable[[str], NotebookNode]", nbformat.v4.new_markdown_cell)(source)


def new_notebook() -> NotebookNode:
    import nbformat.v4

    return cast("Callable[[], NotebookNode]", nbformat.v4.new_notebook)()
