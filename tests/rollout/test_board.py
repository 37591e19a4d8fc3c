"""04-rollout's answer block (``board.answer``) for each state a rollout can be in, with no cluster.

A hand-made plan (canary w2, then wave-1 with w1 and w3; w4 excluded) and a journal that says how far
it got. What each answer must say comes from what its status means: a plan writes nothing and its
next step is the canary; a rollout waiting at a gate asks for that gate's approval, with the canary's
verification to decide on; a held change needs ``resume`` besides the gate; a completed one is
compared before and after from a fresh collection; a stopped or rolled-back one approves nothing
further and is explained from its evidence alone.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from printed_commands import problems
from tmnb.report.verdict import Verdict
from tmnb.rollout.board import answer
from tmnb.rollout.journal import NODE_STEP, Journal
from tmnb.rollout.plan import Excluded, NodeChange, RolloutPlan
from tmnb.rollout.run import Outcome, Rollout
from tmnb.rollout.session import Session

VERIFIED = "test pod admitted with CPUs 2,10 on NUMA node 0"


def _change(name: str, gate: str) -> NodeChange:
    return NodeChange(
        name, gate, "workers", {"topologyManagerPolicy": ("none", "best-effort")}, [], [], False, "no restart effect"
    )


PLAN = RolloutPlan(
    "b1",
    {"topologyManagerPolicy": "best-effort"},
    "2026-12-01T10:00:00Z",
    [_change("w2", "canary"), _change("w1", "wave-1"), _change("w3", "wave-1")],
    [Excluded("w4", "blocker: version-skew")],
)


def _session(state: Path, *, canary_done: bool) -> Session:
    """A session whose journal has the canary carried out and verified, or nothing yet; ``answer`` reads
    no snapshot and no readiness."""
    journal = Journal(state / "journal.jsonl", PLAN.change_id)
    if canary_done:
        journal.record("w2", "verify", "done", result=VERIFIED)
        journal.record("w2", NODE_STEP, "done", result="done")
    rollout = Rollout(PLAN, journal=journal, run_dir=state)
    return Session(None, None, PLAN, rollout, state, None, executor="ssh")  # type: ignore[arg-type]


def _runs(command: str) -> list[tuple[str, dict[str, str]]]:
    """Each ``tmnb run NOTEBOOK -p NAME VALUE ...`` of a printed command, as (notebook, parameters),
    once the command is known to run as printed (``printed_commands.problems``)."""
    assert problems(command) == []
    runs: list[tuple[str, dict[str, str]]] = []
    words = shlex.split(command)
    for i, word in enumerate(words):
        if word == "run" and words[i - 1] == "tmnb":
            runs.append((words[i + 1], {}))
        elif word == "-p":
            runs[-1][1][words[i + 1]] = words[i + 2]
    return runs


def _approved(params: dict[str, str]) -> list[str]:
    return re.findall(r"[a-z][a-z0-9-]*", params["approve"])


def _section(verdict: Verdict, title: str) -> list[str]:
    return dict(verdict.sections)[title]


@pytest.fixture(autouse=True)
def _no_frontend(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("JPY_SESSION_NAME", raising=False)


def test_a_plan_writes_nothing_and_its_next_step_is_the_canary(tmp_path: Path) -> None:
    session = _session(tmp_path, canary_done=False)
    outcome = Outcome("planned", dict.fromkeys(("w2", "w1", "w3"), "pending"), "canary", "plan only", "plan")
    verdict = answer(session, outcome)
    assert verdict.tone == "ok"
    assert "3 node(s) in 2 gate(s)" in verdict.headline and "nothing written" in verdict.headline
    assert _section(verdict, "Nodes") == []  # all pending: the gates say it
    assert _section(verdict, "Excluded") == ["**w4**: blocker: version-skew"]
    assert any("canary" in line for line in _section(verdict, "What to do next"))
    [(notebook, params)] = _runs(verdict.commands[0])
    assert notebook == "04-rollout" and params["mode"] == "execute" and params["change_id"] == "b1"
    assert _approved(params) == ["canary"]


def test_a_rollout_waiting_at_a_gate_asks_for_that_gate_with_the_canarys_evidence(tmp_path: Path) -> None:
    session = _session(tmp_path, canary_done=True)
    nodes = {"w2": "done", "w1": "pending", "w3": "pending"}
    verdict = answer(session, Outcome("awaiting approval", nodes, "wave-1", "waiting at gate wave-1", "execute"))
    assert verdict.tone == "warn" and "wave-1" in verdict.headline
    assert "**w2** (canary): done" in _section(verdict, "Nodes")
    assert any(VERIFIED in line for line in _section(verdict, "What the canary showed"))
    [(notebook, params)] = _runs(verdict.commands[0])
    assert notebook == "04-rollout" and params["mode"] == "execute"
    assert _approved(params) == ["canary", "wave-1"]


def test_a_held_change_needs_resume_besides_the_gate(tmp_path: Path) -> None:
    session = _session(tmp_path, canary_done=True)
    nodes = {"w2": "done", "w1": "pending", "w3": "pending"}
    outcome = Outcome("held", nodes, "wave-1", "held at gate wave-1: aborted by a person", "execute")
    verdict = answer(session, outcome)
    assert verdict.tone == "warn" and verdict.headline.startswith("Held")
    [(notebook, params)] = _runs(verdict.commands[0])
    assert notebook == "04-rollout"
    assert set(_approved(params)) == {"canary", "resume", "wave-1"}


def test_a_completed_rollout_is_compared_from_a_fresh_collection(tmp_path: Path) -> None:
    session = _session(tmp_path, canary_done=True)
    outcome = Outcome("completed", dict.fromkeys(("w2", "w1", "w3"), "done"), None, "every node", "execute")
    verdict = answer(session, outcome)
    assert verdict.tone == "ok" and "complete" in verdict.headline
    (collect, inventory), (compare, params) = _runs(verdict.commands[0])
    assert collect == "01-inventory" and inventory["source"] == "live"
    assert compare == "05-compare"
    assert Path(params["before"]).is_relative_to(tmp_path) and Path(params["change"]) == tmp_path / "journal.jsonl"
    assert all(name in params["node_selector"] for name in ("w1", "w2", "w3"))


@pytest.mark.parametrize("status", ["stopped", "rolled back"])
def test_a_stopped_rollout_approves_nothing_more_and_is_read_from_its_evidence(tmp_path: Path, status: str) -> None:
    session = _session(tmp_path, canary_done=False)
    nodes = {"w2": status if status == "rolled back" else "failed", "w1": "pending", "w3": "pending"}
    verdict = answer(session, Outcome(status, nodes, "canary", "w2: verification failed", "execute"))  # type: ignore[arg-type]
    assert verdict.tone == "stop" and status in verdict.headline
    assert any("Approve no further gate" in line for line in _section(verdict, "What to do next"))
    [(notebook, params)] = _runs(verdict.commands[0])
    assert notebook == "06-postmortem" and Path(params["evidence"]) == tmp_path
    assert "approve" not in params


@pytest.mark.parametrize(
    ("status", "next_gate", "label"),
    [("planned", "canary", "Next"), ("awaiting approval", "wave-1", "Next"), ("held", "wave-1", "Resume and go on")],
)
def test_the_verdict_and_the_summary_print_one_next_command(
    tmp_path: Path, status: str, next_gate: str, label: str
) -> None:
    """The top box and the summary of 04 say the same next command: after an Abort they once differed
    (the summary's left out the gates already done)."""
    session = _session(tmp_path, canary_done=next_gate == "wave-1")
    nodes = {"w2": "done" if next_gate == "wave-1" else "pending", "w1": "pending", "w3": "pending"}
    outcome = Outcome(status, nodes, next_gate, "", "execute")  # type: ignore[arg-type]
    [command] = answer(session, outcome).commands
    assert f"{label}: `{command}`" in session.summary(outcome).split("\n\n")
