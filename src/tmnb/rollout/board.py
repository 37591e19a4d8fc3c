"""The parts of 04-rollout's report that follow the journal: the verdict at the top, the step log
and the summary.

With a person at the notebook a click on Approve or Abort changes the rollout after every cell
has run, so each part is an ipywidgets Output that the gate panel's callback redraws from the
journal; a re-run or a page reload draws the same state again. A scheduled run (papermill) has no
clicks: the verdict is a display the summary cell updates, and the rest is printed.
"""

from __future__ import annotations

from typing import Any

from tmnb.report import display
from tmnb.report.verdict import Tone, Verdict
from tmnb.rollout.gates import canary_evidence, has_frontend
from tmnb.rollout.run import RESUME_GATE, Outcome
from tmnb.rollout.session import Session
from tmnb.rollout.widgets import output, panel, updatable


def answer(session: Session, outcome: Outcome) -> Verdict:
    """The rollout's answer: what is done, what waits or failed, and the exact next command."""
    plan, rollout = session.plan, session.rollout
    gates = [f"**{g}** ({rollout.gate_state(g)}): {', '.join(n.node for n in plan.in_gate(g))}" for g in plan.gates]
    states = [f"**{node}** ({plan.node(node).gate}): {state}" for node, state in outcome.nodes.items()]
    states = states if outcome.status != "planned" else []  # all pending: the gates say it
    excluded = [f"**{e.node}**: {e.reason}" for e in plan.excluded]
    done = [g for g in plan.gates if rollout.gate_state(g) == "done"]
    canary = [line.strip() for line in canary_evidence(rollout)[1:]] if done and outcome.next_gate else []
    tone: Tone
    if outcome.status == "planned":
        tone, headline = "ok", f"Plan ready: {len(plan.nodes)} node(s) in {len(plan.gates)} gate(s); nothing written."
        steps = ["Carry out the canary (writes to the canary node only):"]
    elif outcome.status == "awaiting approval":
        tone, headline = "warn", f"Waiting at gate {outcome.next_gate}: approve it to continue."
        check = "Check what the canary showed (above), then approve" if canary else "Approve"
        where = " with its panel's Approve button, or run" if has_frontend() else ""
        steps = [f"{check} {outcome.next_gate}{where}:"]
    elif outcome.status == "held":
        tone, headline = "warn", f"Held: {outcome.message}."
        steps = [f"To resume and carry out {outcome.next_gate} (approve {RESUME_GATE} lifts the hold):"]
    elif outcome.status == "completed":
        tone, headline = "ok", f"Rollout complete: {outcome.message}."
        steps = ["Collect the cluster again and compare before and after:"]
    else:
        tone, headline = "stop", f"Rollout {outcome.status}: {outcome.message}."
        steps = ["Approve no further gate; find out why from the evidence (no cluster needed):"]
    sections = [
        ("Gates", gates),
        ("Nodes", states),
        (f"What the {plan.gates[0] if plan.gates else 'canary'} showed", canary),
        ("Excluded", excluded),
        ("What to do next", steps),
    ]
    return Verdict(tone, headline, sections, [session.next_command(outcome)])


def step_log(session: Session, gates: list[str] | None = None) -> str:
    """Each node's journaled steps, gate by gate (the gates that have begun, or ``gates``)."""
    rollout = session.rollout
    records = rollout.journal.records()
    lines = []
    for gate in session.plan.gates if gates is None else gates:
        changes = session.plan.in_gate(gate)
        if gates is None and all(rollout.node_state(c.node) == "pending" for c in changes):
            continue
        for change in changes:
            lines.append(f"{gate}: {change.node}: {rollout.node_state(change.node)}")
            for record in records:
                if record.get("node") == change.node and record.get("event") in ("done", "failed", "skipped"):
                    detail = record.get("error") or record.get("result") or ""
                    lines.append(f"    {record['step']:<15} {record['event']:<8} {detail}")
        lines.append(f"gate {gate}: {rollout.gate_state(gate)}")
    return "\n".join(lines)


def _bundle(verdict: Verdict) -> dict[str, str]:
    """The verdict as HTML, with its markdown for text readers (never the dataclass's repr)."""
    return {"text/html": verdict.html(), "text/markdown": verdict.markdown(), "text/plain": verdict.markdown()}


class Board:
    """The verdict, step log and summary of one session, redrawn from the journal by ``refresh``."""

    def __init__(self, session: Session, *, interactive: bool | None = None) -> None:
        self.session = session
        self.interactive = has_frontend() if interactive is None else interactive
        self._top: Any = None  # an ipywidgets Output (no type information), or a DisplayHandle
        self._log: Any = None
        self._summary: Any = None
        #: the gate whose panel this session shows (later gates follow inside it)
        self.offered: str | None = None

    def show_verdict(self) -> None:
        if self.interactive:
            self._top = output()
        else:
            self._top = updatable(answer(self.session, self.session.rollout.outcome()))
        self.refresh()

    def show_log(self) -> None:
        """The step log of every gate begun so far; with a person at the notebook, kept current."""
        if self.interactive:
            self._log = output()
            self.refresh()
        else:
            print(step_log(self.session))

    def show_summary(self) -> None:
        if self.interactive:
            self._summary = output()
        else:
            display.markdown(self.session.summary(self.session.rollout.outcome()))
        self.refresh()

    def offer(self, gate: str) -> None:
        """The Approve / Abort panel of ``gate`` here; its clicks redraw this board."""
        self.offered = gate
        display.show(panel(self.session.rollout, gate, self.refresh))

    def refresh(self) -> None:
        outcome = self.session.rollout.outcome()
        verdict = answer(self.session, outcome)
        if self.interactive:
            self._set(self._top, _bundle(verdict))
            self._set(self._log, None, step_log(self.session) or "no gate has begun")
            self._set(self._summary, {"text/markdown": self.session.summary(outcome)})
        elif self._top is not None:
            self._top.update(_bundle(verdict), raw=True)

    @staticmethod
    def _set(out: Any, data: dict[str, str] | None, text: str = "") -> None:
        """Replace what ``out`` shows (set as its outputs: no capture context needed in a callback)."""
        if out is None:
            return
        if data is None:
            out.outputs = ({"output_type": "stream", "name": "stdout", "text": text + "\n"},)
        else:
            out.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)
