"""The sample after its rollout: committed file current, the change applied as the rollout applies
it, and the outcomes the comparison is meant to show, checked against the snapshots themselves."""

import json
from collections import Counter
from datetime import datetime

import pytest

from tmnb.analysis import compare as cmp
from tmnb.cpuset import CPUSet
from tmnb.snapshot import Snapshot, digest
from tmnb.sources.embedded import AFTER_FILE, load_sample, load_sample_after
from tmnb.sources.resolve import open_snapshot
from tmnb.twin.sample import generate_after
from tmnb.twin.sample.rollout import WAVE, journal

#: Worked by hand: the sample is captured at 2026-07-21T09:30Z; the rollout starts 30 min later
#: and takes 8 min per node of the 3-node wave (09:30 + 0:30 + 0:24 = 10:24); the after snapshot
#: is taken 2 h 20 min after that, for a full metrics window.
AFTER_CAPTURED_AT = "2026-07-21T12:44:00Z"
#: The API server keeps events for an hour (kube-apiserver --event-ttl, default 1h).
OLDEST_EVENT = "2026-07-21T11:44:00Z"


@pytest.fixture(scope="module")
def before() -> Snapshot:
    return load_sample()


@pytest.fixture(scope="module")
def after() -> Snapshot:
    return load_sample_after()


def test_committed_after_equals_a_fresh_generation(after: Snapshot) -> None:
    assert digest(after) == digest(generate_after()), (
        f"the committed sample-after is stale: python -m tmnb.twin.sample --after --out {AFTER_FILE}"
    )


def test_sample_after_is_a_source_word(after: Snapshot) -> None:
    assert digest(open_snapshot("sample-after")) == digest(after)


def test_only_the_wave_changed_policy_and_by_a_drop_in(before: Snapshot, after: Snapshot) -> None:
    old = {n.name: n.kubelet.settings["topologyManagerPolicy"] for n in before.nodes}
    new = {n.name: n.kubelet.settings["topologyManagerPolicy"] for n in after.nodes}
    changed = sorted(name for name in new if new[name].value != old[name].value)
    assert changed == sorted(WAVE)
    for name in WAVE:
        assert new[name].value == "single-numa-node"
        node = after.node(name)
        if node.kubelet.config_dir:
            assert new[name].source == "dropin" and new[name].detail.startswith(node.kubelet.config_dir)


def test_drained_pods_were_recreated_with_new_names_but_statefulsets_keep_theirs(
    before: Snapshot, after: Snapshot
) -> None:
    before_uids = {p.uid for p in before.pods}
    drained = [p for p in before.pods if p.node in WAVE and p.phase == "Running" and p.owner.kind != "DaemonSet"]
    assert drained
    after_uids = {p.uid for p in after.pods}
    assert all(p.uid not in after_uids for p in drained)  # evicted: gone
    recreated = [p for p in after.pods if p.uid not in before_uids]
    kept_names = {p.name for p in recreated} & {p.name for p in drained}
    assert kept_names and all(p.owner.kind == "StatefulSet" for p in drained if p.name in kept_names)
    first = journal()[0].time.strftime("%Y-%m-%dT%H:%M:%SZ")
    assert all(p.created >= first for p in recreated)


def test_the_comparison_shows_moves_an_alignment_and_rejections(before: Snapshot, after: Snapshot) -> None:
    table = cmp.containers(before, after)
    counts = Counter(table["verdict"])
    assert counts["moved"] >= 10 and counts["newly aligned"] >= 1 and counts["now rejected"] >= 2
    assert "unknown" not in set(table["alignment_before"]) | set(table["alignment_after"])

    # llm-serving is a replica short: fewer running vllm containers after than before
    def running(snap: Snapshot) -> int:
        return sum(1 for p in snap.pods if p.phase == "Running" and p.name.startswith("llm-serving"))

    assert running(after) == running(before) - 1
    rejected = [p for p in after.pods if p.phase == "Failed" and p.reason == "TopologyAffinityError"]
    assert rejected and all(p.node in {n.name for n in after.nodes} for p in rejected)
    # kubectl get events keeps an hour: the rollout's rejections are older, so only their pods tell
    assert all(e.first_seen >= OLDEST_EVENT for e in after.events)


def test_converted_nodes_hold_only_single_zone_exclusive_cpus(after: Snapshot) -> None:
    """What single-numa-node promises, read off the snapshot with no model: each exclusive cpuset,
    its memory and its devices sit on one NUMA zone."""
    for name in WAVE:
        node = after.node(name)
        zone_of = {c.cpu: c.numa for c in node.cpus}
        for a in (a for a in node.allocations if a.exclusive):
            zones = {zone_of[c] for c in CPUSet.parse(a.cpuset)}
            zones |= {z for b in a.memory for z in b.numa} | {z for d in a.devices for z in (d.numa or [])}
            assert len(zones) == 1, f"{name} {a.pod}/{a.container}: {zones}"


def test_after_is_captured_after_the_rollout(after: Snapshot) -> None:
    assert after.captured_at == AFTER_CAPTURED_AT
    assert journal()[-1].time < datetime.fromisoformat(AFTER_CAPTURED_AT)


def test_the_shipped_journal_and_metrics_equal_a_fresh_generation(tmp_path, before: Snapshot, after: Snapshot) -> None:
    """05-compare's ``auto`` copies the files shipped beside the sample; the generator writes the same bytes."""
    from tmnb.sources.embedded import JOURNAL_FILE, METRICS_FILE
    from tmnb.twin.sample.metrics import write_shipped

    journal_file, metrics_file = write_shipped(tmp_path, before, after)
    stale = "stale: python -m tmnb.twin.sample --comparison --out src/tmnb/sources/data"
    assert journal_file.read_bytes() == JOURNAL_FILE.read_bytes(), stale
    assert metrics_file.read_bytes() == METRICS_FILE.read_bytes(), stale
    assert [json.loads(line)["node"] for line in JOURNAL_FILE.read_text().splitlines()][:1] == [journal()[0].node]
