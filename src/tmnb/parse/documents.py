"""JSON and YAML loading that turns syntax errors into ``InputError`` with the line number.

Truncated files are the common failure when artifacts are copied off a node, so the message says
"truncated or malformed" and where the parser gave up.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from tmnb.errors import InputError
from tmnb.parse.files import decode_utf8
from tmnb.parse.gojson import object_pairs
from tmnb.parse.numbers import json_int


def load_json(text: str | bytes, *, source: str, expected: str, keep_pairs: bool = False) -> Any:
    """Parse JSON; ``expected`` names the document (e.g. "a cpu_manager_state JSON object").

    Integers too long for 64 bits come back as ``OversizedNumber`` so that the field's own check
    can refuse them with its path (Python would otherwise convert 4300 digits, or raise).
    ``keep_pairs`` makes objects ``JsonObject``s that remember duplicated keys in file order."""
    if isinstance(text, bytes):
        text = decode_utf8(text, what=expected, source=source)
    if not text.strip():
        raise InputError(f"empty file; expected {expected}", source=source)
    try:
        return json.loads(text, parse_int=json_int, object_pairs_hook=object_pairs if keep_pairs else None)
    except RecursionError:
        raise InputError(f"JSON nested too deeply; expected {expected}", source=source) from None
    except json.JSONDecodeError as err:
        raise InputError(
            f"truncated or malformed JSON ({err.msg}, column {err.colno}); expected {expected}",
            source=source,
            line=err.lineno,
        ) from None


class _DuplicateKeyLoader(yaml.SafeLoader):
    """SafeLoader that records duplicate mapping keys instead of silently keeping the last one."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self.duplicates: list[tuple[str, int]] = []

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            if isinstance(key, str) and key in seen:
                self.duplicates.append((key, key_node.start_mark.line + 1))
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def load_yaml(text: str, *, source: str, expected: str) -> tuple[Any, list[tuple[str, int]]]:
    """Parse one YAML (or JSON) document; returns the data and the duplicate keys with their lines."""
    if not text.strip():
        raise InputError(f"empty file; expected {expected}", source=source)
    try:
        loader = _DuplicateKeyLoader(text)  # its reader refuses control characters at once
    except yaml.reader.ReaderError as err:
        code = err.character if isinstance(err.character, int) else ord(err.character)
        raise InputError(
            f"control character U+{code:04X} at offset {err.position} is not allowed in YAML; expected {expected}",
            source=source,
            line=text.count("\n", 0, err.position) + 1,
        ) from None
    try:
        data = loader.get_single_data()
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "syntax error"
        raise InputError(
            f"malformed YAML ({problem}); expected {expected}",
            source=source,
            line=mark.line + 1 if mark else None,
        ) from None
    except yaml.YAMLError as err:
        raise InputError(f"malformed YAML ({err}); expected {expected}", source=source) from None
    except ValueError as err:  # an integer of thousands of digits
        raise InputError(f"a number in the file is out of range ({err}); expected {expected}", source=source) from None
    except RecursionError:
        raise InputError(f"YAML nested too deeply; expected {expected}", source=source) from None
    finally:
        loader.dispose()
    return data, loader.duplicates


def _go_key(value: object) -> str:
    """``%#v`` of a decoded YAML map key, as gopkg.in/yaml.v2 prints it."""
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def go_duplicate_keys(text: str) -> list[str]:
    """The strict decoder's duplicate-key errors for a document that ``load_yaml`` accepted, in the
    order and words Go reports them.

    YAML goes through ``yaml.YAMLToJSONStrict`` (gopkg.in/yaml.v2 ``UnmarshalStrict``): each repeated
    key is ``line N: key "k" already set in map`` with N the line of its *value*, in depth-first
    document order, under one ``yaml: unmarshal errors:`` heading. A JSON document (one starting with
    ``{``, as ``IsJSONBuffer`` decides) is decoded by sigs.k8s.io/json instead, whose strict errors
    name the field (``duplicate field "k"``); tmnb has not checked that library's exact words."""
    is_json = text.lstrip(" \t\r\n").startswith("{")
    loader = yaml.SafeLoader(text)
    try:
        root = loader.get_single_node()
        found: list[str] = []

        def walk(node: yaml.Node, path: str) -> None:
            if isinstance(node, yaml.MappingNode):
                seen: set[tuple[str, Any]] = set()
                for key_node, value_node in node.value:
                    key = loader.construct_object(key_node, deep=True)
                    name = f"{path}.{key}" if path else str(key)
                    walk(value_node, name)
                    marker = (type(key).__name__, key if isinstance(key, (str, int, bool, float)) else repr(key))
                    if marker in seen:
                        found.append(
                            f'duplicate field "{name}"'
                            if is_json
                            else f"line {value_node.start_mark.line + 1}: key {_go_key(key)} already set in map"
                        )
                    seen.add(marker)
            elif isinstance(node, yaml.SequenceNode):
                for item in node.value:
                    walk(item, path)

        if root is not None:
            walk(root, "")
    finally:
        loader.dispose()
    if not found or is_json:
        return found
    return ["yaml: unmarshal errors:\n  " + "\n  ".join(found)]
