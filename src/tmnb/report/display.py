"""Showing things in a notebook: IPython's display calls, typed.

IPython ships ``py.typed`` but leaves ``display`` and its display classes unannotated, so strict
mypy will not let typed code call them; the casts here state, once, the signatures tmnb relies on.
IPython is imported on first use: the command line never pays for it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import cast


def show(obj: object, *, raw: bool = False) -> None:
    """Display ``obj`` (anything with a ``_repr_*_`` method; with ``raw``, a MIME bundle)."""
    from IPython.display import display

    cast("Callable[..., None]", display)(obj, raw=raw)


def markdown(text: str) -> None:
    from IPython.display import Markdown

    show(cast("Callable[[str], object]", Markdown)(text))


def html(text: str) -> None:
    from IPython.display import HTML

    show(cast("Callable[[str], object]", HTML)(text))


def image(path: Path) -> None:
    """Display the PNG at ``path`` (embedded in the notebook, so the report keeps it)."""
    from IPython.display import Image

    show(cast("Callable[..., object]", Image)(filename=str(path)))
