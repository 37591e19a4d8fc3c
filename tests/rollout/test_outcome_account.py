"""The journal and the summary say what was applied and what was restored, from the journal's own
records, in every outcome: rolled back, left applied (automatic rollback off), killed, resumed.
Each expected text is worked by hand from the steps the sandbox canary goes through: the edit of
/var/lib/kubelet/config.yaml, a kubelet restart (no state file moves for a Topology Manager policy),
then Ready, the verification and the uncordon."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rollout.test_rollout_sandbox import box_fixture, digest, kubeconfig_fixture, records, rollout
from tmnb.rollout.journal import Journal
from tmnb.rollout.request import RolloutRequest
from tmnb.rollout.session import prepare
from tmnb.twin.sandbox import Faults, Sandbox

__all__ = ["box_fixture", "kubeconfig_fixture"]  # the sandbox and its kubeconfig, per test

CHANGE = ("--change-id", "c1", "--set", "topologyManagerPolicy=restricted", "--node", "w3", "--canary", "w3")
CONFIG = "/var/lib/kubelet/config.yaml"


def back(state: Path) -> str:
    """The rollback command an account prints: the state folder named, as it is not the default one."""
    return f"`tmnb rollout rollback --change-id c1 --node w3 --approve rollback --state-dir {state.resolve()}`"


def _message(capsys: pytest.CaptureFixture[str]) -> str:
    return capsys.readouterr().err.strip().removeprefix("tmnb: rollout ")


def test_a_rollback_is_told_with_what_was_applied_and_restored(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box.api.set_faults(Faults(never_ready={"w3"}))
    capsys.readouterr()
    assert rollout(kubeconfig, tmp_path / "s", *CHANGE, "--approve", "canary", "--ready-timeout", "1") == 3
    message = _message(capsys)
    uncordon = [r["result"] for r in records(tmp_path / "s", "c1") if r["step"] == "uncordon"]
    assert uncordon == [f"uncordoned: the rollback put back {CONFIG}; the old settings are in configz"]
    (closed,) = [r for r in records(tmp_path / "s", "c1") if r["step"] == "node"]
    assert message == f"rolled back: {closed['summary']}; the rollout stopped there"  # the journal says it too
    assert message == (
        "rolled back: w3 was rolled back (wait-ready: the node did not report Ready within 1s): it wrote "
        f"{CONFIG} and restarted the kubelet; the rollback put back {CONFIG} byte for byte, restarted the "
        "kubelet and saw the old settings in configz; uncordoned; the rollout stopped there"
    )


def test_a_node_left_applied_with_auto_rollback_off_is_told_as_such(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box.api.set_faults(Faults(never_ready={"w3"}))
    before = digest(box, "w3")
    capsys.readouterr()
    code = rollout(kubeconfig, tmp_path / "s", *CHANGE, "--approve", "canary", "--no-auto-rollback",
                   "--ready-timeout", "1")  # fmt: skip
    assert code == 3 and digest(box, "w3") != before
    assert box.cluster.get("nodes", "", "w3")["spec"].get("unschedulable")
    assert _message(capsys) == (
        f"stopped: w3 failed after it wrote {CONFIG} and restarted the kubelet (wait-ready: the node did "
        "not report Ready within 1s); automatic rollback is off, so nothing was restored: the node keeps what "
        f"was written; it is still cordoned; {back(tmp_path / 's')} puts it back"
    )


def test_a_killed_run_and_its_resume_are_told_from_the_journal(
    box: Sandbox,
    kubeconfig: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Killed while it waits for Ready (the sandbox answers every Kubernetes request in 5 s from the
    kubelet's restart on, set by the restart itself, so the wait is caught: the next Kubernetes
    request after the restart is the wait's own; a latency set by the test when it saw the cordon or
    the write in the journal came too late once the rollout was quick): the status and a plan-mode
    look say what was written and that the node is still cordoned, not "nothing was written"; the
    resume finishes it and says it resumed."""
    restart = box.cluster.restart_kubelet

    def restart_then_slow(name: str) -> str | None:
        error = restart(name)
        box.api.set_faults(Faults(latency=5.0))
        return error

    monkeypatch.setattr(box.cluster, "restart_kubelet", restart_then_slow)
    state = tmp_path / "s"
    argv = [
        sys.executable, "-m", "tmnb.cli", "rollout", "execute", "--kubeconfig", str(kubeconfig),
        "--executor", "sandbox", "--state-dir", str(state), *CHANGE, "--approve", "canary",
        "--ready-timeout", "120",
    ]  # fmt: skip
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    journal = Journal(state / "journal.jsonl", "c1")
    deadline = time.monotonic() + 90
    while not any((r["step"], r["event"]) == ("wait-ready", "intent") for r in journal.records()):
        if child.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"the rollout ended before the kill: {child.stderr.read().decode() if child.stderr else ''}")
        time.sleep(0.05)
    child.send_signal(signal.SIGKILL)
    child.wait()
    monkeypatch.undo()  # the resume restarts the kubelet as the sandbox does
    box.api.set_faults(Faults())
    assert [r["step"] for r in journal.records()][-1] == "wait-ready"
    interrupted = (
        f"w3 was interrupted at wait-ready after it wrote {CONFIG} and restarted the kubelet; nothing was "
        f"verified or restored; it is still cordoned: run again to resume, or {back(state)} puts it back"
    )
    from tmnb.cli.main import main

    capsys.readouterr()
    assert main(["rollout", "status", "--change-id", "c1", "--state-dir", str(state), "-v"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("c1: interrupted at wait-ready on w3 at ")
    assert interrupted.replace(" ", "") in re.sub(r"\s+", "", out)  # the account below the line, wrapped
    looked = prepare(RolloutRequest(target={"topologyManagerPolicy": "restricted"}, change_id="c1", source="live",
                                    kubeconfig=str(kubeconfig), nodes=("w3",), canary="w3", executor="sandbox",
                                    state_dir=str(state)))  # fmt: skip
    assert (
        looked.rollout.outcome().message
        == f"plan only: nothing was written by this run; next gate canary; {interrupted}"
    )

    assert rollout(kubeconfig, state, *CHANGE, "--approve", "canary") == 0
    done = (
        f"w3 has the change: it wrote {CONFIG} and restarted the kubelet, was verified and uncordoned; resumed "
        "after an interrupted run"
    )
    assert (
        capsys.readouterr().out.splitlines()[-1] == f"completed: every planned node has the change (1 node(s)); {done}"
    )
    assert [r["summary"] for r in records(state, "c1") if r["step"] == "node"] == [done]


LEFT = "left cordoned: it was cordoned before the change"
#: w2 the canary, then w3, which someone cordoned before the change (a hardware ticket, say)
AROUND_A_CORDON = ("--change-id", "c1", "--set", "topologyManagerPolicy=restricted", "--node", "w2", "--node", "w3",
                   "--canary", "w2", "--approve", "canary", "--approve", "wave-1")  # fmt: skip


def _cordoned(box: Sandbox, name: str) -> bool:
    spec = box.cluster.get("nodes", "", name)["spec"]
    taints = [t["key"] for t in spec.get("taints") or []]
    return bool(spec.get("unschedulable")) and taints == ["node.kubernetes.io/unschedulable"]


def test_a_node_cordoned_before_the_change_is_left_cordoned_and_every_account_says_so(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box.cluster.patch_node("w3", {"spec": {"unschedulable": True}})
    state = tmp_path / "s"
    capsys.readouterr()
    assert rollout(kubeconfig, state, *AROUND_A_CORDON) == 0
    printed = capsys.readouterr().out.splitlines()
    assert box.cluster.configz("w3")["kubeletconfig"]["topologyManagerPolicy"] == "restricted"
    assert _cordoned(box, "w3") and not box.cluster.get("nodes", "", "w2")["spec"].get("unschedulable")
    steps = {(r["node"], r["step"]): r for r in records(state, "c1") if r["event"] in ("done", "skipped")}
    assert steps[("w3", "uncordon")]["event"] == "skipped" and steps[("w3", "uncordon")]["result"] == LEFT
    assert steps[("w2", "uncordon")]["event"] == "done"
    done = f"w3 has the change: it wrote {CONFIG} and restarted the kubelet, was verified and {LEFT}"
    assert steps[("w3", "node")]["summary"] == done
    assert printed[-1] == f"completed: every planned node has the change (2 node(s)); w3 {LEFT}"
    from tmnb.cli.main import main

    assert main(["rollout", "status", "--change-id", "c1", "--state-dir", str(state), "-v"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[1] == f"  note: w3 {LEFT}"  # below the line
    assert done.replace(" ", "") in re.sub(r"\s+", "", out)  # the account, wrapped
    looked = prepare(RolloutRequest(target={"topologyManagerPolicy": "restricted"}, change_id="c1", source="live",
                                    kubeconfig=str(kubeconfig), nodes=("w2", "w3"), canary="w2", executor="sandbox",
                                    state_dir=str(state)))  # fmt: skip
    assert f"w3 {LEFT}" in looked.summary(looked.rollout.outcome()).splitlines()[0]  # 04's summary
    assert looked.plan.node("w3").warnings[-1].startswith("cordoned before the change: the rollout leaves it cordoned")


def test_a_rollback_leaves_a_node_cordoned_before_the_change_cordoned(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box.cluster.patch_node("w3", {"spec": {"unschedulable": True}})
    box.api.set_faults(Faults(never_ready={"w3"}))
    capsys.readouterr()
    assert rollout(kubeconfig, tmp_path / "s", *AROUND_A_CORDON, "--ready-timeout", "1") == 3
    assert _cordoned(box, "w3")
    uncordon = [(r["event"], r["result"]) for r in records(tmp_path / "s", "c1") if r["step"] == "uncordon"
                and r["node"] == "w3"]  # fmt: skip
    assert uncordon == [("skipped", LEFT)]
    assert _message(capsys).endswith(f"saw the old settings in configz; {LEFT}; the rollout stopped there")


def test_a_node_cordoned_by_someone_else_after_the_preflight_is_not_uncordoned(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preflight saw w3 schedulable; someone cordoned it before the rollout's own cordon step, which
    finds it cordoned and skips: the rollout did not cordon it, so it does not uncordon it."""
    from tmnb.rollout.steps import NodeRun

    preflight = NodeRun.preflight

    def then_someone_cordons(run: NodeRun) -> dict[str, object]:
        result = preflight(run)
        if run.node == "w3":
            box.cluster.patch_node("w3", {"spec": {"unschedulable": True}})
        return result

    monkeypatch.setattr(NodeRun, "preflight", then_someone_cordons)
    assert rollout(kubeconfig, tmp_path / "s", *AROUND_A_CORDON) == 0
    assert _cordoned(box, "w3")
    steps = {(r["step"], r["event"]): r for r in records(tmp_path / "s", "c1") if r["node"] == "w3"}
    assert steps[("preflight", "done")]["was_unschedulable"] is False
    assert steps[("uncordon", "skipped")]["result"] == LEFT
