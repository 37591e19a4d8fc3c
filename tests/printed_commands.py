"""What a printed ``tmnb`` command must be, checked with the real parts: the words ``shlex.split``
makes of it, the ``tmnb`` command's own argparse parser, ``tmnb run``'s notebook lookup and its typing
of ``-p`` values against the notebook's parameters cell, and a target's fields as the kubelet decodes
them (``settings.target``).

Used on every command the executed notebooks show (test_notebooks.py on the sample, test_demo.py on
the demo's runs) and on the commands a unit builds (test_commands.py)."""

from __future__ import annotations

import contextlib
import html
import io
import re
import shlex
from pathlib import Path
from typing import Any

import nbformat

from tmnb.cli.main import _parser
from tmnb.cli.run.params import declared_parameters, typed_parameters
from tmnb.cli.run.runner import find_notebook
from tmnb.errors import InputError, TmnbError
from tmnb.settings.target import check_target_fields

#: a command shown as code: backticked in markdown, a line of a fenced block, an HTML <code> or <pre>
_SPAN = re.compile(r"`(tmnb [^`\n]+)`")
_FENCED = re.compile(r"^```\n(.*?)^```", re.M | re.S)
_CODE = re.compile(r"<code>(tmnb .*?)</code>", re.S)
_PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.S)
#: the Python type a notebook's declared parameter type stands for
_TYPES: dict[str, type | tuple[type, ...]] = {"str": str, "bool": bool, "int": int, "float": (int, float)}
_TYPES |= {"list": list, "dict": dict}
#: arguments (as argparse names them) that are files or folders: absolute, so the command runs anywhere
_PATHS = ("out", "reports_dir", "state_dir", "run_dir", "to", "kubeconfig", "bundle", "run_dirs")
#: notebook parameters that name a file or folder (unless a word: sample, live, auto, an RFC 3339 time)
_PATH_PARAMETERS = ("source", "before", "after", "evidence", "change", "metrics_file", "state_dir", "out_dir")


def commands_in(text: str) -> list[str]:
    """The ``tmnb`` commands a text shows as code (markdown or HTML), each once, in order."""
    found = _SPAN.findall(text) + _CODE.findall(text)
    blocks = _FENCED.findall(text) + _PRE.findall(text)
    found += [line.strip() for block in blocks for line in block.splitlines() if line.strip().startswith("tmnb ")]
    return list(dict.fromkeys(html.unescape(c) for c in found))


def printed_commands(notebook: Path) -> list[str]:
    """Every ``tmnb`` command an executed notebook's outputs show (streams, markdown, HTML, plain text)."""
    texts: list[str] = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text", ""))
            data = output.get("data", {})
            texts += [data.get(kind, "") for kind in ("text/markdown", "text/html", "text/plain")]
    return list(dict.fromkeys(c for text in texts if text for c in commands_in(text)))


def _parse(argv: list[str]) -> tuple[Any, str]:
    """The real parser's answer to ``argv``: its namespace, or None and what it said."""
    said = io.StringIO()
    with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
        try:
            return _parser().parse_args(argv), ""
        except SystemExit:
            return None, said.getvalue().strip()


def _names_a_file(value: str) -> bool:
    return "/" in value or value.endswith((".json", ".gz", ".jsonl", ".csv", ".parquet"))


def typed(command: str) -> dict[str, Any]:
    """The ``-p`` parameters of a ``tmnb run`` command, as ``tmnb run`` types them."""
    args, said = _parse(shlex.split(command)[1:])
    assert args is not None, said
    return typed_parameters(find_notebook(args.notebook), [tuple(p) for p in args.parameter])


def problems(command: str) -> list[str]:
    """What keeps ``command`` from running as printed, from anywhere; [] when nothing does."""
    words = shlex.split(command)
    parts: list[list[str]] = [[]]  # one command, or several joined by &&
    for word in words:
        if word == "&&":
            parts.append([])
        else:
            parts[-1].append(word)
    found = []
    for part in parts:
        if part[:1] != ["tmnb"]:
            found.append(f"not a tmnb command: {shlex.join(part)}")
            continue
        args, said = _parse(part[1:])
        if args is None:
            found.append(f"tmnb refuses {shlex.join(part)}: {said}")
            continue
        for name in _PATHS:
            value = getattr(args, name, None)
            for one in value if isinstance(value, list) else [value]:
                if one and not Path(one).is_absolute():
                    found.append(f"{name} {one} is not absolute: {shlex.join(part)}")
        if args.command == "run":
            found += _run_problems(args.notebook, [tuple(p) for p in args.parameter])
    return found


def explained(commands: list[str]) -> str:
    """Each of ``commands`` that would not run as printed, with why, one problem a line ("" when none)."""
    return "".join(f"\n{c}\n" + "".join(f"  - {p}\n" for p in problems(c)) for c in commands if problems(c))


def _run_problems(notebook: str, raw: list[tuple[str, str]]) -> list[str]:
    found = []
    if "/" in notebook or notebook.endswith(".ipynb"):
        found.append(f"the notebook {notebook} is a path, not a name tmnb run finds from any directory")
    try:
        path = find_notebook(notebook)
        declared = declared_parameters(path)
        values = typed_parameters(path, raw)
    except InputError as exc:
        return [*found, str(exc)]
    for name, value in values.items():
        kind = declared[name]["type"]
        if not isinstance(value, _TYPES[kind]):
            found.append(f"-p {name} types back to {value!r}, not a {kind}")
        elif name in _PATH_PARAMETERS and _names_a_file(value) and not value.removeprefix("node-root:").startswith("/"):
            found.append(f"-p {name} {value} is not absolute")
    target = values.get("target")
    if isinstance(target, dict):  # field values as the kubelet decodes them ("true" of an option is no bool)
        try:
            check_target_fields(target)
        except TmnbError as exc:
            found.append(f"-p target: {exc}")
        if not isinstance(target.get("kubeletVersion", ""), str):
            found.append(f"-p target's kubeletVersion types back to {target['kubeletVersion']!r}, not a version")
    return found
