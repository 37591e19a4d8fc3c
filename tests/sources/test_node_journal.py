"""The kubelet journal excerpt the node collector keeps per node: from journald or a text log,
bounded by a since time and a byte cap, redacted, and read by tmnb.parse.klog."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tmnb.parse.klog import parse_kubelet_log
from tmnb.snapshot import Snapshot, SnapshotSource, from_dict, load, save, to_dict
from tmnb.sources.node import DEFAULT_JOURNAL_BYTES, collect_node
from tmnb.sources.node_journal import journal_excerpt
from tmnb.sources.transports import LocalTransport

from .node_fixture import SECRET, make_node_root
from .test_node import busy_node, fake_tool, tools  # noqa: F401  (fixtures)

FIXTURES = Path(__file__).parents[1] / "fixtures" / "node" / "journal"


def journalctl_prints(bindir: Path, text: str) -> None:
    fake_tool(bindir, "journalctl", f"cat <<'EOF'\n{text}EOF")


def names(lines: list[str], reference: datetime) -> list[str | None]:
    return [r.name for r in parse_kubelet_log(lines, reference=reference).records if r.name]


def iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%S+0000")


def klog_line(when: datetime, host: str, message: str) -> str:
    header = when.strftime("I%m%d %H:%M:%S.%f")
    return f'{iso(when)} {host} kubelet[77]: {header}      77 cpu_manager.go:1] "{message}"'


@pytest.mark.clock
def test_the_excerpt_keeps_every_named_line_and_no_secret(busy_node, tmp_path, tools):  # noqa: F811
    fixture = (FIXTURES / "short-iso.txt").read_text()
    leak = f'2026-12-02T10:24:11+0100 w1 kubelet[4501]: I1202 10:24:11.1 1 cpu_manager.go:1] "probe" token="{SECRET}"'
    journalctl_prints(tools, fixture + leak + "\n")
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    started = datetime.now(UTC).replace(microsecond=0)  # the script's `date -u` has whole seconds
    node = collect_node(LocalTransport(str(root)), "w1", since="-2h", timeout=60).node
    finished = datetime.now(UTC)
    excerpt = node.kubelet_journal
    assert excerpt is not None
    assert (excerpt.source, excerpt.since, excerpt.max_bytes, excerpt.truncated) == (
        "journalctl -D /var/log/journal -u kubelet",
        "-2h",
        DEFAULT_JOURNAL_BYTES,
        False,
    )
    reference = datetime(2026, 12, 2, 12, tzinfo=UTC)
    assert names(excerpt.lines, reference) == names(fixture.splitlines(), reference)  # the filter drops none of them
    assert SECRET not in "\n".join(excerpt.lines) and excerpt.lines[-1].endswith('token="<redacted>"')
    assert not [i for i in node.issues if i.source == "kubelet journal"]
    assert started <= datetime.fromisoformat(excerpt.read_at) <= finished  # read during the collection


def test_the_byte_cap_keeps_the_newest_whole_lines(busy_node, tmp_path, tools):  # noqa: F811
    start = datetime(2026, 12, 2, 10, tzinfo=UTC)
    lines = [klog_line(start + timedelta(seconds=i), "w1", f"Topology line {i}") for i in range(3000)]
    journalctl_prints(tools, "\n".join(lines) + "\n")
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    excerpt = collect_node(LocalTransport(str(root)), "w1", journal_bytes=20_000, timeout=60).node.kubelet_journal
    assert excerpt is not None and excerpt.truncated and excerpt.max_bytes == 20_000
    assert sum(len(line) + 1 for line in excerpt.lines) <= 20_000
    assert excerpt.lines == lines[-len(excerpt.lines) :]  # whole lines, the newest, in order
    assert len(excerpt.lines) > 100
    roomy = collect_node(LocalTransport(str(root)), "w1", journal_bytes=1 << 20, timeout=60).node.kubelet_journal
    assert roomy is not None and not roomy.truncated and roomy.lines == lines


@pytest.mark.clock
def test_a_text_journal_in_a_copied_root_gets_the_since_bound(busy_node, tmp_path):  # noqa: F811
    """No journald to ask: /journal.log (journalctl -o short-iso saved beside the files, as the sandbox
    writes it) is read, and the since bound is applied by each line's time."""
    now = datetime.now(UTC)
    old, recent = now - timedelta(hours=3), now - timedelta(minutes=10)
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "journal.log").write_text(
        "\n".join([
            klog_line(old, "w1", "Could not initialize checkpoint manager, please drain node and remove policy state"),
            f"{iso(old)} w1 systemd[1]: Stopped kubelet.service - kubelet: The Kubernetes Node Agent.",
            f"{iso(recent)} w1 systemd[1]: Started kubelet.service - kubelet: The Kubernetes Node Agent.",
            klog_line(recent, "w1", "Creating topology manager with policy per scope"),
        ]) + "\n"
    )  # fmt: skip
    node = collect_node(LocalTransport(str(root)), "w1", since="-2h", timeout=60).node
    excerpt = node.kubelet_journal
    assert excerpt is not None and excerpt.source == "/journal.log"
    assert names(excerpt.lines, now) == ["kubelet_start", "topology_manager_created"]
    kept = collect_node(LocalTransport(str(root)), "w1", since="yesterday", timeout=60).node
    assert kept.kubelet_journal is not None and len(kept.kubelet_journal.lines) == 4
    (note,) = [i for i in kept.issues if i.source == "kubelet journal"]
    assert note.severity == "info" and "'yesterday' is not applied" in note.message


