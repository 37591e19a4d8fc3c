"""Render an executed notebook as a standalone HTML report.

Code is hidden by default (the reader is an SRE or an incident reviewer, not the author),
except the injected-parameters cell, which shows what the run was asked to do.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

KEEP_INPUT_TAGS = {"injected-parameters", "show-input"}
#: nbconvert's lab template minus the scripts it would fetch from a CDN (see the template).
TEMPLATES = Path(__file__).parent / "templates"


def _tag_hidden_inputs(nb: Any) -> None:
    for cell in nb.cells:
        tags = cell.setdefault("metadata", {}).setdefault("tags", [])
        if cell.cell_type == "code" and not set(tags) & KEEP_INPUT_TAGS:
            tags.append("remove-input")


def render_html(executed: Path, target: Path, *, show_code: bool = False, title: str | None = None) -> Path:
    import nbformat
    from nbconvert import HTMLExporter
    from traitlets.config import Config

    nb = nbformat.read(executed, as_version=4)
    if not show_code:
        _tag_hidden_inputs(nb)
    nb.metadata["title"] = title or executed.stem
    config = Config()
    config.TagRemovePreprocessor.enabled = True
    config.TagRemovePreprocessor.remove_cell_tags = {"remove-cell"}
    config.TagRemovePreprocessor.remove_input_tags = {"remove-input"}
    exporter = HTMLExporter(
        config=config,
        exclude_input_prompt=True,
        exclude_output_prompt=True,
        extra_template_basedirs=[str(TEMPLATES)],
        template_name="tmnb-report",
    )
    body, _ = exporter.from_notebook_node(nb)
    target.write_text(body, encoding="utf-8")
    return target
