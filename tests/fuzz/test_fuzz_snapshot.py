"""Snapshot files edited by hand or cut short: the loader accepts a valid document or refuses it
naming the file and JSON path, and what it accepts the what-if replay can use."""

from __future__ import annotations

import gzip
import json
from typing import Any

import pytest
from fuzzing import edited_json, fuzz, refused_naming, replaced, scratch, survive
from hypothesis import example, given
from hypothesis import strategies as st

from factories import busy_snapshot
from tmnb.analysis.whatif import whatif
from tmnb.snapshot import Snapshot, from_dict, load, to_dict

pytestmark = pytest.mark.fuzz

SRC = "/fuzz/snapshot.json"
BASE = to_dict(busy_snapshot())
_TMP = scratch("snapshot")


@fuzz
@given(edited_json(BASE))
# a reservedMemory entry that is not a mapping was loaded and crashed the replay with a TypeError
@example(replaced(BASE, ("nodes", 0, "kubelet", "settings", "reservedMemory", "value", 0), None))
@example(replaced(BASE, ("nodes", 0, "allocations", 0, "memory", 0, "numa"), [-1]))  # a KeyError in the replay
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
