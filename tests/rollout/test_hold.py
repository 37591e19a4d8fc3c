"""An Abort holds the change: every later run finds it held (no gate decided, exit 5), until one
approves ``resume``; the resume is journaled once and lifts only the hold, never the gate's own
approval. Driven through the journal, no cluster: the plan comes from the sandbox fleet."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.analysis.readiness import assess
from tmnb.errors import RolloutError
from tmnb.rollout.gates import decide
from tmnb.rollout.journal import Journal
from tmnb.rollout.plan import build_plan
from tmnb.rollout.run import Rollout

from .test_rollout_sandbox import fleet

TARGET = {"topologyManagerPolicy": "best-effort"}


def _rollout(tmp_path: Path, *approve: str) -> Rollout:
    snap = fleet()
    plan = build_plan(snap, assess(snap, TARGET), change_id="h1", canary="w2", waves=2)
    journal = Journal(tmp_path / "journal.jsonl", "h1")

    def unused(_: str) -> None:
        raise AssertionError("nothing runs while the change is held")

    return Rollout(
        plan, journal=journal, run_dir=tmp_path, mode="execute", approve=approve, executor_for=unused,  # type: ignore[arg-type]
        cluster=object(), collect=unused,  # type: ignore[arg-type]
    )  # fmt: skip


def test_an_abort_holds_every_later_run_until_resume(tmp_path: Path) -> None:
    first = _rollout(tmp_path)
    assert decide(first, "canary", interactive=True) == "ask"
    first.abort("canary")
    again = _rollout(tmp_path, "canary")  # a later run, the gate approved by parameter
    assert decide(again, "canary") == "held"
    outcome = again.outcome()
    assert (outcome.status, outcome.exit_code, outcome.next_gate) == ("held", 5, "canary")
    assert "approve resume" in outcome.message
    assert again.run() == outcome  # Rollout.run (the CLI) stops at the hold, nothing written
    with pytest.raises(RolloutError, match="held"):
        again.run_gate("canary")
    resumed = _rollout(tmp_path, "resume")
    assert decide(resumed, "canary", interactive=False) == "closed"  # the gate still needs its approval
    assert decide(resumed, "canary", interactive=True) == "ask"
    assert [r.get("hold") for r in Journal(tmp_path / "journal.jsonl", "h1").records()] == ["abort"]


def test_a_resume_is_journaled_once_before_the_gate_runs(tmp_path: Path) -> None:
    _rollout(tmp_path).abort("canary")
    resumed = _rollout(tmp_path, "resume", "canary")
    resumed._run_gate = lambda gate: resumed.outcome()  # type: ignore[method-assign]  # no cluster here
    resumed.run_gate("canary")
    resumed.run_gate("canary")
    actions = [r.get("hold") for r in Journal(tmp_path / "journal.jsonl", "h1").records()]
    assert actions == ["abort", "resume"]
    assert resumed.hold() is None and resumed.outcome().status == "awaiting approval"
