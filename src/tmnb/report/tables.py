"""Tables as a person reads them: plain-language cells, every row in the HTML, a CSV beside it.

The reports are read in a browser by SREs who act on them, so a cell shows what a person would
write (``0,1``, ``30 CPUs``, ``128 GiB``, an empty cell rather than ``None``/``<NA>``/``nan``),
long texts are never cut, long tables can be sorted, filtered and searched but are paged only when
huge, so the browser's find sees every row (itables, with its JavaScript embedded in the report so
it opens offline), and each table is also written as ``tables/<name>.csv`` in the run folder, its
numbers as numbers with units in the headers. A table without rows is a sentence saying why.
"""

from __future__ import annotations

import math
import numbers
import re
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import pandas as pd

from tmnb.cpuset import CPUSet
from tmnb.report import display
from tmnb.report.places import anchored

GIB = float(1 << 30)
#: Tables up to this many rows are shown without search controls.
SHORT = 15
#: Tables up to this many rows are shown whole on one page (the browser's find sees every row); only a
#: larger one is paged, and its search box still covers every row.
HUGE = 1000
#: A column whose longest cell is longer than this is prose: wrapped within a bounded width.
TEXT = 40
#: What an absent value means, by column name, where "empty" would hide a fact.
ABSENT_WORDS = {"numa": "any", "cpuset": "shared pool"}

_initialised = False


def _number(x: float) -> str:
    """Fixed-point, never scientific: integers as integers, others with at most 2 decimals."""
    if float(x).is_integer():
        return f"{int(x):,}"
    return f"{x:,.2f}".rstrip("0").rstrip(".")


def counted(n: int, noun: str, plural: str = "") -> str:
    """``1 node``, ``3 nodes``: a count with its noun in the number it takes (``plural``: an irregular one)."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def some(items: Sequence[str], shown: int, sep: str = ", ") -> str:
    """The first ``shown`` items and how many more: a cell that stays short at a fleet's size."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return sep.join(items[:shown]) + more


def quantity(x: Any, unit: str) -> str:
    """``30 CPUs``, ``1 CPU``, ``128 GiB``, ``512 MiB``, ``45 %``; empty when absent. ``x`` is a
    table's cell (Any: a number of any kind pandas holds, numpy's included, or a missing value)."""
    if _absent(x):
        return ""
    x = float(x)
    if unit == "CPUs":
        return f"{_number(x)} CPU" + ("" if x == 1 else "s")
    if unit == "bytes":
        for size, name in ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if abs(x) >= size:
                return f"{_number(round(x / size, 1))} {name}"
        return f"{_number(x)} B"
    if unit == "GiB":
        return quantity(x * GIB, "bytes")
    if unit == "share":
        return quantity(100 * x, "%")
    if unit == "%":
        return f"{_number(round(x, 1))} %"
    return f"{_number(x)} {unit.removesuffix('s') if x == 1 else unit}"


def moment(value: datetime) -> str:
    """A time to the millisecond, in UTC: ``2026-12-03 08:03:18.535`` (no offset, no microseconds)."""
    stamp = pd.Timestamp(value)
    stamp = stamp.tz_convert("UTC") if stamp.tzinfo else stamp
    text = stamp.strftime("%Y-%m-%d %H:%M:%S")
    return f"{text}.{stamp.microsecond // 1000:03d}" if stamp.microsecond else text


def _absent(value: object) -> bool:
    if value is None or value is pd.NA or value is pd.NaT:
        return True
    return isinstance(value, float) and math.isnan(value)


def _is_cpu_column(column: str) -> bool:
    return bool(re.search(r"cpuset|cpus?\b|cpu list", column, re.IGNORECASE))


#: Texts that mean "no value" when a cell holds them.
_EMPTY_TEXTS = frozenset({"None", "<NA>", "nan", "NaN", "{}", "[]"})


