"""Every ``tmnb ...`` command a report, a summary or the command line prints is built here.

A printed command is pasted into a shell, so it must mean there what the report meant: every word
quoted for the shell, every notebook parameter written so that ``tmnb run`` types it back to the
value given (a ``str`` parameter takes its text as it is; lists and mappings are YAML flow text in
which a string stays a string: ``"1.30"`` is not the float 1.3), paths absolute and notebooks named
(``04-rollout``, which ``tmnb run`` finds wherever the shell stands), so it runs from any directory.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from pathlib import Path

import yaml

#: A value a command carries: None leaves its option or parameter out (the default applies).
Value = str | int | float | bool | Path | Sequence["Value"] | Mapping[str, "Value"] | None

#: Strings YAML 1.2 reads as numbers although PyYAML (YAML 1.1) does not (``1e3``, ``0o17``):
#: quoted as well, so that no YAML reader takes them for anything but the strings they are.
_NUMBER_IN_YAML_12 = re.compile(
    r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?|0o[0-7]+|0x[0-9a-fA-F]+|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)"
)


class _FlowDumper(yaml.SafeDumper):
    """YAML on one line whose quoted strings are double-quoted: single quotes would come out of
    ``shlex.quote`` as ``'"'"'``."""

    def choose_scalar_style(self) -> str:
        style: str = super().choose_scalar_style()
        return '"' if style == "'" else style


def _string(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # PyYAML quotes what it would itself read as another type ("1.30", "true", "null"); this adds YAML 1.2's
    style = '"' if _NUMBER_IN_YAML_12.fullmatch(text) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_FlowDumper.add_representer(str, _string)


def _absolute(path: Path) -> str:
    return str(path.resolve())


def _plain(value: Value) -> object:
    """Mappings as dicts, sequences as lists, paths absolute: what YAML writes."""
    if isinstance(value, Path):
        return _absolute(value)
    if isinstance(value, Mapping):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [_plain(item) for item in value]
    return value


def _text(value: Value) -> str:
    """A value as ``tmnb run`` reads it back: a string as it is, a path absolute, anything else YAML."""
    if isinstance(value, str):
        return value
    if isinstance(value, Path):
        return _absolute(value)
    flow: str = yaml.dump(
        _plain(value), Dumper=_FlowDumper, default_flow_style=True, width=1 << 30, allow_unicode=True, sort_keys=False
    )
    return flow.removesuffix("\n").removesuffix("\n...")


def _parameters(params: Mapping[str, Value]) -> list[str]:
    return [word for name, value in params.items() if value is not None for word in ("-p", name, _text(value))]


def parameters(**params: Value) -> str:
    """``-p NAME VALUE`` for each notebook parameter given (None: left out), quoted for the shell: a
    part of a command a sentence names."""
    return shlex.join(_parameters(params))


def _options(options: Mapping[str, Value]) -> list[str]:
    argv: list[str] = []
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        for one in value if isinstance(value, list | tuple) else [value]:
            if one is True:
                argv.append(flag)
            elif one is not None and one is not False:
                argv += [flag, _text(one)]
    return argv


def command(*words: str | Path, params: Mapping[str, Value] | None = None, **options: Value) -> str:
    """``tmnb WORDS... [-p NAME VALUE]... [--OPTION VALUE]...``, every word quoted for the shell.

    ``words`` are the subcommand and its positional arguments (``"run", "04-rollout"``; a path made
    absolute); ``params`` a notebook's parameters; ``options`` are named as in Python
    (``change_id`` is ``--change-id``): True is a bare flag, a list repeats the option, None and
    False leave it out."""
    argv = ["tmnb", *(_absolute(w) if isinstance(w, Path) else w for w in words)]
    return shlex.join([*argv, *_parameters(params or {}), *_options(options)])
