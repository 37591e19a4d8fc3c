"""The guided rollout end to end on the sandbox, through the real ``tmnb rollout`` CLI.

Three nodes like the sandbox twin (2 NUMA nodes x 4 cores x 2 threads, static CPU manager with
CPUs 0,8 reserved), each running one replica of app/web (Guaranteed, 2 CPUs) under a PDB with
maxUnavailable 1, and one DaemonSet pod.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from factories import node, pod, settings, snapshot
from tmnb.cli.main import main
from tmnb.rollout.journal import Journal
from tmnb.snapshot import DisruptionBudget, KubeletInfo, OwnerRef, Snapshot
from tmnb.twin.sandbox import Faults, Sandbox

NODES = ("w1", "w2", "w3")
STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "none"}
CONFIG = "var/lib/kubelet/config.yaml"
CPU_STATE = "var/lib/kubelet/cpu_manager_state"


def fleet(**kubelet: object) -> Snapshot:
    info = KubeletInfo(settings=settings(**STATIC), config_file="/var/lib/kubelet/config.yaml", **kubelet)
    nodes = [node(n, kubelet=info) for n in NODES]
    web = OwnerRef(
        kind="ReplicaSet", name="web-5d9c7", uid="rs-web", controller_kind="Deployment", controller_name="web"
    )
    pods = [pod(f"web-5d9c7-{n}", n, owner=web, labels={"app": "web"}) for n in NODES]
    for n in NODES:
        ds = OwnerRef(kind="DaemonSet", name="node-exporter", uid="ds-ne")
        pods.append(pod(f"ne-{n}", n, cpu="100m", qos="Burstable", namespace="monitoring", owner=ds))
    pdb = DisruptionBudget(namespace="app", name="web-pdb", selector={"app": "web"}, max_unavailable="1")
    return snapshot(nodes, pods, disruption_budgets=[pdb])


@pytest.fixture(name="box")
def box_fixture(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(fleet(), tmp_path / "run", controller_interval=0.1) as sandbox:
        sandbox.cluster.ready_after = 0.2
        yield sandbox


@pytest.fixture(name="kubeconfig")
def kubeconfig_fixture(box: Sandbox, tmp_path: Path) -> Path:
    return box.write_kubeconfig(tmp_path / "kubeconfig")


def digest(box: Sandbox, name: str, rel: str = CONFIG) -> str:
    path = box.cluster.kubelets[name].root / rel
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else "absent"


def config(box: Sandbox, name: str) -> dict:  # type: ignore[type-arg]
    return yaml.safe_load((box.cluster.kubelets[name].root / CONFIG).read_text())


def rollout(kubeconfig: Path, state: Path, *args: str) -> int:
    argv = [
        "rollout",
        "execute",
        "--kubeconfig",
        str(kubeconfig),
        "--executor",
        "sandbox",
        "--state-dir",
        str(state),
        "--evict-retry",
        "0.2",
        "--ready-timeout",
        "5",
        "--drain-timeout",
        "20",
        "--wave-size",
        "2",
        *args,
    ]
    return main(argv)


def records(state: Path, change_id: str) -> list[dict]:  # type: ignore[type-arg]
    return Journal(state / "journal.jsonl", change_id).records()


def test_happy_path_canary_then_wave_none_to_best_effort_to_restricted(
    box: Sandbox, kubeconfig: Path, tmp_path: Path
) -> None:
    for change, policy in (("to-best-effort", "best-effort"), ("to-restricted", "restricted")):
        state = tmp_path / change
        code = rollout(
            kubeconfig,
            state,
            "--change-id",
            change,
            "--set",
            f"topologyManagerPolicy={policy}",
            "--canary",
            "w2",
            "--approve",
            "canary",
            "--approve",
            "wave-1",
        )
        assert code == 0
        for name in NODES:
            assert config(box, name)["topologyManagerPolicy"] == policy
            assert box.cluster.configz(name)["kubeletconfig"]["topologyManagerPolicy"] == policy
            assert not box.cluster.get("nodes", "", name)["spec"].get("unschedulable")
        journal = records(state, change)
        order = [r["node"] for r in journal if r["step"] == "node"]
        assert order == ["w2", "w1", "w3"]
        verified = [r for r in journal if r["step"] == "verify" and r["event"] == "done"]
        assert len(verified) == 3 and all(r["test_pod"]["admitted"] for r in verified)
        assert all(r["test_pod"]["cpuset"] for r in verified)  # static policy: exclusive CPUs checked
        assert (state / "snapshots" / "after-w2.json.gz").exists()


def test_unapproved_gate_writes_nothing_and_exits_5(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    before = {n: digest(box, n) for n in NODES}
    code = rollout(
        kubeconfig,
        tmp_path / "s",
        "--change-id",
        "c1",
        "--set",
        "topologyManagerPolicy=restricted",
        "--approve",
        "canary",
    )
    assert code == 5
    changed = [n for n in NODES if digest(box, n) != before[n]]
    assert len(changed) == 1  # the canary only; the wave waits for its approval
    # kubeadm set these kubelets up (kubeadm-flags.env, 10-kubeadm.conf): the change as its patch, beside the journal
    patch = tmp_path / "s" / "kubeadm-patches" / "kubeletconfiguration+strategic.yaml"
    assert yaml.safe_load(patch.read_text()) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "topologyManagerPolicy": "restricted",
    }


def test_canary_disagreeing_with_the_prediction_is_rolled_back(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    box.api.set_faults(Faults(reject_pods={"w1"}))
    before = {n: (digest(box, n), digest(box, n, CPU_STATE)) for n in NODES}
    state = tmp_path / "s"
    code = rollout(
        kubeconfig,
        state,
        "--change-id",
        "c1",
        "--set",
        "topologyManagerPolicy=restricted",
        "--canary",
        "w1",
        "--approve",
        "canary",
        "--approve",
        "wave-1",
    )
    assert code == 3
    assert digest(box, "w1") == before["w1"][0]  # byte for byte
    for other in ("w2", "w3"):
        assert (digest(box, other), digest(box, other, CPU_STATE)) == before[other]
    journal = records(state, "c1")
    failed = [r for r in journal if r["step"] == "verify" and r["event"] == "failed"]
    assert failed and "disagrees with the prediction" in failed[0]["error"]
    assert [r["event"] for r in journal if r["step"] == "rollback"] == ["intent", "done"]
    assert not any(r.get("node") in ("w2", "w3") for r in journal)
    assert box.cluster.configz("w1")["kubeletconfig"]["topologyManagerPolicy"] == "none"
    assert not box.cluster.get("nodes", "", "w1")["spec"].get("unschedulable")


def test_node_that_never_comes_back_is_rolled_back(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    box.api.set_faults(Faults(never_ready={"w3"}))
    before = digest(box, "w3")
    code = rollout(
        kubeconfig, tmp_path / "s", "--change-id", "c1", "--set", "topologyManagerPolicy=restricted",
        "--canary", "w3", "--approve", "canary", "--ready-timeout", "1",
    )  # fmt: skip
    assert code == 3
    assert digest(box, "w3") == before
    journal = records(tmp_path / "s", "c1")
    assert any(r["step"] == "wait-ready" and r["event"] == "failed" for r in journal)
    assert box.cluster.kubelets["w3"].running


def test_cpu_manager_policy_change_handles_the_state_file(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    state = tmp_path / "s"
    code = rollout(
        kubeconfig, state, "--change-id", "c1", "--set", "cpuManagerPolicy=none", "--set", "reservedSystemCPUs=",
        "--canary", "w1", "--approve", "canary",
    )  # fmt: skip
    assert code == 5  # canary done, the wave awaits approval
    assert box.cluster.kubelets["w1"].running
    assert box.cluster.configz("w1")["kubeletconfig"]["cpuManagerPolicy"] == "none"
    aside = box.cluster.kubelets["w1"].root / f"{CPU_STATE}.tmnb-c1"
    assert json.loads(aside.read_text())["policyName"] == "static"
    steps = [(r["step"], r["event"]) for r in records(state, "c1") if r["node"] == "w1" and r["event"] != "intent"]
    assert ("drain", "done") in steps and ("state-files", "done") in steps


def test_pdb_blocking_the_drain_times_out_uncordons_and_applies_nothing(
    box: Sandbox, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    strict = fleet()
    pdb = DisruptionBudget(namespace="app", name="web-pdb", selector={"app": "web"}, max_unavailable="0")
    strict = dataclasses.replace(strict, disruption_budgets=[pdb])
    box.stop()
    box = Sandbox(strict, tmp_path / "run-strict", controller_interval=0.1).start()
    kubeconfig = box.write_kubeconfig(tmp_path / "kubeconfig-strict")
    request.addfinalizer(box.stop)
    before = digest(box, "w1")
    state = tmp_path / "s"
    code = rollout(
        kubeconfig, state, "--change-id", "c1", "--set", "cpuManagerPolicy=none", "--set", "reservedSystemCPUs=",
        "--canary", "w1", "--approve", "canary", "--drain-timeout", "1",
    )  # fmt: skip
    assert code == 3
    assert digest(box, "w1") == before
    assert not box.cluster.get("nodes", "", "w1")["spec"].get("unschedulable")
    journal = records(state, "c1")
    drain = [r for r in journal if r["step"] == "drain" and r["event"] == "failed"]
    assert drain and "global timeout reached" in drain[0]["error"] and "disruption budget" in drain[0]["error"]
    assert not any(r["step"] == "apply" for r in journal)
    preflight = next(r for r in journal if r["step"] == "preflight" and r["event"] == "done")
    assert preflight["budgets_blocking"] == ["app/web-pdb (covers 1 pod(s) here)"]


def test_flag_override_is_refused_with_the_flag_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tmnb.snapshot import Setting

    flagged = settings(**STATIC)
    flagged["topologyManagerPolicy"] = Setting("none", "flag", "--topology-manager-policy")
    snap = fleet()
    one = node("w1", kubelet=KubeletInfo(settings=flagged, config_file="/var/lib/kubelet/config.yaml"))
    path = tmp_path / "snap.json"
    from tmnb.snapshot import save

    save(snapshot([one], []), path)
    code = main(
        ["rollout", "plan", "--change-id", "c1", "--source", str(path), "--set", "topologyManagerPolicy=restricted"]
    )
    out = capsys.readouterr()
    assert code == 2 and "--topology-manager-policy" in out.err
    assert snap.nodes  # the fleet itself is untouched


def test_api_faults_slow_the_rollout_but_never_half_apply(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    """One request in five throttled, one node read in ten failing: retried (429s with Retry-After: 0,
    so the test waits for no second per throttle; the wait itself is tests/sources/test_retry.py's),
    never leaving a node half-applied."""
    box.api.set_faults(Faults(throttle_rate=0.2, error_rates={"/api/v1/nodes": 0.1}, seed=5, retry_after=0))
    state = tmp_path / "s"
    code = rollout(
        kubeconfig, state, "--change-id", "c1", "--set", "topologyManagerPolicy=best-effort",
        "--canary", "w1", "--approve", "canary", "--approve", "wave-1",
    )  # fmt: skip
    box.api.set_faults(Faults())
    journal = records(state, "c1")
    finished = {r["node"]: r["result"] for r in journal if r["step"] == "node"}
    assert code in (0, 3)
    for name in NODES:
        value = box.cluster.configz(name)["kubeletconfig"]["topologyManagerPolicy"]
        if finished.get(name) == "done":
            assert value == "best-effort"
        else:
            assert value == "none"  # untouched or rolled back, never half-applied
    if code == 0:
        assert set(finished.values()) == {"done"}


def test_killed_mid_run_resumes_from_the_journal(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    state = tmp_path / "s"
    argv = [
        sys.executable, "-m", "tmnb.cli", "rollout", "execute", "--kubeconfig", str(kubeconfig),
        "--executor", "sandbox", "--state-dir", str(state), "--change-id", "c1",
        "--set", "topologyManagerPolicy=best-effort", "--canary", "w1", "--wave-size", "2",
        "--approve", "canary", "--approve", "wave-1", "--evict-retry", "0.2", "--ready-timeout", "5",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = state / "journal.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        text = journal.read_text() if journal.exists() else ""
        if '"step": "apply"' in text or '"step":"apply"' in text:
            break
        if child.poll() is not None:
            pytest.fail(f"the rollout ended before the kill: {child.stderr.read().decode() if child.stderr else ''}")
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.wait()
    code = rollout(
        kubeconfig, state, "--change-id", "c1", "--set", "topologyManagerPolicy=best-effort",
        "--canary", "w1", "--approve", "canary", "--approve", "wave-1",
    )  # fmt: skip
    assert code == 0
    for name in NODES:
        assert box.cluster.configz(name)["kubeletconfig"]["topologyManagerPolicy"] == "best-effort"
    journal_records = records(state, "c1")
    backups = [r for r in journal_records if r["node"] == "w1" and r["step"] == "backup" and r["event"] == "done"]
    assert len(backups) == 1  # the backup of the first run is the one kept, never re-taken


def _latency_file(path: Path, after: float) -> Path:
    """latency_p99 of app/web every 10 s from 15 min ago to 20 min ahead: 0.100 s until 20 s from
    now, ``after`` from then on. The canary starts within those 20 s and the soak's after window
    opens one rate window (30 s) after it ends, so each window sees one value only."""
    now = time.time()
    rows = ["timestamp,query,namespace,container,value"]
    for i in range(-90, 120):
        t = now + i * 10
        value = 0.100 + 0.002 * (i % 3) if t <= now + 20 else after + 0.002 * (i % 3)
        rows.append(f"{t:.0f},latency_p99,app,web,{value:.3f}")
    path.write_text("\n".join(rows) + "\n")
    return path


@pytest.mark.clock
@pytest.mark.parametrize(("after", "code"), [(0.300, 3), (0.100, 5)])
def test_soak_after_the_canary_stops_on_a_regression(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, after: float, code: int
) -> None:
    metrics = _latency_file(tmp_path / "latency.csv", after)
    state = tmp_path / "s"
    got = rollout(
        kubeconfig, state, "--change-id", "c1", "--set", "topologyManagerPolicy=best-effort", "--canary", "w1",
        "--approve", "canary", "--soak", f"{{minutes: 5, metrics_file: {metrics}, wait: 0, rate_window: 30s}}",
    )  # fmt: skip
    assert got == code  # 3: stopped by the soak; 5: the soak passed and wave-1 awaits approval
    soak = [r for r in records(state, "c1") if r["step"] == "soak" and r["event"] != "intent"]
    assert [r["event"] for r in soak] == (["failed"] if code == 3 else ["done"])
    if code == 3:
        assert "latency_p99" in soak[0]["error"]
    assert config(box, "w2")["topologyManagerPolicy"] == "none"  # the wave is untouched either way


def test_manual_rollback_restores_the_bytes_and_the_old_settings(
    box: Sandbox, kubeconfig: Path, tmp_path: Path
) -> None:
    before = digest(box, "w1")
    state = tmp_path / "s"
    common = ("--change-id", "c1", "--set", "topologyManagerPolicy=restricted", "--canary", "w1")
    assert rollout(kubeconfig, state, *common, "--approve", "canary") == 5
    assert digest(box, "w1") != before
    argv = ["rollout", "rollback", "--kubeconfig", str(kubeconfig), "--executor", "sandbox", "--state-dir", str(state)]
    assert main([*argv, *common, "--node", "w1"]) == 2  # no approval for the rollback: nothing written
    assert digest(box, "w1") != before
    # the rollback reads the change's stored request: no --set to restate
    assert main([*argv, "--change-id", "c1", "--node", "w1", "--approve", "rollback", "--ready-timeout", "5"]) == 3
    assert digest(box, "w1") == before
    assert box.cluster.configz("w1")["kubeletconfig"]["topologyManagerPolicy"] == "none"
    assert [r["result"] for r in records(state, "c1") if r["step"] == "node"] == ["done", "rolled back"]


def test_a_change_id_stands_for_one_change(box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys) -> None:
    """Re-used for other nodes, a change id is refused naming both runs, and nothing is written."""
    state = tmp_path / "s"
    assert rollout(kubeconfig, state, "--change-id", "c1", "--set", "topologyManagerPolicy=restricted",
                   "--node", "w1", "--approve", "canary") == 0  # fmt: skip
    capsys.readouterr()
    before = digest(box, "w2")
    assert rollout(kubeconfig, state, "--change-id", "c1", "--set", "topologyManagerPolicy=restricted",
                   "--node", "w2", "--approve", "canary") == 2  # fmt: skip
    err = capsys.readouterr().err
    assert 'change c1 was run with nodes=["w1"], not nodes=["w2"]' in err and "new change id" in err
    assert digest(box, "w2") == before
    assert [r for r in records(state, "c1") if r.get("node") == "w2"] == []


FLAGS_ENV = "var/lib/kubelet/kubeadm-flags.env"


def kubeadm_args(box: Sandbox, name: str) -> str:
    env = box.cluster.kubelets[name].root / FLAGS_ENV
    return env.read_text().strip().removeprefix("KUBELET_KUBEADM_ARGS=").strip('"')


def planned_at_the_canary_gate(kubeconfig: Path, state: Path, capsys) -> tuple[str, ...]:  # type: ignore[no-untyped-def]
    change = ("--change-id", "c1", "--set", "topologyManagerPolicy=restricted", "--canary", "w1")
    assert rollout(kubeconfig, state, *change) == 5  # planned, waiting at the canary gate: nothing written
    capsys.readouterr()
    return change


def refused_before_any_write(box: Sandbox, kubeconfig: Path, state: Path, change: tuple[str, ...], capsys) -> str:  # type: ignore[no-untyped-def]
    """Approve the canary; the preflight refuses: exit 3, and the node is as it was: its files byte for
    byte, no backup taken, not cordoned, the kubelet not restarted, the journal with a failed preflight
    and no later step. The error printed."""
    root = box.cluster.kubelets["w1"].root
    files = {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "journal.log"}
    pid = box.cluster.kubelets["w1"].pid
    assert rollout(kubeconfig, state, *change, "--approve", "canary") == 3
    err = capsys.readouterr().err
    assert "w1 failed before anything was written (preflight: something else decides the target" in err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file() and p.name != "journal.log"} == files
    assert not (state / "backup").exists()
    assert not box.cluster.get("nodes", "", "w1")["spec"].get("unschedulable")
    assert box.cluster.kubelets["w1"].pid == pid and box.cluster.kubelets["w1"].running
    steps = [(r["step"], r["event"]) for r in records(state, "c1") if r.get("node") == "w1"]
    assert steps[:2] == [("preflight", "intent"), ("preflight", "failed")] and steps[-1] == ("node", "failed")
    assert {step for step, _ in steps} <= {"preflight", "rollback", "node"}  # no cordon, drain, backup, write
    return err


def test_a_flag_added_after_the_plan_is_refused_before_any_write(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys
) -> None:
    """The live-source flag override. A flag added to kubeadm-flags.env after the plan decides the target
    field at the next start; the running kubelet read its flags when it started, so /configz still shows
    the value the plan saw and the drift check passes. The preflight reads the unit and its flag files
    through the executor before the cordon and refuses, naming the flag."""
    state = tmp_path / "s"
    change = planned_at_the_canary_gate(kubeconfig, state, capsys)
    env = box.cluster.kubelets["w1"].root / FLAGS_ENV
    env.write_text(f'KUBELET_KUBEADM_ARGS="{kubeadm_args(box, "w1")} --topology-manager-policy=single-numa-node"\n')
    assert box.cluster.configz("w1")["kubeletconfig"]["topologyManagerPolicy"] == "none"  # as the plan saw it
    err = refused_before_any_write(box, kubeconfig, state, change, capsys)
    assert "topologyManagerPolicy is set by the command-line flag --topology-manager-policy=single-numa-node" in err
    assert "drifted" not in err


@pytest.mark.parametrize("how", ["unreadable", "changed since the kubelet started"])
def test_flags_the_preflight_cannot_know_are_refused_before_any_write(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys, how: str
) -> None:
    """The kubelet's flags cannot be known from the files when its flag file cannot be read (here a
    directory where kubeadm-flags.env belongs), or when its unit changed since it started (the running
    command line, /proc/<pid>/cmdline, differs from what the unit now says: the next restart runs other
    flags). Either refuses at the preflight, with nothing cordoned or written."""
    from tmnb.sources.node_root import UNIT_CHANGED, read_node_root

    state = tmp_path / "s"
    change = planned_at_the_canary_gate(kubeconfig, state, capsys)
    root = box.cluster.kubelets["w1"].root
    args = kubeadm_args(box, "w1")
    if how == "unreadable":
        (root / FLAGS_ENV).unlink()
        (root / FLAGS_ENV).mkdir()
        expected = (
            "kubelet unit: unreadable: /var/lib/kubelet/kubeadm-flags.env, an EnvironmentFile= of the kubelet unit"
        )
    else:
        # the kubelet as the unit started it (10-kubeadm.conf's ExecStart, its variables expanded), as the
        # node collector finds it: a process named kubelet and its command line
        argv = [
            "/usr/bin/kubelet",
            "--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf",
            "--kubeconfig=/etc/kubernetes/kubelet.conf",
            "--config=/var/lib/kubelet/config.yaml",
            *args.split(),
        ]
        proc = root / "proc" / str(box.cluster.kubelets["w1"].pid)
        proc.mkdir(parents=True)
        (proc / "comm").write_text("kubelet\n")
        (proc / "cmdline").write_bytes(b"\0".join(a.encode() for a in argv) + b"\0")
        same = read_node_root(root, name="w1", running=(proc / "cmdline").read_bytes())
        assert [i for i in same.issues if i.source == UNIT_CHANGED] == []  # the unit as the kubelet started
        (root / FLAGS_ENV).write_text(f'KUBELET_KUBEADM_ARGS="{args} --max-pods=50"\n')
        expected = (
            "kubelet unit: the running kubelet's command line differs from its systemd unit: the unit changed "
            "and the kubelet has not been restarted since (in the unit only: --max-pods=50)"
        )
    err = refused_before_any_write(box, kubeconfig, state, change, capsys)
    assert expected in err
