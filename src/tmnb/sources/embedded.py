"""The embedded sample fleet as shipped (package data): the ``sample`` and ``sample-after`` sources.

The files are written by the rehearsal twin's generator (``tmnb.twin.sample``); reading them needs
nothing of it, so a production run never loads the generator."""

from __future__ import annotations

from pathlib import Path

from tmnb.snapshot import Snapshot, load

DATA_FILE = Path(__file__).parent / "data" / "sample-fleet.json"
#: The same fleet after its rollout: the other half of the sample comparison.
AFTER_FILE = DATA_FILE.with_name("sample-fleet-after.json")


def load_sample() -> Snapshot:
    """The committed curated sample, verified against its manifest."""
    return load(DATA_FILE)


def load_sample_after() -> Snapshot:
    """The committed sample after its rollout, verified against its manifest."""
    return load(AFTER_FILE)