def cell(value: object, column: str = "") -> str:
    """One value as text: lists ``0,1`` (cpu-lists for CPU columns), mappings ``key: value``."""
    if type(value) is str:  # most cells, and a fleet's tables have millions: the text itself, at once
        return ABSENT_WORDS.get(column, "") if value in _EMPTY_TEXTS else value
    if _absent(value):
        return ABSENT_WORDS.get(column, "")
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, datetime):
        return moment(value)
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    if isinstance(value, float):
        return _number(value)
    if isinstance(value, Mapping):
        if not value:
            return ""
        parts = {str(k): cell(v, column) for k, v in value.items()}
        if len(set(parts.values())) == 1 and column in ABSENT_WORDS:
            return next(iter(parts.values()))
        return "; ".join(f"{k}: {v}" for k, v in parts.items())
    if isinstance(value, Iterable) and not isinstance(value, str | bytes):
        items = list(value)
        if not items:
            return ABSENT_WORDS.get(column, "")
        if all(isinstance(i, int) and not isinstance(i, bool) for i in items):
            return str(CPUSet(items)) if _is_cpu_column(column) else ",".join(str(i) for i in sorted(items))
        return ", ".join(cell(i, column) for i in items)
    text = str(value)
    return ABSENT_WORDS.get(column, "") if text in _EMPTY_TEXTS else text


def humanize(frame: pd.DataFrame, units: Mapping[str, str] | None = None) -> pd.DataFrame:
    """Every cell as text; ``units`` maps numeric columns to a unit, or to ``"unit"`` for a
    frame whose own ``unit`` column names each row's unit (then that column is dropped)."""
    out, units = _framed(frame, units)
    per_row = [c for c, u in units.items() if u == "unit"]
    for column in out.columns:
        if column in per_row:
            out[column] = [quantity(v, _row_unit(u)) for v, u in zip(out[column], out["unit"], strict=True)]
        elif column in units:
            out[column] = [quantity(v, units[column]) for v in out[column]]
        else:
            out[column] = [cell(v, column) for v in out[column]]
    if per_row:
        out = out.drop(columns="unit")
    return out.rename(columns={c: c.removesuffix("_gib") for c in out.columns}).astype(object)


def _framed(frame: pd.DataFrame, given: Mapping[str, str] | None) -> tuple[pd.DataFrame, dict[str, str]]:
    """The frame with a named index as columns (an unnamed one is row order, not data: dropped) and
    the unit of each numeric column, from ``given`` and the column names."""
    units = dict(given or {})
    out = frame.copy()
    if not isinstance(out.index, pd.RangeIndex):
        out = out.reset_index(drop=all(n is None for n in out.index.names))
    out.columns = [str(c) for c in out.columns]
    for column in out.columns:
        if column.endswith("_gib"):
            units.setdefault(column, "GiB")
        elif column == "fraction" or column.endswith(" fraction"):
            units.setdefault(column, "share")
    if "unit" in out.columns:  # numeric columns of a frame with a unit per row are quantities in it
        for column in out.columns:
            if column != "unit" and pd.api.types.is_float_dtype(out[column]):
                units.setdefault(column, "unit")
    return out, units


def csv_rows(
    frame: pd.DataFrame, units: Mapping[str, str] | None = None, *, text: pd.DataFrame | None = None
) -> pd.DataFrame:
    """The table for a program: numbers stay numbers (no thousands separators, no unit in the cell),
    each quantity column names its unit in its header (``capacity (CPUs)``, ``fraction (%)``), a frame
    with a unit per row keeps its ``unit`` column; other cells read as in the report. ``text``: the
    frame's ``humanize`` when made already, whose columns without a number are these cells (a fleet's
    admission table has a million)."""
    out, units = _framed(frame, units)
    headers = {"share": "%", "bytes": "bytes"}
    renamed: dict[str, str] = {}
    for column in out.columns:
        unit = units.get(column)
        if unit is None and text is not None and column in text.columns and not _has_number(out[column]):
            out[column] = text[column].to_numpy()
            continue
        if unit is None or unit == "unit":
            out[column] = [cell(v, column) if type(v) is str or not _is_number(v) else v for v in out[column]]
            continue
        scale = 100.0 if unit == "share" else 1.0
        out[column] = [round(float(v) * scale, 6) if _is_number(v) else cell(v, column) for v in out[column]]
        renamed[column] = f"{column.removesuffix('_gib')} ({headers.get(unit, unit)})"
    return out.rename(columns=renamed)


def _has_number(column: pd.Series) -> bool:
    return not isinstance(column.dtype, pd.StringDtype) and any(map(_is_number, column))


def _is_number(value: object) -> bool:
    if isinstance(value, bool):  # a bool is an int to Python, a yes/no to a reader
        return False
    return isinstance(value, numbers.Real) and not _absent(value)


def _row_unit(unit: object) -> str:
    return {"cpus": "CPUs", "cpu": "CPUs"}.get(str(unit), str(unit))


