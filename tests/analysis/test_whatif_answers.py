"""No silent empty or zero answers (issue 25, item 3): what the what-if cannot predict it says, on
stderr in every format, naming the file that stopped it; a drain predicts the kubelet's refusal of a
checkpoint left in place; non-finite numbers never reach a threshold."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from factories import busy_snapshot, layered_node, node, pod, snapshot
from tmnb.cli.main import main
from tmnb.snapshot import save
from tmnb.sources.node_render import write_node_root

SET = ["--set", "topologyManagerPolicy=single-numa-node"]


@pytest.fixture
def pods(tmp_path: Path) -> Path:
    path = tmp_path / "pods.json"
    path.write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": []}))
    return path


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_node_root(layered_node(), tmp_path / "w1")  # memoryManagerPolicy Static


def _whatif(root: Path, pods: Path, *more: str) -> list[str]:
    return ["whatif", "--node-root", str(root), "--pods", str(pods), "--node-name", "w1", *SET, *more]


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_no_numa_information_is_an_error_not_an_empty_answer(tmp_path, capsys, fmt):
    path = tmp_path / "api-only.json"
    save(snapshot([node("w1", numa=[], cpus=[])], [pod("p0", "w1")]), path)
    assert main(["whatif", "--snapshot", str(path), *SET, "--format", fmt]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.splitlines() == [
        "tmnb: error: w1: nothing predicted: the snapshot has no CPU and NUMA topology for this node (an API-only "
        "collection); collect the node's files (node collector: ssh, node pod or a copied root) to predict admission"
    ]


def test_a_node_without_numa_information_beside_others_is_named_on_stderr(tmp_path, capsys):
    path = tmp_path / "mixed.json"
    save(snapshot([node("w1"), node("w2", numa=[], cpus=[])], [pod("p0", "w1")]), path)
    assert main(["whatif", "--snapshot", str(path), *SET, "--format", "json"]) == 0
    out, err = capsys.readouterr()
    records = [json.loads(line) for line in out.splitlines()]
    assert [r["pod"] for r in records if r["kind"] == "pod"] == ["p0"]
    assert [r["not_predicted"][:52] for r in records if r["kind"] == "node"] == [
        "",
        "the snapshot has no CPU and NUMA topology for this n",
    ]
    assert "tmnb: w2: nothing predicted: the snapshot has no CPU and NUMA topology" in err


def test_non_utf8_meminfo_on_a_static_memory_manager_node_names_the_file(root, pods, capsys):
    meminfo = root / "sys/devices/system/node/node0/meminfo"
    meminfo.write_bytes(meminfo.read_bytes() + b"Node 0 Caf\xe9: 0 kB\n")
    assert main(_whatif(root, pods, "--format", "json")) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(
        "tmnb: error: w1: nothing predicted: the Static memory manager needs every NUMA node's memory, and one is "
        "unknown: /sys/devices/system/node/node0/meminfo:5: not UTF-8 text: byte 0xe9"
    )


def test_non_utf8_meminfo_without_the_static_memory_manager_is_still_predicted(tmp_path, pods, capsys):
    plain = dataclasses.replace(layered_node(), kubelet=node("w1").kubelet)  # memory manager None
    root = write_node_root(plain, tmp_path / "w1")
    meminfo = root / "sys/devices/system/node/node0/meminfo"
    meminfo.write_bytes(meminfo.read_bytes() + b"Node 0 Caf\xe9: 0 kB\n")
    assert main(_whatif(root, pods, "--format", "json")) == 0
    assert "nothing predicted" not in capsys.readouterr().err


def test_drain_predicts_the_refusal_of_a_corrupt_checkpoint_it_leaves_in_place(root, pods, capsys):
    (root / "var/lib/kubelet/cpu_manager_state").write_text("{garbage")
    assert main(_whatif(root, pods, "--mode", "drain")) == 3
    err = capsys.readouterr().err
    assert (
        "tmnb: w1: the kubelet would not start: start cpu manager error: could not restore state from checkpoint: "
        "truncated or malformed JSON"
    ) in err


def test_cpu_online_beyond_linux_is_refused_naming_the_file(root, pods, capsys):
    (root / "sys/devices/system/cpu/online").write_text("0-99999999\n")
    assert main(_whatif(root, pods, "--format", "json")) == 2
    err = capsys.readouterr().err
    assert err.splitlines() == [
        "tmnb: error: w1: nothing predicted: the node's CPU and NUMA topology could not be read: "
        "/sys/devices/system/cpu/online: invalid CPU list '0-99999999': 99999999 is beyond the largest CPU id Linux "
        "supports (8191)"
    ]


def test_a_node_dir_linked_to_an_empty_dir_is_no_numa_node(tmp_path, root, pods, capsys):
    (tmp_path / "empty").mkdir()
    sysfs = root / "sys/devices/system/node"
    for zone in ("node0", "node1"):
        for f in sorted((sysfs / zone).rglob("*"), reverse=True):
            f.rmdir() if f.is_dir() else f.unlink()
        (sysfs / zone).rmdir()
    (sysfs / "node0").symlink_to(tmp_path / "empty")
    out = tmp_path / "s.json"
    assert main(["snapshot", "--source", f"node-root:{root}", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "tmnb: warning: numa: /sys/devices/system/node/node0: empty directory: not a NUMA node's" in err
    assert "tmnb: error: numa: /sys/devices/system/node: no nodeN directories" in err  # the clean answer
    assert json.loads(out.read_text())["nodes"][0]["numa"] != [{"id": 0, "cpus": "", "memory_total": 0}]
    assert main(_whatif(root, pods, "--format", "json")) == 2  # its memory is not made up
    assert "nothing predicted" in capsys.readouterr().err


@pytest.mark.parametrize("value", ["nan", "inf", "+inf", "NaN"])
def test_non_finite_threshold_is_refused_before_a_kernel_starts(tmp_path, capsys, value):
    out = tmp_path / "run"
    assert main(["run", "05", "--out", str(out), "-p", "threshold_pct", value]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and "parameter threshold_pct: expected a finite float" in err[0]
    assert not out.exists()


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["run", "04", "-p", "options", "{drain_timeout: .inf}"], "parameter options"),
        (["run", "04", "-p", "target", "{cpuManagerReconcilePeriod: .nan}"], "parameter target"),
        (["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicyOptions={a: .nan}"], "--set"),
        (["rollout", "plan", "--change-id", "c", "--set", "podsPerCore=.inf"], "--set"),
    ],
)
def test_non_finite_numbers_are_refused_in_every_parameter(tmp_path, capsys, argv, where):
    assert main([*argv[:2], *(["--out", str(tmp_path / "r")] if argv[0] == "run" else []), *argv[2:]]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and where in err[0] and "finite" in err[0], err


def test_busy_snapshot_still_predicts(tmp_path, capsys):
    path = tmp_path / "busy.json"
    save(dataclasses.replace(busy_snapshot(), pods=[pod("p0", "w1")]), path)
    assert main(["whatif", "--snapshot", str(path), *SET, "--format", "json"]) == 0
    assert capsys.readouterr().err == ""
