"""06-postmortem tells a running pod its kubelet rejected at a restart from a new pod that failed
admission: which check (the kubelet's reason and words), which CPUs it held, and when the kubelet
started. The evidence is collected from the sandbox with the live source and the node files, before
and after full-pcpus-only is added, as a user's 01 runs would keep it."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
import yaml

from factories import node, pod, settings, snapshot
from tmnb.postmortem import rejections
from tmnb.postmortem.evidence import open_evidence
from tmnb.postmortem.report import verdict
from tmnb.snapshot import Allocation, KubeletInfo, save

WORDS = "SMT Alignment Error: requested 1 cpus not multiple cpus per core = 2"


def _collect(box, tmp_path: Path, folder: Path) -> None:  # type: ignore[no-untyped-def]
    from tmnb.sources.resolve import open_snapshot, save_to_run

    folder.mkdir(parents=True)
    kubeconfig = str(box.write_kubeconfig(tmp_path / "kubeconfig"))
    save_to_run(
        open_snapshot("live", "", kubeconfig=kubeconfig, node_files=f"dir:{tmp_path / 'run' / 'nodes'}"), folder
    )
    (folder / "manifest.json").write_text(json.dumps({"notebook": "01-inventory.ipynb", "status": "ok"}))


@pytest.fixture(scope="module")
def restart_evidence(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tmnb.twin.sandbox import Sandbox

    tmp_path = tmp_path_factory.mktemp("restart")
    evidence = tmp_path / "evidence"
    static = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "single-numa-node"}
    twin = snapshot(
        [node("w1", kubelet=KubeletInfo(settings=settings(**static)))],
        [pod("web-5d9c7-aaaaa", "w1"), pod("cache-7f6b8-ccccc", "w1", cpu="1")],
    )
    with Sandbox(twin, tmp_path / "run") as box:
        _collect(box, tmp_path, evidence / "01-before")
        config = box.cluster.kubelets["w1"].root / "var/lib/kubelet/config.yaml"
        doc = yaml.safe_load(config.read_text())
        config.write_text(yaml.safe_dump({**doc, "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}}))
        assert box.cluster.restart_kubelet("w1") is None
        # a new pod of 3 CPUs, created after the restart, fails admission the ordinary way
        box.cluster.create_pod("app", {
            "metadata": {"name": "odd-new"},
            "spec": {"nodeName": "w1", "containers": [{"name": "main", "image": "pause",
                     "resources": {"requests": {"cpu": "3", "memory": "1Gi"},
                                   "limits": {"cpu": "3", "memory": "1Gi"}}}]},
        })  # fmt: skip
        _collect(box, tmp_path, evidence / "02-after")
    return evidence


def test_a_restart_rejection_is_named_as_such(restart_evidence: Path) -> None:
    found = open_evidence(restart_evidence)
    table = rejections.rejected_pods(found).set_index("pod")
    cache = table.loc["app/cache-7f6b8-ccccc"]
    assert (cache["reason"], cache["message"]) == ("SMTAlignmentError", f"Pod was rejected: {WORDS}")
    assert cache["rejected at"].startswith("kubelet restart 20") and cache["held CPUs"] == "1 (main)"
    fresh = table.loc["app/odd-new"]
    assert (fresh["reason"], fresh["rejected at"], fresh["held CPUs"]) == ("SMTAlignmentError", "admission", "")
    explained = {d.pod: d for _, d, _ in rejections.diagnoses(found)}
    d = explained["app/cache-7f6b8-ccccc"]
    assert d.reason == "SMTAlignmentError" and d.message == WORDS and d.reproduced
    assert "rejected at a kubelet restart at 20" in d.why and "the CPUs it held, 1 (main)" in d.why
    assert "the CPU manager's full-pcpus-only SMT alignment" in d.why
    assert "rejected at a kubelet restart" not in explained["app/odd-new"].why
    # the cache pod's ReplicaSet replaces it, and full-pcpus-only refuses the replacements as new pods
    replacements = table[table["owner"] == "ReplicaSet/cache-7f6b8-ccccc-rs"].drop("app/cache-7f6b8-ccccc")
    assert set(replacements["rejected at"]) <= {"admission"}
    headline = verdict(found).headline
    assert f"{len(table)} pod(s) refused at admission, 1 of them running pods rejected at a kubelet restart" in headline


def test_without_a_log_an_earlier_snapshot_that_saw_it_running_says_so(tmp_path: Path) -> None:
    """No kubelet journal: the pod ran with exclusive CPUs in the first snapshot, failed in the second."""
    running = pod("p", "w1", cpu="1")
    held = Allocation(pod_uid="uid-p", namespace="app", pod="p", container="main", cpuset="5", exclusive=True)
    before = dataclasses.replace(
        snapshot([node("w1", allocations=[held])], [running]), captured_at="2026-12-01T10:00:00Z"
    )
    words = "Pod was rejected: Resources cannot be allocated with Topology locality"
    failed = dataclasses.replace(running, phase="Failed", reason="TopologyAffinityError", message=words)
    new = pod("q", "w1", phase="Failed", reason="TopologyAffinityError", created="2026-12-01T11:00:00Z")
    after = dataclasses.replace(snapshot([node("w1")], [failed, new]), captured_at="2026-12-01T12:00:00Z")
    for name, snap in (("01-before", before), ("02-after", after)):
        (tmp_path / name).mkdir()
        save(snap, tmp_path / name / "snapshot.json.gz")
    found = open_evidence(tmp_path)
    table = rejections.rejected_pods(found).set_index("pod")
    assert table.loc["app/p", "rejected at"] == "kubelet restart" and table.loc["app/p", "held CPUs"] == "5 (main)"
    assert table.loc["app/q", "rejected at"] == "admission"
    assert set(rejections.at_restart(found)) == {"uid-p"}


@pytest.mark.notebook
def test_06_says_the_restart_did_it(restart_evidence: Path, tmp_path: Path) -> None:
    from conftest import ROOT
    from tmnb.cli.run.runner import run

    result = run(ROOT / "notebooks" / "06-postmortem.ipynb", params={"evidence": str(restart_evidence)}, out=tmp_path)
    assert result.status == "ok", result.message
    html = result.html.read_text()
    assert "1 of them running pods rejected at a kubelet restart" in html
    assert "rejected at a kubelet restart at 20" in html and "the CPUs it held, 1 (main)" in html
