"""The sample comparison's application metrics and rollout journal, written on demand.

Deterministic (seeded) and too large to ship (hours of 30 s scrapes), so they are written where a
run needs them: the long format that 05-compare reads by default, the same draws as OpenMetrics
for a Prometheus backfill, and the journal whose records place the change. llm-serving gets the
latency regression: it is the workload the rollout left short of a replica (``STORY``).
"""

from __future__ import annotations

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
