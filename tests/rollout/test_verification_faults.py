"""The verification gate fires on a canary whose kubelet deviates from the prediction, in the CLI
and in 04-rollout: the sandbox's kubelet, restarted with the change, pins a new pod on other CPUs,
rejects a pod the model admits, or re-pins a running pod (``Faults.deviate``). Each time the verify
step fails with what differs, the canary is rolled back and every file of the node is as it was.

The expected CPUs are worked out from the sandbox fleet by hand: each node has 2 NUMA nodes of 4
cores, the threads of core k are CPUs k and k + 8, NUMA node 0 holds CPUs 0-3 and 8-11, CPUs 0,8 are
reserved and app/web holds core 1 (1,9). The test pod is one whole core: the model gives it the next
free core, 2,10; the deviating kubelet gives it (or, re-pinned, web) the highest free core of that
NUMA node, 3,11.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import ROOT
from tmnb.cli.main import main
from tmnb.rollout.journal import Journal
from tmnb.twin.sandbox import Faults, Sandbox

from .test_rollout_sandbox import NODES, box_fixture, kubeconfig_fixture, rollout  # noqa: F401  (fixtures)
from .user_shell import shown

TEST_POD = "the kubelet disagrees with the prediction for test pod default/tmnb-verify-"
PREDICTED = "predicted admitted, exclusive CPUs 2,10, NUMA node(s) 0; got "
#: what the verify step says for each deviation, and the files the rollback puts back
DEVIATIONS = {
    "cpuset": (f"{PREDICTED}admitted, exclusive CPUs 3,11, NUMA node(s) 0", ["/var/lib/kubelet/config.yaml"]),
    "reject": (f"{PREDICTED}rejected (TopologyAffinityError)", ["/var/lib/kubelet/config.yaml"]),
    "repin": (
        "running pods changed at the kubelet restart: app/web-5d9c7-w1 container main: 1,9 before the restart, "
        "3,11 after",
        ["/var/lib/kubelet/config.yaml", "/var/lib/kubelet/cpu_manager_state"],
    ),
}
TARGET = {"topologyManagerPolicy": "restricted"}


def node_files(box: Sandbox, name: str) -> dict[str, bytes]:
    """Every file of the node but the kubelet's journal (which only grows)."""
    root = box.cluster.kubelets[name].root
    assert root is not None
    files = (p for p in root.rglob("*") if p.is_file() and p.name != "journal.log")
    return {str(p.relative_to(root)): p.read_bytes() for p in files}


def stopped_and_restored(box: Sandbox, state: Path, before: dict[str, dict[str, bytes]], kind: str) -> str:
    """The verify step failed on w1 saying what differs, the rollback put back exactly the files it
    names, every node's files are as they were, and w1 runs the old settings, uncordoned. The node's
    closing account."""
    error, files = DEVIATIONS[kind]
    assert {n: node_files(box, n) for n in NODES} == before
    records = Journal(state / "journal.jsonl", "dev-1").records()
    failed = [r for r in records if r["step"] == "verify" and r["event"] == "failed"]
    assert len(failed) == 1 and failed[0]["node"] == "w1" and error in failed[0]["error"]
    if kind != "repin":
        assert TEST_POD in failed[0]["error"]
    rolled = [r for r in records if r["step"] == "rollback" and r["event"] != "intent"]
    assert [r["event"] for r in rolled] == ["done"] and sorted(rolled[0]["files"]) == files
    assert not any(r.get("node") in ("w2", "w3") for r in records)
    assert box.cluster.configz("w1")["kubeletconfig"]["topologyManagerPolicy"] == "none"
    assert not box.cluster.get("nodes", "", "w1")["spec"].get("unschedulable")
    closing = [r for r in records if r["step"] == "node"]
    assert [(r["node"], r["result"]) for r in closing] == [("w1", "rolled back")]
    summary = str(closing[0]["summary"])
    assert f"the rollback put back {', '.join(files)} byte for byte" in summary
    return summary


@pytest.mark.parametrize("kind", sorted(DEVIATIONS))
def test_the_cli_rolls_back_a_canary_whose_kubelet_deviates(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, kind: str
) -> None:
    box.api.set_faults(Faults(deviate={"w1": kind}))
    before = {n: node_files(box, n) for n in NODES}
    state = tmp_path / "s"
    code = rollout(
        kubeconfig, state, "--change-id", "dev-1", "--set", "topologyManagerPolicy=restricted",
        "--canary", "w1", "--approve", "canary", "--approve", "wave-1",
    )  # fmt: skip
    assert code == 3
    stopped_and_restored(box, state, before, kind)


@pytest.mark.notebook
@pytest.mark.parametrize("kind", sorted(DEVIATIONS))
def test_04_rolls_back_a_canary_whose_kubelet_deviates(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)
    box.api.set_faults(Faults(deviate={"w1": kind}))
    before = {n: node_files(box, n) for n in NODES}
    state, out = tmp_path / "s", tmp_path / "run"
    params = {
        "change_id": "dev-1", "target": json.dumps(TARGET), "canary": "w1", "waves": "2", "executor": "sandbox",
        "state_dir": str(state), "mode": "execute", "approve": "[canary, wave-1]",
        "options": "{ready_timeout: 5, drain_timeout: 20}",
    }  # fmt: skip
    argv = ["run", str(ROOT / "notebooks" / "04-rollout.ipynb"), "--out", str(out)]
    assert main([*argv, *(a for k, v in params.items() for a in ("-p", k, v))]) == 3
    summary = stopped_and_restored(box, state, before, kind)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["results"]["rollout"]["status"] == "rolled back"
    text = shown(out / "04-rollout.ipynb")
    assert "Rollout rolled back" in text and DEVIATIONS[kind][0] in text and summary in text
