"""Every command 04-rollout prints works verbatim from any directory, and no cell shows a raw dict or
an exit code: the notebook is run as a user would (``tmnb run``, default state folder under
``$TMNB_REPORTS``), each command is taken from what its executed cells show (the verdict at the top
and the summary) and run in a shell from a directory outside the checkout, against the sandbox.

Walk: execute the canary (its run folder's manifest: pending at wave-1, the journal kept); hold the
change as the Abort button does, and its printed next command (wave-1) is held; the held run's
printed resume command carries wave-1 out; the compare command its report prints runs; and a
rolled-back canary's evidence packs into a bundle that verifies and reads as its folders do, and its
printed postmortem command runs without a cluster and explains the rollback.

These are also the module's end-to-end 04 runs in execute mode: test_rollout_notebook runs its plan
mode and an unapproved execute, test_rollout_kill a killed kernel, test_rollout_browser a person.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tmnb.cli.main import main
from tmnb.postmortem.evidence import open_evidence
from tmnb.rollout.journal import Journal
from tmnb.rollout.run import Rollout
from tmnb.twin.sandbox import Faults, Sandbox

from .test_rollout_sandbox import NODES, config
from .user_shell import box_fixture, env_fixture, run_04, shell, shown, state  # noqa: F401  (fixtures)

pytestmark = pytest.mark.notebook

#: a printed command: the verdict's "Next command" block, or a summary line's backticked command
_VERDICT = re.compile(r"\*\*Next command\*\*\n```\n(.+?)\n```", re.S)
_SUMMARY = re.compile(r"^(Next|Compare|Resume and go on): `(.+)`$", re.M)


def commands(text: str) -> list[str]:
    return [*_VERDICT.findall(text), *(m[1] for m in _SUMMARY.findall(text))]


def no_raw_values(text: str) -> None:
    """No exit code and no dict's repr (a printed command's JSON parameter aside)."""
    for command in commands(text):
        text = text.replace(command, "")
    assert "exit_code" not in text
    found = re.search(r".*(\{'|\{\").*", text)
    assert found is None, f"a raw dict in a cell's output: {found[0] if found else ''}"


def latest(env: dict[str, str], notebook: str) -> Path:
    """The newest run folder of ``notebook`` in the default reports folder (a printed command's run)."""
    return sorted(Path(env["TMNB_REPORTS"]).glob(f"*{notebook}*"))[-1]


def manifest(folder: Path) -> dict:  # type: ignore[type-arg]
    return json.loads((folder / "manifest.json").read_text())


def test_each_printed_command_runs_from_any_directory(box: Sandbox, env: dict[str, str], tmp_path: Path) -> None:
    target = json.dumps({"topologyManagerPolicy": "best-effort"})
    code, text = run_04(env, tmp_path / "a", change_id="cmd-1", target=target, mode="execute", approve="[canary]")
    assert code == 5 and manifest(tmp_path / "a")["status"] == "pending"
    outcome = manifest(tmp_path / "a")["results"]["rollout"]
    assert outcome["nodes"] == {"w2": "done", "w1": "pending", "w3": "pending"} and outcome["next_gate"] == "wave-1"
    assert (tmp_path / "a" / "journal.jsonl").exists()  # the evidence travels with the run folder
    no_raw_values(text)
    printed = commands(text)
    assert len(printed) == 3  # the verdict's next command, the summary's next and compare
    assert config(box, "w2")["topologyManagerPolicy"] == "best-effort"
    assert config(box, "w1")["topologyManagerPolicy"] == "none"
    # the verdict's command approves wave-1: it carries the change out on every node; the summary's is the same
    assert "-p approve '[canary, wave-1]'" in printed[0] and printed[2] == printed[0]
    # before running it, hold the change as the notebook's Abort button does
    session_journal = Journal(state(env, "cmd-1") / "journal.jsonl", "cmd-1")
    records = session_journal.records()
    assert not any(r.get("hold") for r in records)
    from tmnb.rollout.plan import RolloutPlan

    plan = RolloutPlan.from_json(json.loads((state(env, "cmd-1") / "plan.json").read_text()))
    Rollout(plan, journal=session_journal, run_dir=state(env, "cmd-1")).abort("wave-1")
    assert shell(printed[0], env, tmp_path) == 5  # held: nothing runs without resume
    assert config(box, "w1")["topologyManagerPolicy"] == "none"
    held = latest(env, "04-rollout")  # the held run's own report (its default run folder)
    text = shown(held / "04-rollout.ipynb")
    assert "Held" in text and manifest(held)["results"]["rollout"]["status"] == "held"
    no_raw_values(text)
    resume = commands(text)
    assert len(resume) == 3 and "-p approve '[canary, resume, wave-1]'" in resume[0]
    assert resume[2] == resume[0]  # the top box and the summary say the one next command
    assert shell(resume[0], env, tmp_path) == 0
    for name in NODES:
        assert config(box, name)["topologyManagerPolicy"] == "best-effort"
    resumed = [r for r in session_journal.records() if r.get("hold") == "resume"]
    assert [r["gate"] for r in resumed] == ["wave-1"]
    # the resumed run's own report (its default run folder) says it is complete, with the compare command
    done = latest(env, "04-rollout")
    assert done != held and manifest(done)["results"]["rollout"]["status"] == "completed"
    text = shown(done / "04-rollout.ipynb")
    assert "Rollout complete" in text and "wave-1: w1: done" in text
    no_raw_values(text)
    compare = commands(text)
    assert len(compare) == 2 and compare[0] == compare[1]  # the verdict's and the summary's
    assert shell(compare[0], env, tmp_path) == 0
    assert (state(env, "cmd-1") / "after-inventory" / "snapshot.json.gz").exists()


def test_the_postmortem_command_of_a_rolled_back_canary_runs_without_a_cluster(
    box: Sandbox, env: dict[str, str], tmp_path: Path
) -> None:
    box.api.set_faults(Faults(reject_pods={"w3"}))  # verification fails: the canary is rolled back
    try:
        target = json.dumps({"topologyManagerPolicy": "restricted"})
        code, text = run_04(
            env, tmp_path / "a", change_id="cmd-2", target=target, nodes='["w3"]', canary="w3",
            mode="execute", approve="[canary]",
        )  # fmt: skip
    finally:
        box.api.set_faults(Faults())
    assert code == 3
    no_raw_values(text)
    printed = commands(text)
    assert len(printed) == 2 and printed[0] == f"tmnb run 06-postmortem -p evidence {state(env, 'cmd-2')}"
    # the run folder and the change's state folder pack into a bundle that verifies, and reads as they do
    bundle, kept = tmp_path / "evidence.tar.gz", state(env, "cmd-2")
    assert main(["evidence", "pack", str(tmp_path / "a"), str(kept), "--out", str(bundle)]) == 0
    assert main(["evidence", "verify", str(bundle)]) == 0
    packed, folder = open_evidence(bundle), open_evidence(kept)
    assert packed.journal == folder.journal and packed.before == folder.before
    assert [r["run"] for r in packed.runs] == ["a"]  # the 04 run folder, with its manifest
    # the printed command, with no cluster to reach
    assert shell(printed[0], {**env, "KUBECONFIG": str(tmp_path / "no-cluster")}, tmp_path) == 0
    report = latest(env, "06-postmortem")
    assert manifest(report)["results"]["journal_records"] > 10
    html = (report / "06-postmortem.html").read_text()
    assert "verify failed" in html and "rollback done" in html and "disagrees with the prediction" in html
    assert (report / "timeline.png").exists()
    # the kubelet's own start of each node, from the journal excerpts in the before snapshot
    assert manifest(report)["results"]["kubelet_records"] >= 3 * len(NODES)
    assert "Creating topology manager with none policy" in html and "kubelet_version" in html
