"""Build throwaway notebooks for runner tests (one parameters cell, then the given code cells)."""

from __future__ import annotations

from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_notebook


def write_notebook(path: Path, parameters: str, *cells: str) -> Path:
    params = new_code_cell(parameters)
    params.metadata["tags"] = ["parameters"]
    nb = new_notebook(
        cells=[params, *(new_code_cell(c) for c in cells)],
        metadata={"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}},
    )
    nbformat.write(nb, path)
    return path
