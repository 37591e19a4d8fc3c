"""Render an executed notebook as a standalone HTML report.

Code is hidden by default (the reader is an SRE or an incident reviewer, not the author),
except the injected-parameters cell, which shows what the run was asked to do, folded into one
line ("Parameters of this run") so that the report's answer comes first. Widgets (progress bars, a
gate's buttons) are written as the text they last showed: their renderer would come from a CDN,
and a report must open offline.
"""

from __future__ import annotations

import functools
import html
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from tmnb.report import ipynb

if TYPE_CHECKING:
    from nbconvert import HTMLExporter
    from nbformat import NotebookNode

KEEP_INPUT_TAGS = {"injected-parameters", "show-input"}
#: nbconvert's lab template minus the scripts it would fetch from a CDN (see the template).
TEMPLATES = Path(__file__).parents[1] / "templates"


def _tag_hidden_inputs(nb: NotebookNode) -> None:
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell.cell_type == "code" and not set(tags) & KEEP_INPUT_TAGS:
            tags.append("remove-input")


WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


def _widget_text(model_id: str, state: dict[str, Any]) -> str:
    """What a widget shows, as text: its labels and values, children in order."""
    model = state.get(model_id, {})
    fields = model.get("state", {})
    name = model.get("model_name", "")
    if "children" in fields:
        texts = (_widget_text(str(c).removeprefix("IPY_MODEL_"), state) for c in fields["children"])
        return " ".join(t for t in texts if t)
    if name == "ButtonModel":
        return f"[{fields.get('description', '')}]"
    if name in ("HTMLModel", "LabelModel", "HTMLMathModel"):
        text = html.unescape(re.sub(r"<[^>]+>", " ", str(fields.get("value", ""))))
        return " ".join(text.replace("\u2007", " ").split())
    return ""


def _static_widgets(nb: NotebookNode) -> None:
    """Each widget output replaced by its last text, and the widget state dropped, so nbconvert
    adds no script that fetches the widget renderer."""
    state = nb.metadata.pop("widgets", {}).get(WIDGET_STATE, {}).get("state", {})
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get(WIDGET_VIEW)
            if view is not None:
                text = _widget_text(str(view.get("model_id", "")), state)
                output["data"] = {"text/plain": text or "(an interactive control: open the notebook to use it)"}


def render_html(
    executed: Path, target: Path, *, show_code: bool = False, title: str | None = None, nb: NotebookNode | None = None
) -> Path:
    """The report of the ``executed`` notebook (``nb``: it, read already; it is changed for the page)."""
    nb = nb if nb is not None else ipynb.read(executed)
    if not show_code:
        _tag_hidden_inputs(nb)
    _static_widgets(nb)
    nb.metadata["title"] = title or executed.stem
    body, _ = _exporter().from_notebook_node(nb)
    target.write_text(body, encoding="utf-8")
    return target


def prepare_in_background() -> None:
    """Import nbconvert and load the report template on a thread while a notebook executes (the
    parent only waits on the kernel then): about 0.7 s that rendering no longer waits for."""
    threading.Thread(target=_exporter, name="html-exporter", daemon=True).start()


_EXPORTER_BUILT = threading.Lock()


def _exporter() -> HTMLExporter:
    """The one exporter of this process; a render waits for the background build, never repeats it."""
    with _EXPORTER_BUILT:
        return _build_exporter()


@functools.cache
def _build_exporter() -> HTMLExporter:
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    # nbconvert leaves the exporter's __init__ unannotated: the keyword traits it takes, typed here.
    exporter = cast("Callable[..., HTMLExporter]", HTMLExporter)(
        config=config,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        extra_template_basedirs=[str(TEMPLATES)],
        template_name="tmnb-report",
    )
    exporter.from_notebook_node(ipynb.new_notebook())  # loads and compiles the template now
    return exporter
