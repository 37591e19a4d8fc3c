"""The embedded sample fleet as shipped (package data): the ``sample`` and ``sample-after`` sources,
and the pair's rollout journal and application metrics that 05-compare's ``auto`` compares.

The files are written by the rehearsal twin's generator (``python -m tmnb.twin.sample``); reading
them needs nothing of it, so a production run never loads the generator."""

from __future__ import annotations

from pathlib import Path

from tmnb.snapshot import Snapshot, load

DATA_FILE = Path(__file__).parent / "data" / "sample-fleet.json"
#: The same fleet after its rollout: the other half of the sample comparison.
AFTER_FILE = DATA_FILE.with_name("sample-fleet-after.json")
#: The rollout between the two, as its journal records it.
JOURNAL_FILE = DATA_FILE.with_name("sample-journal.jsonl")
#: The pair's application metrics in the long format (synthetic, with a known regression).
METRICS_FILE = DATA_FILE.with_name("sample-metrics.csv.gz")


def load_sample() -> Snapshot:
    """The committed curated sample, verified against its manifest."""
    return load(DATA_FILE)


def load_sample_after() -> Snapshot:
    """The committed sample after its rollout, verified against its manifest."""
    return load(AFTER_FILE)
