"""Gates: the one place where a person or a parameter lets a write happen.

Scheduled (papermill, no frontend): a gate named in ``approve`` runs at once; any other gate ends
the run cleanly, failing closed. Interactive (JupyterLab): the gate is a panel with Approve and
Abort buttons (``widgets.panel``) whose *callback* carries out the gate and then shows the next one,
because a later cell, or a cell waiting for the click, runs before the click is seen. An Abort is
journaled and holds the change, in this run and every later one, until a run approves ``resume``.
"""

from __future__ import annotations

import os
from typing import Literal

from tmnb.rollout.run import RESUME_GATE, Rollout

Decision = Literal["approved", "plan", "ask", "closed", "done", "stopped", "held"]


def has_frontend() -> bool:
    """JupyterLab sets JPY_SESSION_NAME for its kernels; papermill sets nothing (facts: jupyter §5)."""
    return bool(os.environ.get("JPY_SESSION_NAME"))


def decide(rollout: Rollout, gate: str | None, *, interactive: bool | None = None) -> Decision:
    if gate is None or rollout.gate_state(gate) == "done":
        return "done"
    if rollout.outcome().status in ("rolled back", "stopped"):
        return "stopped"
    if rollout.hold() is not None and RESUME_GATE not in rollout.approved:
        return "held"
    if rollout.mode == "plan":
        return "plan"
    if gate in rollout.approved:
        return "approved"
    return "ask" if (has_frontend() if interactive is None else interactive) else "closed"


def describe_gate(rollout: Rollout, gate: str) -> str:
    lines = [f"Gate {gate}:"]
    for change in rollout.plan.in_gate(gate):
        fields = ", ".join(f"{k} {a} -> {b}" for k, (a, b) in change.changes.items())
        extra = f"; moves {', '.join(change.state_files)}" if change.state_files else ""
        drain = "drain" if change.drain else "no drain"
        predicted = change.prediction
        lines.append(
            f"  {change.node}: {fields} ({drain}{extra}); predicted {predicted.get('admitted', 0)} admitted, "
            f"{predicted.get('rejected', 0)} rejected"
        )
    if rollout.plan.gates and gate != rollout.plan.gates[0]:
        lines += canary_evidence(rollout)
    return "\n".join(lines)


def canary_evidence(rollout: Rollout) -> list[str]:
    """What the canary showed, from the journal: each canary node's verification and the soak
    (when one is configured), so a later gate is approved knowing them."""
    first = rollout.plan.gates[0]
    lines = [f"What the {first} showed:"]
    for change in rollout.plan.in_gate(first):
        found = [r for r in rollout.journal.records() if r.get("node") == change.node and r.get("step") == "verify"]
        last = found[-1] if found else {}
        said = last.get("result") or last.get("error") or "not verified yet"
        lines.append(f"  {change.node}: verification {last.get('event', 'pending')}: {said}")
    if rollout.soak is not None:
        soaks = [r for r in rollout.journal.records() if r.get("node") is None and r.get("step") == "soak"]
        last = soaks[-1] if soaks else {}
        said = last.get("result") or last.get("error") or last.get("intent") or "not run yet"
        lines.append(f"  soak ({rollout.soak.minutes:g} min): {last.get('event', 'pending')}: {said}")
    return lines