def test_the_since_bound_of_a_text_journal_is_counted_from_the_capture_time(tmp_path):
    """The same bound without the clock: read at 2026-12-02T12:00:00Z (the bundle's captured_at),
    -2h is 10:00:00 and -1d is 2026-12-01T12:00:00, so 09:00 goes, 11:50 stays, and an absolute
    since is taken as it is."""
    (tmp_path / "tmnb").mkdir()
    lines = [
        klog_line(datetime(2026, 12, 2, 9, tzinfo=UTC), "w1", "Stopped"),
        klog_line(datetime(2026, 12, 2, 11, 50, tzinfo=UTC), "w1", "Creating topology manager with policy per scope"),
    ]
    (tmp_path / "tmnb" / "journal.txt").write_text("\n".join(lines) + "\n")

    def kept(since: str) -> list[str]:
        meta = {"journal_source": "/journal.log", "journal_since": since, "captured_at": "2026-12-02T12:00:00Z"}
        excerpt, _ = journal_excerpt(tmp_path, meta, [])
        assert excerpt is not None and excerpt.read_at == "2026-12-02T12:00:00Z"
        return excerpt.lines

    assert kept("-2h") == lines[1:]
    assert kept("-1d") == lines
    assert kept("2026-12-02 11:50") == lines[1:]
    assert kept("-5m") == []


@pytest.mark.clock
def test_lines_in_an_unknown_format_are_a_warning_not_an_error(busy_node, tmp_path):  # noqa: F811
    root = make_node_root(busy_node, tmp_path / "w1")
    now = datetime.now(UTC)
    (root / "journal.log").write_text(
        f"{klog_line(now, 'w1', 'Best TopologyHint')}\nlevel=info msg=topology-probe\nnuma? 42\n"
    )
    node = collect_node(LocalTransport(str(root)), "w1", timeout=60).node
    assert node.kubelet_journal is not None and len(node.kubelet_journal.lines) == 3
    (warning,) = [i for i in node.issues if i.source == "kubelet journal"]
    assert warning.severity == "warning"
    assert warning.message.startswith("2 of 3 line(s) in an unknown format") and "topology-probe" in warning.message


def test_no_journal_at_all_leaves_the_field_empty(busy_node, tmp_path):  # noqa: F811
    root = make_node_root(busy_node, tmp_path / "w1")
    node = collect_node(LocalTransport(str(root)), "w1", timeout=60).node
    assert node.kubelet_journal is None
    (note,) = [i for i in node.issues if i.source == "journal"]
    assert note.severity == "info" and "/journal.log /var/log/kubelet.log" in note.message


def test_a_journal_dropped_at_the_bundle_cap_is_recorded_as_truncated(busy_node, tmp_path, tools):  # noqa: F811
    noisy = "awk 'BEGIN { srand(1); for (i = 0; i < 5000; i++) printf \"cpu_manager.go:1] %d %x%x\\n\", i, rand() * 2^31, rand() * 2^31 }'"  # noqa: E501
    fake_tool(tools, "journalctl", noisy)
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    roomy = collect_node(LocalTransport(str(root)), "w1", journal_bytes=1 << 20, timeout=60)
    node = collect_node(LocalTransport(str(root)), "w1", max_bytes=len(roomy.raw) // 2, timeout=60).node
    assert node.kubelet_journal is not None and node.kubelet_journal.truncated and node.kubelet_journal.lines == []


def test_snapshots_carry_the_excerpt_and_load_without_it(busy_node, tmp_path, tools):  # noqa: F811
    journalctl_prints(tools, (FIXTURES / "short-iso.txt").read_text())
    root = make_node_root(busy_node, tmp_path / "w1")
    (root / "var/log/journal").mkdir(parents=True)
    node = collect_node(LocalTransport(str(root)), "w1", timeout=60).node
    snap = Snapshot(captured_at="2026-12-02T12:00:00Z", source=SnapshotSource(kind="bundle"), nodes=[node])
    save(snap, tmp_path / "snap.json.gz")
    assert load(tmp_path / "snap.json.gz").nodes[0].kubelet_journal == node.kubelet_journal
    data = to_dict(snap)
    del data["nodes"][0]["kubelet_journal"]  # a snapshot written before the field existed
    assert from_dict(data).nodes[0].kubelet_journal is None
