"""Hand named values from a notebook run to whoever scheduled it.

A glued value is a display output with a tmnb MIME type (JSON-typed so nbformat accepts it,
plus a text/plain line that names the value without dumping it, since JupyterLab shows that line
to a person); the runner reads them back from the executed notebook into the run manifest.
Cheaper than scrapbook inside the kernel.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tmnb.report import display

if TYPE_CHECKING:
    from nbformat import NotebookNode

MIME = "application/vnd.tmnb.result+json"


def glue(name: str, value: object) -> None:
    """Record ``value`` (JSON-serialisable) under ``name`` in the executed notebook."""
    payload = {"name": name, "value": json.loads(json.dumps(value, default=str))}
    display.show({MIME: payload, "text/plain": f"{name}: handed to tmnb run"}, raw=True)


def glue_all(values: Mapping[str, Any]) -> None:
    """Record every name and value, in order: a notebook's last cell hands over what a function
    computed, so the cell holds no logic and the values can be tested without a kernel."""
    for name, value in values.items():
        glue(name, value)


def read_glued(nb: NotebookNode) -> dict[str, Any]:
    """Collect glued values from an executed nbformat notebook; later values win."""
    found: dict[str, Any] = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            payload = output.get("data", {}).get(MIME)
            if isinstance(payload, dict) and "name" in payload:
                found[payload["name"]] = payload.get("value")
    return found
