"""A sandbox kubelet restart is the kubelet's: the checkpoint files on disk restored as the node's minor
restores them, the bound pods re-admitted in one batch (a rejected pod's CPUs stay taken until the
batch ends), a rejection shown as rejectPod shows it, and a refused start a node that stays NotReady.
The what-if of the same restart, made from the node's files before it, names the same pods."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from sandbox_fixtures import STATIC, twin

from factories import node, pod, settings, snapshot
from tmnb.analysis.whatif import replay_node
from tmnb.parse.klog import parse_kubelet_log
from tmnb.rollout.verify import restart_drift
from tmnb.snapshot import KubeletInfo, Snapshot
from tmnb.sources.node_root import read_node_root
from tmnb.twin.sandbox import Cluster

CONFIG = "var/lib/kubelet/config.yaml"
CPU_STATE = "var/lib/kubelet/cpu_manager_state"
FULL_PCPUS = {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}


def _edit(root: Path, fields: dict[str, Any]) -> None:
    doc = yaml.safe_load((root / CONFIG).read_text())
    doc.update(fields)
    (root / CONFIG).write_text(yaml.safe_dump(doc))


def _status(cluster: Cluster, name: str) -> dict[str, tuple[str, str, str]]:
    return {
        p["metadata"]["name"]: (p["status"]["phase"], p["status"].get("reason", ""), p["status"].get("message", ""))
        for p in cluster.items("pods")
        if p["spec"].get("nodeName") == name
    }


def _predicted(snap: Snapshot, root: Path, name: str, target: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """``whatif --mode restart --node-root``: the node as its files say, the change, the running pods."""
    before = read_node_root(root, name=name)
    replay = replay_node(before, snap.pods_on(name), target, mode="restart")
    assert not replay.refused, replay.refused
    return {r.name: (r.reason, r.message) for r in replay.results if not r.admitted}


def _rejected(cluster: Cluster, name: str) -> dict[str, tuple[str, str]]:
    return {
        pod: (reason, message.removeprefix("Pod was rejected: "))
        for pod, (phase, reason, message) in _status(cluster, name).items()
        if phase == "Failed"
    }


def test_full_pcpus_only_rejects_a_running_odd_sized_pod(tmp_path: Path) -> None:
    """The cache pod holds 1 exclusive CPU; full-pcpus-only checks the size before "already present"."""
    snap = twin()
    cluster = Cluster(snap, tmp_path / "nodes")
    root = cluster.kubelets["w1"].root
    assert root is not None
    predicted = _predicted(snap, root, "w1", FULL_PCPUS)
    held = (root / CPU_STATE).read_text()
    _edit(root, FULL_PCPUS)
    assert cluster.restart_kubelet("w1") is None
    words = "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2"
    assert _rejected(cluster, "w1") == {"cache-7f6b8-ccccc": ("SMTAlignmentError", words)} == predicted
    status = _status(cluster, "w1")
    assert status["cache-7f6b8-ccccc"] == ("Failed", "SMTAlignmentError", f"Pod was rejected: {words}")
    assert {p for p, s in status.items() if s[0] == "Running"} == {
        "web-5d9c7-aaaaa",
        "web-5d9c7-bbbbb",
        "node-exporter-w1",
    }
    events = [e for e in cluster.items("events", "app") if e["reason"] == "SMTAlignmentError"]
    assert [(e["type"], e["message"], e["involvedObject"]["name"]) for e in events] == [
        ("Warning", words, "cache-7f6b8-ccccc")
    ]
    log = parse_kubelet_log(cluster.kubelets["w1"].journal())
    (denied,) = [r for r in log.records if r.name == "smt_alignment_error"]
    assert denied.values["pod"] == "app/cache-7f6b8-ccccc" and denied.values["message"] == words
    # verification after the restart: the web pods kept 2,10 and 3,11, the cache pod lost CPU 1
    pods = cluster.items("pods", "app")
    assert restart_drift(held, (root / CPU_STATE).read_text(), pods) == [
        f"app/cache-7f6b8-ccccc: rejected at the restart (SMTAlignmentError: {words}); it held CPUs 1 (container main)"
    ]


def test_a_rejected_pod_keeps_its_cpus_for_the_whole_batch(tmp_path: Path) -> None:
    """Seven pods of one whole core fill the 14 unreserved CPUs. With full-pcpus-only every one is
    checked against the free physical CPUs, its own not counted; a rejected pod's CPUs stay taken
    until the batch ends, so the free count is 0 for each of them and all seven are rejected."""
    w1 = node("w1", kubelet=KubeletInfo(settings=settings(**STATIC)))
    pods = [pod(f"full-{i}", "w1", cpu="2", created=f"2025-01-01T00:0{i}:00Z") for i in range(7)]
    snap = snapshot([w1], pods)
    cluster = Cluster(snap, tmp_path / "nodes")
    root = cluster.kubelets["w1"].root
    assert root is not None
    assert {s[0] for s in _status(cluster, "w1").values()} == {"Running"}
    predicted = _predicted(snap, root, "w1", FULL_PCPUS)
    _edit(root, FULL_PCPUS)
    assert cluster.restart_kubelet("w1") is None
    words = (
        "SMT Alignment Error: not enough free physical CPUs: available physical CPUs = 0, requested CPUs = 2, "
        "CPUs per core = 2"
    )
    expected = {f"full-{i}": ("SMTAlignmentError", words) for i in range(7)}
    assert _rejected(cluster, "w1") == expected == predicted
    assert '"defaultCpuSet":"0-15"' in (root / CPU_STATE).read_text()  # the clean-up after the batch


def test_a_restart_the_state_check_refuses_leaves_the_node_down(tmp_path: Path) -> None:
    """More reserved CPUs over a checkpoint whose pod holds one of them: validateState refuses."""
    cluster = Cluster(twin(), tmp_path / "nodes")
    kubelet = cluster.kubelets["w1"]
    assert kubelet.root is not None
    _edit(kubelet.root, {"reservedSystemCPUs": "0-1,8-9"})
    inner = 'not all reserved cpus: "0-1,8-9" are present in defaultCpuSet: "0,4-9,12-15"'
    assert cluster.restart_kubelet("w1") == f"start cpu manager error: {inner}"
    ready = next(c for c in cluster.get("nodes", "", "w1")["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "Unknown"
    log = parse_kubelet_log(kubelet.journal())
    said = [(r.message, r.values.get("err")) for r in log.records if r.level == "E"]
    assert said == [
        ("Policy start error", inner),
        ("Failed to start ContainerManager", f"start cpu manager error: {inner}"),
    ]
    assert [r.name for r in log.records if r.name][-1] == "kubelet_exit"
    assert {s[0] for s in _status(cluster, "w1").values()} == {"Running"}  # the containers run on, unadmitted


def test_in_memory_kubelets_restart_over_what_they_wrote(tmp_path: Path) -> None:
    """Without node files the last written checkpoint is kept in memory and restored the same way."""
    snap = twin()
    cluster = Cluster(snap, None)
    kubelet = cluster.kubelets["w1"]
    files = kubelet._state_files()
    assert files is not None and isinstance(files.cpu_manager_state, str)
    assert '"uid-cache-7f6b8-ccccc":{"main":"1"}' in files.cpu_manager_state
    assert cluster.restart_kubelet("w1") is None
    assert {s[0] for s in _status(cluster, "w1").values()} == {"Running"}
