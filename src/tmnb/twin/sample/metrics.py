"""The sample comparison's application metrics and rollout journal.

Deterministic (seeded): the long format that 05-compare reads by default and the journal whose
records place the change ship as package data beside the sample fleet (``write_shipped``, read by
``tmnb.sources.embedded``, so a production run never loads this generator); the same draws as
OpenMetrics for the rehearsal's Prometheus backfill are written where the demo needs them.
llm-serving gets the latency regression: it is the workload the rollout left short of a replica
(``STORY``).
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pandas as pd

from tmnb.snapshot import Snapshot
from tmnb.twin.metrics import (
    Role,
    Timeline,
    Workload,
    shifted,
    workloads,
    write_long_format,
    write_openmetrics,
)
from tmnb.twin.sample.common import rfc3339
from tmnb.twin.sample.rollout import journal

#: The owners in the order of ``SAMPLE_ROLES``: the rollout left llm-serving a replica short and its
#: two pods carry the load of three (p99 +30 %, more CPU each); the encoder, drained and back on
#: one zone, got faster; the rest did not change.
STORY = ("llm-serving", "embeddings")
SAMPLE_ROLES: tuple[Role, ...] = (
    ((1.0, 1.4), 0.0, (0.050, 0.065)),
    ((1.2, 1.2), 0.0, shifted(0.050, -12.0)),
    ((1.6, 1.6), 0.0, (0.040, 0.040)),
    ((3.0, 3.0), 0.0, None),
    ((1.4, 1.4), 0.0, (0.050, 0.050)),
)
LONG_FORMAT = "sample-metrics.csv"
OPENMETRICS = "sample-metrics.om"
JOURNAL = "sample-journal.jsonl"


def timeline() -> Timeline:
    steps = journal()
    return Timeline.around(pd.Timestamp(steps[0].time), pd.Timestamp(steps[-1].time))


def sample_workloads(before: Snapshot, after: Snapshot) -> tuple[Workload, ...]:
    """The pair's workloads; every node runs 1.33 or later on both sides, so exclusive CPUs have no CFS quota."""
    return workloads(before, after, roles=SAMPLE_ROLES, first=STORY, quota=(False, False))


def write_journal(path: Path) -> Path:
    """The sample rollout's records, one JSON object per line, as 05-compare reads a journal."""
    records = [{"time": rfc3339(s.time), "event": s.event, "node": s.node} for s in journal()]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_metrics(folder: Path, before: Snapshot, after: Snapshot, *, openmetrics: bool = False) -> Path:
    """The long-format file in ``folder`` (and the OpenMetrics text beside it when asked); returns the first."""
    folder.mkdir(parents=True, exist_ok=True)
    loads, span = sample_workloads(before, after), timeline()
    if openmetrics:
        write_openmetrics(folder / OPENMETRICS, span, loads)
    return write_long_format(folder / LONG_FORMAT, span, loads)


def write_shipped(folder: Path, before: Snapshot, after: Snapshot) -> tuple[Path, Path]:
    """The journal and the long-format metrics (gzipped without a time stamp, so a fresh generation is
    the same bytes) that ship in ``tmnb/sources/data/`` for 05-compare's ``auto``."""
    scratch = write_metrics(folder / "scratch", before, after)
    metrics = folder / f"{LONG_FORMAT}.gz"
    metrics.write_bytes(gzip.compress(scratch.read_bytes(), compresslevel=9, mtime=0))
    scratch.unlink()
    scratch.parent.rmdir()
    return write_journal(folder / JOURNAL), metrics
