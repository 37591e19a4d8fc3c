"""Type command-line parameter strings against a notebook's ``parameters`` cell.

papermill's ``-p`` guesses types (``007`` becomes 7, ``false`` stays a string); tmnb instead
converts each value to the type the notebook declares, so a scheduled run means what it says.
A ``str`` parameter whose help comment starts with ``a | b | c`` accepts only those values, and
a wrong one is refused here, before any kernel starts.
"""

from __future__ import annotations

import ast
import json
import math
import re
import textwrap
from pathlib import Path
from typing import Any

from tmnb.errors import InputError

_TRUE = {"true", "yes", "on", "1"}
_FALSE = {"false", "no", "off", "0"}
#: ``# drain | restart: ...``: the values a parameter accepts, first thing in its help comment
_CHOICES = re.compile(r"^([\w.-]+(?:\s*\|\s*[\w.-]+)+)(?=$|[:;,.\s])")


def declared_parameters(notebook: Path) -> dict[str, dict[str, Any]]:
    """Names, declared types, defaults and help comments of the single ``parameters`` cell.

    Parsed with ``ast`` because papermill's own inspection silently skips annotations such as
    ``str | None``, which would let a scheduled parameter fall through unnoticed. The notebook is
    read as plain JSON (papermill validates it later): nbformat's import alone costs more than the
    whole answer to a wrong parameter should.
    """
    try:
        nb = json.loads(notebook.read_text(encoding="utf-8"))
        cells = nb["cells"]
        tagged = [c for c in cells if "parameters" in (c.get("metadata") or {}).get("tags", [])]
    except OSError as exc:
        raise InputError(f"cannot read notebook: {exc.strerror}", source=str(notebook)) from None
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"not a Jupyter notebook (nbformat 4 JSON): {exc}", source=str(notebook)) from None
    if len(tagged) != 1:
        raise InputError(f"expected exactly one cell tagged 'parameters', found {len(tagged)}", source=str(notebook))
    raw_source = tagged[0].get("source", "")
    if isinstance(raw_source, list) and all(isinstance(line, str) for line in raw_source):
        raw_source = "".join(raw_source)
    if not isinstance(raw_source, str):
        raise InputError("not a Jupyter notebook: the parameters cell's source is not text", source=str(notebook))
    source = raw_source
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise InputError(
            f"parameters cell is not valid Python: {exc.msg}", source=str(notebook), line=exc.lineno
        ) from None
    lines = source.splitlines()
    declared: dict[str, dict[str, Any]] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            name, kind, value = stmt.target.id, ast.unparse(stmt.annotation), stmt.value
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            name, kind, value = stmt.targets[0].id, "None", stmt.value
        else:
            continue
        comment = lines[stmt.lineno - 1].partition("#")[2].strip()
        declared[name] = {"type": kind, "default": ast.unparse(value), "help": comment}
        choices = _CHOICES.match(comment)
        if choices and kind == "str":
            declared[name]["choices"] = [c.strip() for c in choices.group(1).split("|")]
    return declared


def describe_parameters(notebook: Path, width: int = 100) -> list[str]:
    """What ``tmnb params`` prints: each parameter as ``-p`` takes it, its type, default and allowed
    values, then its help comment, read from the notebook itself so the answer is the one the runner types against."""
    lines = []
    for name, spec in declared_parameters(notebook).items():
        allowed = f"  (one of: {', '.join(spec['choices'])})" if "choices" in spec else ""
        lines.append(f"  {name}: {spec['type']} = {spec['default']}{allowed}")
        lines += textwrap.wrap(spec["help"], width, initial_indent=" " * 6, subsequent_indent=" " * 6)
    return lines


def check_choice(name: str, value: object, declared: dict[str, Any], *, source: str) -> None:
    """Refuse a value outside the ``a | b | c`` list of the parameter's help comment."""
    choices = declared.get("choices")
    if choices and value not in choices:
        raise InputError(
            f"expected one of {', '.join(choices)}; got {value!r}", source=source, where=f"parameter {name}"
        )


def default_value(declared: dict[str, Any] | None) -> Any:
    """A declared parameter's default as a value; None when it is not a literal (``{[]: 1}``, a call)."""
    try:
        return ast.literal_eval((declared or {}).get("default") or "None")
    except (ValueError, SyntaxError, TypeError):
        return None


def coerce(name: str, raw: str, declared: dict[str, Any], *, source: str) -> Any:
    """Convert ``raw`` to the declared type of parameter ``name``."""
    kind = (declared.get("type") or "None").replace(" ", "")
    default = default_value(declared)
    if kind == "None":
        kind = type(default).__name__ if default is not None else "any"
    optional = "None" in kind.split("|") or kind.startswith("Optional[")
    base = kind.removeprefix("Optional[").removesuffix("]").split("|")[0]
    where = f"parameter {name}"
    if optional and raw.strip().lower() in {"none", "null", "~", ""}:
        return None
    if base == "str":
        check_choice(name, raw, declared, source=source)
        return raw
    if base == "bool":
        low = raw.strip().lower()
        if low in _TRUE:
            return True
        if low in _FALSE:
            return False
        raise InputError(f"expected true or false, got {raw!r}", source=source, where=where)
    if base in {"int", "float"}:
        try:
            number = int(raw, 10) if base == "int" else float(raw)
        except ValueError:
            raise InputError(f"expected {base}, got {raw!r}", source=source, where=where) from None
        if not math.isfinite(number):  # nan passes every threshold comparison silently
            raise InputError(f"expected a finite {base}, got {raw!r}", source=source, where=where)
        return number
    from tmnb.parse.parameters import load_parameter  # YAML: only lists, dicts and untyped values need it

    value = load_parameter(raw, where=where)
    expect = {"list": list, "dict": dict}.get(base.split("[")[0].lower())
    if expect is not None and not isinstance(value, expect):
        raise InputError(f"expected a {base} (YAML or JSON), got {raw!r}", source=source, where=where)
    return value


def typed_parameters(notebook: Path, raw: list[tuple[str, str]]) -> dict[str, Any]:
    declared = declared_parameters(notebook)
    typed: dict[str, Any] = {}
    for name, value in raw:
        if name not in declared:
            known = ", ".join(sorted(declared)) or "none"
            raise InputError(f"unknown parameter {name!r}; the notebook declares: {known}", source=str(notebook))
        typed[name] = coerce(name, value, declared[name], source=str(notebook))
    return typed
