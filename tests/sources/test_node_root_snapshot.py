"""``tmnb snapshot --source node-root:DIR``: the one node ``whatif --node-root`` reads, written down
so a user can see what tmnb understood of it; every file it could not use is an issue."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from factories import layered_node
from published_schema import schema_errors
from tmnb.cli.main import main
from tmnb.errors import InputError
from tmnb.snapshot import load
from tmnb.sources.node_render import FLAGS_ENV, KUBELET_CONFIG, PCI_SYSFS, UNIT_DROPIN, write_node_root
from tmnb.sources.node_root import read_node_root
from tmnb.sources.resolve import open_snapshot


@pytest.fixture
def node_root(tmp_path: Path) -> Path:
    return write_node_root(layered_node(), tmp_path / "worker-7")


def test_snapshot_is_what_whatif_reads(node_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "w7.json.gz"
    assert main(["snapshot", "--source", f"node-root:{node_root}", "--out", str(out)]) == 0
    assert f"wrote {out}: 1 nodes, 0 pods" in capsys.readouterr().out
    snap = load(out)
    assert snap.source.kind == "bundle" and snap.source.detail == str(node_root)
    assert snap.nodes == [read_node_root(node_root, name="worker-7")]  # named after the directory


def test_collected_file_validates_against_the_published_schema(node_root: Path, tmp_path: Path) -> None:
    """A collected snapshot, read as plain JSON: the published schema, not the model that wrote it."""
    out = tmp_path / "w7.json"
    assert main(["snapshot", "--source", f"node-root:{node_root}", "--out", str(out)]) == 0
    document = json.loads(out.read_text())
    assert document["nodes"][0]["numa"] and document["nodes"][0]["kubelet"]["settings"]
    assert schema_errors(document) == []


def test_node_name_is_used(node_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "n.json"
    assert main(["snapshot", "--source", f"node-root:{node_root}", "--node-name", "w1", "--out", str(out)]) == 0
    assert [n.name for n in load(out).nodes] == ["w1"]


def test_every_unusable_file_is_an_issue(node_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (node_root / KUBELET_CONFIG).write_bytes(b"cpuManagerPolicy: st\xe9tic\n")
    (node_root / "var/lib/kubelet/cpu_manager_state").write_text('{"policyName": "static", "defaultCpu')
    (node_root / "var/lib/kubelet/memory_manager_state").unlink()
    gpu_numa = node_root / PCI_SYSFS / "gpu0/numa_node"  # registered, not allocated: NUMA from sysfs
    gpu_numa.parent.mkdir(parents=True)
    gpu_numa.write_text("zero\n")
    unit = node_root / UNIT_DROPIN
    required = unit.read_text().replace("EnvironmentFile=-/etc/default/kubelet", "EnvironmentFile=/etc/kubelet.env")
    unit.write_text(required)
    out = tmp_path / "w7.json"
    assert main(["snapshot", "--source", f"node-root:{node_root}", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    issues = [i.message for i in load(out).nodes[0].issues]
    on_node = f"/{gpu_numa.relative_to(node_root)}"
    for path in (
        f"/{KUBELET_CONFIG}",
        "/var/lib/kubelet/cpu_manager_state",
        "/var/lib/kubelet/memory_manager_state",
        on_node,
        "/etc/kubelet.env",
    ):
        assert any(path in m for m in issues), (path, issues)
        assert path in err
    assert any("expected a NUMA node id" in m for m in issues if on_node in m)
    assert json.loads(out.read_text())["nodes"][0]["numa"]  # the rest of the node is there


def test_optional_environment_file_is_not_an_issue(node_root: Path) -> None:
    assert not (node_root / "etc/default/kubelet").exists()  # the unit says EnvironmentFile=-/etc/default/kubelet
    assert not [i for i in read_node_root(node_root, name="w").issues if "/etc/default/kubelet" in i.message]
    assert (node_root / FLAGS_ENV).exists()


@pytest.mark.parametrize(
    ("source", "node_name", "expected"),
    [
        ("node-root:", None, "expected node-root:DIR"),
        ("node-root:/nonexistent/x", None, "expected a copy of a node's files"),
        ("sample", "w1", "node_name applies to source='node-root:DIR' only"),
    ],
)
def test_bad_node_root_sources_are_refused(source: str, node_name: str | None, expected: str) -> None:
    with pytest.raises(InputError, match=expected):
        open_snapshot(source, node_name=node_name)


def test_empty_node_name_is_refused(node_root: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["snapshot", "--source", f"node-root:{node_root}", "--node-name", " ", "--out", str(tmp_path / "x")])
    assert code == 2
    assert "tmnb: error: node name: a node name cannot be empty" in capsys.readouterr().err


def test_the_hosts_own_root_is_the_node_its_kubelet_registers(
    node_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``node-root:/`` on the node itself: "/" has no name, so the node is the one this host's kubelet
    registers: the host name, trimmed and lower-cased as the kubelet's GetHostname does (the node's
    files are the fixture's: this machine is no node)."""
    import socket

    import tmnb.sources.node_root as reader

    real = reader.read_node_root
    monkeypatch.setattr(
        reader, "read_node_root", lambda root, *, name: real(node_root if str(root) == "/" else root, name=name)
    )
    monkeypatch.setattr(socket, "gethostname", lambda: " Worker-9.Example\n")
    out = tmp_path / "here.json"
    assert main(["snapshot", "--source", "node-root:/", "--out", str(out)]) == 0
    assert [n.name for n in load(out).nodes] == ["worker-9.example"]
    assert main(["snapshot", "--source", "node-root:/", "--node-name", "w1", "--out", str(out), "--force"]) == 0
    assert [n.name for n in load(out).nodes] == ["w1"]


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["/usr/bin/kubelet", "--hostname-override=Node-A.internal", "--v=2"], "node-a.internal"),
        (["/usr/bin/kubelet", "--hostname-override", " node-b "], "node-b"),
        (["/usr/bin/kubelet", "--hostname-override="], "host-1"),  # empty: the kubelet takes the host name
        (["/usr/bin/kubelet", "--v=2"], "host-1"),
        ([], "host-1"),
    ],
)
def test_own_node_name_is_the_override_else_the_host_name(
    argv: list[str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import socket

    from tmnb.sources.resolve import own_node_name

    monkeypatch.setattr(socket, "gethostname", lambda: "Host-1")
    assert own_node_name(argv) == expected


def test_an_empty_host_name_is_a_user_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    from tmnb.sources.resolve import own_node_name

    monkeypatch.setattr(socket, "gethostname", lambda: "  ")
    with pytest.raises(InputError, match="empty hostname is invalid: name the node with --node-name"):
        own_node_name(["/usr/bin/kubelet"])
