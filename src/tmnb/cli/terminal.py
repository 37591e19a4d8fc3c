"""Text for a person at a terminal, in kubectl's manner: tables of left-aligned columns under
upper-case headers, three blanks apart, without trailing blanks, and prose in wrapped paragraphs.

The default output fits ``WIDTH`` columns whatever the terminal, so a pipe, a log and a terminal get
the same bytes (kubectl's output does not follow the terminal either): a cell too long for its
column is cut with ``…`` (elastic columns first, the widest first), and ``-o wide`` (``width=None``)
prints every cell whole.
"""

from __future__ import annotations

import re
import textwrap
import unicodedata
from collections.abc import Collection, Iterable, Sequence

WIDTH = 120
GAP = "   "
CUT = "…"
#: A wrapped column keeps at least this many columns, so its lines stay readable.
WRAPPED_FLOOR = 24


def columns(text: str) -> int:
    """The terminal columns ``text`` takes: East Asian wide characters two, combining marks none."""
    if text.isascii():
        return len(text)
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def clip(text: str, width: int) -> str:
    """``text`` in at most ``width`` columns, ending in ``…`` where it was cut."""
    if columns(text) <= width:
        return text
    kept, used = [], 0
    for c in text:
        used += columns(c)
        if used > width - 1:
            break
        kept.append(c)
    return "".join(kept).rstrip() + CUT


def header(name: str) -> str:
    """A column name as kubectl writes headers: its words upper-cased, units and sizes as written
    (``headroom 4 CPU/8Gi`` is ``HEADROOM 4 CPU/8Gi``)."""
    return " ".join(w if any(c.isdigit() or c.isupper() for c in w) else w.upper() for w in name.split(" "))


def table(
    names: Sequence[str],
    rows: Iterable[Sequence[str]],
    *,
    width: int | None = WIDTH,
    elastic: Collection[str] = (),
    wrapped: str | None = None,
) -> list[str]:
    """The lines of a table of ``rows`` under ``names``; a cell's line breaks and tabs are blanks, so
    a row stays one line (grep finds it), except that the last column, when it is ``wrapped``, goes on
    in the lines below (a note is read whole, not cut). Within ``width`` columns when given: the
    ``elastic`` columns (and the wrapped one, down to ``WRAPPED_FLOOR``) give way first, then the
    others, never below their header's width."""
    heads = [header(n) for n in names]
    cells = [[" ".join(str(c).split()) for c in row] for row in rows]
    natural = [max([columns(h), *(columns(r[i]) for r in cells)]) for i, h in enumerate(heads)]
    last = len(names) - 1 if wrapped is not None and names[-1] == wrapped else None
    floors = [
        min(w, WRAPPED_FLOOR if i == last else columns(h)) for i, (w, h) in enumerate(zip(natural, heads, strict=True))
    ]
    give = [n in elastic or i == last for i, n in enumerate(names)]
    widths = natural if width is None else _fitted(natural, floors, give, width)
    lines = []
    for row in [heads, *cells]:
        tail = textwrap.wrap(row[-1], widths[-1]) if last is not None and columns(row[-1]) > widths[-1] else [row[-1]]
        shown = [*row[:-1], tail[0]]
        line = GAP.join(
            cell + " " * (w - columns(cell)) for cell, w in zip(map(clip, shown, widths), widths, strict=True)
        )
        lines.append(line.rstrip())
        indent = " " * (sum(widths[:-1]) + len(GAP) * (len(widths) - 1))
        lines += [indent + more for more in tail[1:]]
    return lines


def _fitted(natural: list[int], floors: list[int], give: list[bool], width: int) -> list[int]:
    """Column widths within ``width``: the widest column gives a column at a time, those that ``give``
    first, none below its floor."""
    widths = list(natural)
    excess = sum(widths) + len(GAP) * (len(widths) - 1) - width
    for group in ([i for i, g in enumerate(give) if g], list(range(len(widths)))):
        while excess > 0:
            wide = [i for i in group if widths[i] > floors[i]]
            if not wide:
                break
            i = max(wide, key=lambda i: widths[i])
            widths[i] -= 1
            excess -= 1
    return widths


def wrap(text: str, width: int | None = WIDTH, *, first: str = "", then: str = "  ") -> list[str]:
    """A paragraph as lines of at most ``width`` columns (None: one line), the first starting with
    ``first``, the others with ``then``. Words are never broken, and a command in backticks is one word,
    so a path or a command stays whole to copy (and can be longer than the line)."""
    if width is None:
        return [f"{first}{text}".rstrip()]
    whole = _COMMAND.sub(lambda m: m[0].replace(" ", _KEPT), text)
    lines = textwrap.wrap(
        whole, width, initial_indent=first, subsequent_indent=then, break_long_words=False, break_on_hyphens=False
    )
    return [line.replace(_KEPT, " ") for line in lines] or [first.rstrip()]


#: A command in backticks, and what stands for its blanks while a paragraph is wrapped.
_COMMAND = re.compile(r"`[^`\n]+`")
_KEPT = "\0"
