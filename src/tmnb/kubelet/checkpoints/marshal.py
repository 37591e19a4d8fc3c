"""The state files as a kubelet writes them: Go's ``json.Marshal`` of a checkpoint struct, and the
format and checksum type name a minor writes.

Ports ``MarshalCheckpoint`` of pkg/kubelet/cm/cpumanager/state/checkpoint.go and
pkg/kubelet/cm/memorymanager/state/checkpoint.go (1.33–1.37), with Go's ``encoding/json`` output.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from tmnb.kubelet.profiles import StateFormat


class Fields(dict[str, object]):
    """A struct's fields for ``go_json``: written in declaration order, not sorted like a map's keys."""


def go_json(value: object) -> str:
    """``json.Marshal``: compact, map keys sorted as strings, struct fields in order, ``<``, ``>``, ``&``
    escaped."""
    if isinstance(value, dict):
        pairs = [(str(k), v) for k, v in value.items()]
        items = pairs if isinstance(value, Fields) else sorted(pairs)
        return "{" + ",".join(f"{go_json(k)}:{go_json(v)}" for k, v in items) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
        for ch, esc in (
            ("<", "\\u003c"),
            (">", "\\u003e"),
            ("&", "\\u0026"),
            ("\u2028", "\\u2028"),
            ("\u2029", "\\u2029"),
        ):
            text = text.replace(ch, esc)
        return text
    return str(value)


def written(formats: Sequence[StateFormat], version: str) -> tuple[str, str]:
    """The format a minor writes and the type name its ``MarshalCheckpoint`` checksums under: the legacy
    (unversioned) name, the last a reader accepts, so older kubelets verify it too."""
    fmt = next(f for f in formats if f.version == version)
    return fmt.version, fmt.type_names[-1]
