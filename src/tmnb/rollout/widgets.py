"""What a person at 04-rollout sees and clicks: the one module of ``rollout/`` that imports IPython and
ipywidgets (``tests/test_purity.py``), so the write path loads, runs scheduled and is tested without
them; both are imported on first use.

ipywidgets has no type information (its widgets are Any), and IPython leaves ``display`` unannotated:
``updatable`` states the signature it relies on; ``report.display`` shows everything else, typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from tmnb.errors import RolloutError
from tmnb.report.display import show
from tmnb.rollout.gates import describe_gate
from tmnb.rollout.run import Rollout

if TYPE_CHECKING:
    import ipywidgets as widgets
    from IPython.display import DisplayHandle


def updatable(obj: object) -> DisplayHandle:
    """Display ``obj`` where a later ``update`` of the handle redraws it (a scheduled run's verdict)."""
    from IPython.display import display

    handle: DisplayHandle = cast("Callable[..., DisplayHandle]", display)(obj, display_id=True)
    return handle


def output() -> Any:
    """An ipywidgets Output displayed here, whose outputs a click's callback sets later."""
    import ipywidgets as widgets

    out = widgets.Output()
    show(out)
    return out


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
