"""Gates: the one place where a person or a parameter lets a write happen.

Scheduled (papermill, no frontend): a gate named in ``approve`` runs at once; any other gate ends
the run cleanly, failing closed. Interactive (JupyterLab): the gate is a panel with Approve and
Abort buttons whose *callback* carries out the gate and then shows the next one, because a later
cell, or a cell waiting for the click, runs before the click is seen. An Abort is journaled and
holds the change, in this run and every later one, until a run approves ``resume``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from tmnb.errors import RolloutError
from tmnb.rollout.run import RESUME_GATE, Rollout

if TYPE_CHECKING:
    import ipywidgets as widgets  # no type information: its widgets are Any

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


def panel(rollout: Rollout, gate: str, changed: Callable[[], None]) -> widgets.VBox:
    """Approve / Abort for ``gate``. Approve performs the gate inside its callback, calls ``changed``
    (the report redraws from the journal) and offers the next gate; Abort holds the change."""
    import ipywidgets as widgets

    text = widgets.HTML(f"<pre>{_escape(describe_gate(rollout, gate))}</pre>")
    approve = widgets.Button(description=f"Approve {gate}", button_style="danger")
    abort = widgets.Button(description="Abort")
    out = widgets.Output()
    box = widgets.VBox([text, widgets.HBox([approve, abort]), out])
    said: list[str] = []

    def say(line: str, following: widgets.VBox | None = None) -> None:
        """Set what ``out`` shows in the kernel: a page reloaded meanwhile still gets it."""
        said.append(line)
        shown: list[dict[str, object]] = [{"output_type": "stream", "name": "stdout", "text": "\n".join(said) + "\n"}]
        if following is not None:
            view = {"model_id": following.model_id, "version_major": 2, "version_minor": 0}
            data = {"application/vnd.jupyter.widget-view+json": view, "text/plain": f"the {gate} panel's next gate"}
            shown.append({"output_type": "display_data", "data": data, "metadata": {}})
        out.outputs = tuple(shown)

    def on_approve(_: object) -> None:
        approve.disabled = abort.disabled = True
        say(f"{gate}: approved; running ...")
        rollout.journal.record(None, "gate", "info", gate=gate, result="approved by a person at the notebook")
        try:
            outcome = rollout.run_gate(gate)
        except RolloutError as exc:
            say(f"{gate}: not run: {exc}")
            changed()
            return
        for node in rollout.plan.in_gate(gate):
            said.append(f"  {node.node}: {outcome.nodes.get(node.node)}")
        changed()
        following = rollout.next_gate()
        going_on = outcome.status not in ("rolled back", "stopped") and following is not None
        say(f"{gate}: {outcome.message}", panel(rollout, following, changed) if going_on and following else None)

    def on_abort(_: object) -> None:
        approve.disabled = abort.disabled = True
        rollout.abort(gate)
        say(f"{gate}: aborted; nothing written. {rollout.outcome().message}")
        changed()

    approve.on_click(on_approve)
    abort.on_click(on_abort)
    return box


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
