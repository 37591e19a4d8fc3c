"""Snapshot files edited by hand or cut short: the loader accepts a valid document or refuses it
naming the file and JSON path, and what it accepts the what-if replay can use."""

from __future__ import annotations

import gzip
import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from fuzzing import HOSTILE, fuzz, refused_naming, survive
from hypothesis import example, given, note
from hypothesis import strategies as st

from factories import busy_snapshot
from tmnb.analysis.whatif import whatif
from tmnb.snapshot import Snapshot, from_dict, load, to_dict

pytestmark = pytest.mark.fuzz

SRC = "/fuzz/snapshot.json"
BASE = to_dict(busy_snapshot())
LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | HOSTILE
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=6), inner, max_size=2),
    max_leaves=6,
)
_TMP = Path(tempfile.mkdtemp(prefix="tmnb-fuzz-snapshot-"))


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    return [at] + [p for key, child in children for p in _paths(child, (*at, key))]


PATHS = [p for p in _paths(BASE) if p]


@st.composite
def edited(draw: st.DrawFn) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASE))
    for _ in range(draw(st.integers(1, 3))):
        path = draw(st.sampled_from(PATHS))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["set", "set", "delete", "add"]))
            if action == "delete":
                del parent[path[-1]]
            elif action == "add" and isinstance(parent, dict):
                parent[draw(st.text(max_size=6))] = draw(VALUES)
            else:
                parent[path[-1]] = draw(VALUES)
            note(f"{action} {'.'.join(map(str, path))}")
        except (KeyError, IndexError, TypeError):  # an earlier edit removed or replaced the parent
            continue
    return doc


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(BASE))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


@fuzz
@given(edited())
# a reservedMemory entry that is not a mapping was loaded and crashed the replay with a TypeError
@example(_with(("nodes", 0, "kubelet", "settings", "reservedMemory", "value", 0), None))
def test_edited_snapshot_is_loaded_or_refused_with_its_path(doc: dict[str, Any]) -> None:
    snapshot = survive(from_dict, doc, source=SRC)
    if not refused_naming(snapshot, SRC):
        assert isinstance(snapshot, Snapshot)
        survive(whatif, snapshot, {"topologyManagerPolicy": "single-numa-node"}, mode="restart")


TEXT = json.dumps(BASE, indent=1)


@fuzz
@given(st.integers(0, len(TEXT)), st.booleans(), st.binary(max_size=20))
def test_cut_or_garbled_snapshot_file_is_refused(cut: int, gz: bool, tail: bytes) -> None:
    body = TEXT[:cut].encode() + tail
    path = _TMP / ("s.json.gz" if gz else "s.json")
    path.write_bytes(gzip.compress(body)[: max(10, cut // 10)] if gz and tail else gzip.compress(body) if gz else body)
    result = survive(load, path)
    if not refused_naming(result, str(path)):
        assert isinstance(result, Snapshot) and cut == len(TEXT)
