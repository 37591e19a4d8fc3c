"""Set fields of a kubelet config file and change nothing else: comments, key order, quoting, blank
lines and odd spacing survive, so the diff a person approves shows the changed lines only.

ruamel.yaml's round trip re-emits what it loaded, but it normalises spacing inside lines it did not
touch (``key:  "x"`` loses a space). So the file is edited in place instead: each top-level key the
change sets keeps its lines replaced by ruamel's rendering of the new value, every other line is the
file's own, byte for byte, and a new key goes at the end. The result is read back as the kubelet
would (YAML 1.1, as sigs.k8s.io/yaml) and must hold exactly the old fields plus the new ones.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap
from ruamel.yaml.error import YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, ScalarString
from ruamel.yaml.util import load_yaml_guess_indent

from tmnb.errors import InputError

KUBELET_CONFIG_HEADER = {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration"}


def _round_trip(indent: int = 2, offset: int = 0) -> YAML:
    rt = YAML()
    rt.preserve_quotes = True
    rt.width = 1 << 16  # never fold a long value onto a second line
    rt.indent(mapping=indent, sequence=max(indent, offset + 2), offset=offset)
    return rt


def _as_written(value: Any, old: Any = None) -> Any:
    """``value`` as ruamel should write it: a string keeps the quote style of the value it replaces,
    and one that YAML 1.1 would read as something else (``on``, ``1e3``) is quoted, since the kubelet
    reads YAML 1.1 and ruamel writes 1.2."""
    if isinstance(value, Mapping):
        return {k: _as_written(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_as_written(v) for v in value]
    if isinstance(value, str):
        if isinstance(old, ScalarString):
            return type(old)(value)
        if yaml.safe_load(value) != value or not value:
            return DoubleQuotedScalarString(value)
    return value


def _content_end(lines: list[str], start: int, stop: int) -> int:
    """The line after the last line of a key's own content in ``lines[start:stop]``: the comments and
    blank lines before the next key stay where the file had them."""
    end = stop
    while end > start + 1 and (not lines[end - 1].strip() or lines[end - 1].lstrip().startswith("#")):
        end -= 1
    return end


def _spans(doc: CommentedMap, lines: list[str]) -> dict[str, tuple[int, int]]:
    """Each top-level key's own lines: from its key line to the end of its value."""
    starts = sorted((doc.lc.key(k)[0], k) for k in doc)
    spans = {}
    for i, (line, key) in enumerate(starts):
        stop = starts[i + 1][0] if i + 1 < len(starts) else len(lines)
        spans[key] = (line, _content_end(lines, line, stop))
    return spans


def _not_yaml(exc: Exception, source: str) -> InputError:
    return InputError(f"cannot edit the kubelet config: not YAML ({exc.__class__.__name__})", source=source)


def _load(rt: YAML, text: str, source: str) -> CommentedMap:
    try:
        doc = rt.load(text)
    except YAMLError as exc:
        raise InputError(
            f"cannot edit the kubelet config: not YAML ({exc.__class__.__name__})", source=source
        ) from None
    if doc is None:
        return CommentedMap()
    if not isinstance(doc, CommentedMap):
        raise InputError("cannot edit the kubelet config: expected a mapping at the top", source=source)
    return doc


def _dump(rt: YAML, doc: CommentedMap) -> str:
    out = io.StringIO()
    rt.dump(doc, out)
    return out.getvalue()


def new_config(fields: Mapping[str, Any], *, header: bool = True) -> str:
    """A whole KubeletConfiguration document of ``fields`` (a drop-in, a patch, a config file that was
    empty); ``header=False``: the fields alone."""
    head = KUBELET_CONFIG_HEADER if header else {}
    doc = CommentedMap({**head, **{k: _as_written(v) for k, v in fields.items()}})
    return _dump(_round_trip(), doc)


def edit_config(text: str | None, fields: Mapping[str, Any], *, source: str) -> str:
    """``text`` with ``fields`` set, every other byte kept (see the module's docstring)."""
    if not text or not text.strip():
        return new_config(fields)
    try:
        _, indent, offset = load_yaml_guess_indent(text)
    except YAMLError as exc:
        raise _not_yaml(exc, source) from None
    rt = _round_trip(indent or 2, offset or 0)
    doc = _load(rt, text, source)
    if not doc:
        return text + ("" if text.endswith("\n") else "\n") + new_config(fields)
    old_lines = text.splitlines(keepends=True)
    old_spans = _spans(doc, old_lines)
    changed = [k for k, v in fields.items() if k in doc and doc[k] != v]
    added = [k for k in fields if k not in doc]
    for key in [*changed, *added]:
        doc[key] = _as_written(fields[key], doc.get(key))
    new_lines = _dump(rt, doc).splitlines(keepends=True)
    new_spans = _spans(_load(rt, "".join(new_lines), source), new_lines)
    out = list(old_lines)
    for key in sorted(changed, key=lambda k: -old_spans[k][0]):  # bottom up: earlier spans keep their lines
        (a, b), (c, d) = old_spans[key], new_spans[key]
        out[a:b] = new_lines[c:d]
    if added and out and not out[-1].endswith("\n"):
        out[-1] += "\n"
    for key in added:
        c, d = new_spans[key]
        out += new_lines[c:d]
    result = "".join(out)
    _check(text, result, fields, source)
    return result


def _check(before: str, after: str, fields: Mapping[str, Any], source: str) -> None:
    """The edited file, read as the kubelet reads YAML, holds the old fields and the new ones, nothing else."""
    try:
        want = {**(yaml.safe_load(before) or {}), **fields}
        got = yaml.safe_load(after)
    except yaml.YAMLError as exc:
        raise InputError(
            f"cannot edit the kubelet config: not YAML ({exc.__class__.__name__})", source=source
        ) from None
    if got != want:
        differ = sorted(k for k in {*want, *got} if want.get(k) != got.get(k))
        raise InputError(
            f"cannot edit the kubelet config in place: the edit would read back differently at {', '.join(differ)}",
            source=source,
        )
