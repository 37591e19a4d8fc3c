"""Gates: the one place where a person or a parameter lets a write happen.

Scheduled (papermill, no frontend): a gate named in ``approve`` runs at once; any other gate ends
the run cleanly, failing closed. Interactive (JupyterLab): the gate is a panel with Approve and
Abort buttons whose *callback* carries out the gate and then shows the next one, because a later
cell, or a cell waiting for the click, runs before the click is seen.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from tmnb.rollout.run import Outcome, Rollout

if TYPE_CHECKING:
    import ipywidgets as widgets  # no type information: its widgets are Any

Decision = Literal["approved", "plan", "ask", "closed", "done", "stopped"]


def has_frontend() -> bool:
    """JupyterLab sets JPY_SESSION_NAME for its kernels; papermill sets nothing (facts: jupyter §5)."""
    return bool(os.environ.get("JPY_SESSION_NAME"))


def decide(rollout: Rollout, gate: str | None, *, interactive: bool | None = None) -> Decision:
    if gate is None or rollout.gate_state(gate) == "done":
        return "done"
    if rollout.outcome().status in ("rolled back", "stopped"):
        return "stopped"
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
    return "\n".join(lines)


def pass_gate(
    rollout: Rollout, gate: str | None, *, show: Callable[[object], None] | None = None, interactive: bool | None = None
) -> Outcome:
    """Run ``gate`` if a parameter approves it; else, with a person at the notebook, show the panel;
    else fail closed. Returns the outcome as it stands when this returns (the panel acts later)."""
    decision = decide(rollout, gate, interactive=interactive)
    if decision == "approved" and gate is not None:
        return rollout.run_gate(gate)
    if decision == "ask" and gate is not None:
        (show or _display)(panel(rollout, gate))
        return rollout.outcome(f"gate {gate} is waiting for a click on Approve")
    if decision == "closed":
        return rollout.outcome(
            f"gate {gate} is not approved (approve=[...] or a person at the notebook): nothing written"
        )
    return rollout.outcome()


def _display(obj: object) -> None:
    from IPython.display import display

    display(obj)  # type: ignore[no-untyped-call]  # IPython ships py.typed, but display has no annotations


def panel(rollout: Rollout, gate: str) -> widgets.VBox:
    """Approve / Abort for ``gate``; Approve performs the gate inside its callback, then offers the next."""
    import ipywidgets as widgets

    text = widgets.HTML(f"<pre>{_escape(describe_gate(rollout, gate))}</pre>")
    approve = widgets.Button(description=f"Approve {gate}", button_style="danger")
    abort = widgets.Button(description="Abort")
    out = widgets.Output()
    box = widgets.VBox([text, widgets.HBox([approve, abort]), out])

    def on_approve(_: object) -> None:
        approve.disabled = abort.disabled = True
        rollout.journal.record(None, "gate", "info", gate=gate, result="approved by a person at the notebook")
        with out:
            print(f"{gate}: approved; running ...")
            outcome = rollout.run_gate(gate)
            for node in rollout.plan.in_gate(gate):
                print(f"  {node.node}: {outcome.nodes.get(node.node)}")
            print(f"{gate}: {outcome.status}: {outcome.message}")
            following = rollout.next_gate()
            if outcome.status not in ("rolled back", "stopped") and following is not None:
                _display(panel(rollout, following))

    def on_abort(_: object) -> None:
        approve.disabled = abort.disabled = True
        rollout.journal.record(None, "gate", "info", gate=gate, result="aborted by a person at the notebook")
        with out:
            print(f"{gate}: aborted; nothing written")

    approve.on_click(on_approve)
    abort.on_click(on_abort)
    return box


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