def write_csv(frame: pd.DataFrame, out_dir: str | Path, name: str) -> Path:
    """The table's rows (``csv_rows``: what a program reads) as ``tables/<name>.csv`` in the run folder."""
    path = anchored(out_dir) / "tables" / f"{re.sub(r'[^A-Za-z0-9_.-]+', '_', name)}.csv"
    path.parent.mkdir(parents=True, exist_ok=True)
    frame.to_csv(path, index=False)
    return path


def _init() -> None:
    """Embed the DataTables bundle once per kernel, so the HTML report needs no network."""
    global _initialised
    if not _initialised:
        from itables import init_notebook_mode, javascript, options

        # itables shows its init script before the bundle that script awaits; a live JupyterLab runs
        # them in that order and fails ("Cannot destructure property 'set_or_remove_dark_class'").
        # The bundle shown first makes the init find it (the repeat it shows itself is harmless).
        display.html(javascript.generate_init_offline_itables_html(options.dt_bundle))
        init_notebook_mode(all_interactive=False, connected=False)
        _initialised = True


#: Cells wrap; prose columns get a bounded width (breaking between words, a word only when it alone
#: is wider than the column), names (a node, a
#: policy: one short word) never break, the footer's filter boxes shrink with their column, and the
#: headers break between the words of a camelCase setting name, so a wide table still fits the page
#: instead of hiding its last, most explanatory columns off the right edge.
_CSS = (
    ".tmnb-table td{white-space:normal;overflow-wrap:break-word;vertical-align:top}"
    ".tmnb-table td.tmnb-text{overflow-wrap:break-word;word-break:normal;min-width:12em;max-width:32em}"
    ".tmnb-table td.tmnb-name{white-space:nowrap}"
    ".tmnb-table tfoot input{width:100%;min-width:2em;box-sizing:border-box}"
    ".tmnb-table thead th{white-space:normal;overflow-wrap:normal}"
)
#: A column whose cells are all single words no longer than this holds names: kept on one line.
NAME = 20
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


def _header(column: str) -> str:
    """A header as displayed: a zero-width space between camelCase words, where it may break."""
    return _CAMEL.sub("\u200b", str(column))


_SPACE = re.compile(r"\s")  # the characters str.isspace calls whitespace, no other


def _is_name_column(cells: pd.Series) -> bool:
    return all(len(c) <= NAME and not _SPACE.search(c) for c in cells)


def show(
    frame: pd.DataFrame,
    name: str,
    out_dir: str | Path,
    *,
    empty: str,
    units: Mapping[str, str] | None = None,
    caption: str = "",
) -> None:
    """Display ``frame`` for a person and write its CSV; ``empty`` is the sentence shown instead of
    a table without rows (say what was looked for and why nothing matched)."""
    if frame.empty:
        display.markdown(f"_{empty}_")
        return
    table = humanize(frame, units)
    path = write_csv(csv_rows(frame, units, text=table), out_dir, name)
    _init()
    from itables import show as itable

    long, paged = len(table) > SHORT, len(table) > HUGE
    prose = [i for i, c in enumerate(table.columns) if table[c].map(len).max() > TEXT]
    names = [i for i, c in enumerate(table.columns) if i not in prose and _is_name_column(table[c])]
    layout = (
        {"topStart": "pageLength" if paged else None, "topEnd": "search", "bottomStart": "info", "bottomEnd": "paging"}
        if long
        else {"topStart": None, "topEnd": None, "bottomStart": "info", "bottomEnd": None}
    )
    itable(
        table.rename(columns=_header),
        maxBytes=0,
        maxColumns=0,
        showIndex=False,
        paging=paged,
        pageLength=100,
        lengthMenu=[100, 500, -1],
        layout=layout,
        order=[],
        classes="display compact cell-border tmnb-table",
        style="table-layout:auto;width:100%;margin:0;caption-side:bottom",
        columnDefs=[
            {"className": "dt-left", "targets": "_all"},
            {"className": "tmnb-text", "targets": prose},
            {"className": "tmnb-name", "targets": names},
        ],
        css=_CSS,
        caption=caption or None,
        column_filters="footer" if long else False,
        scrollX=True,
    )
    display.html(
        f'<p class="tmnb-csv"><small>All {len(table)} rows as CSV: <a href="{path.parent.name}/'
        f'{path.name}">{path.parent.name}/{path.name}</a></small></p>'
    )
