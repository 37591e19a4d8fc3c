"""Server-side printing (meta.k8s.io/v1 Table) for ``kubectl get``: the columns users know,
so ``STATUS`` shows ``TopologyAffinityError`` and nodes show ``Ready,SchedulingDisabled``."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

Obj = dict[str, Any]
Column = tuple[str, str, int]  # name, type, priority


def age(stamp: str | None) -> str:
    """kubectl's short human duration (``45s``, ``12m``, ``5h``, ``3d``)."""
    if not stamp:
        return "<unknown>"
    then = datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    seconds = max(0, int((datetime.now(UTC) - then).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= 2 * size or (unit == "m" and seconds >= 60):
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def _node_cells(o: Obj) -> list[Any]:
    conditions = o["status"].get("conditions") or []
    ready = next((c["status"] for c in conditions if c["type"] == "Ready"), "Unknown")
    status = "Ready" if ready == "True" else "NotReady"
    if o["spec"].get("unschedulable"):
        status += ",SchedulingDisabled"
    labels = o["metadata"].get("labels") or {}
    roles = ",".join(sorted(k.split("/", 1)[1] for k in labels if k.startswith("node-role.kubernetes.io/"))) or "<none>"
    info = o["status"].get("nodeInfo") or {}
    return [
        o["metadata"]["name"],
        status,
        roles,
        age(o["metadata"].get("creationTimestamp")),
        info.get("kubeletVersion", ""),
        info.get("osImage", ""),
        info.get("kernelVersion", ""),
        info.get("containerRuntimeVersion", ""),
    ]


def _pod_cells(o: Obj) -> list[Any]:
    status = o["status"]
    statuses = status.get("containerStatuses") or []
    ready = sum(bool(c.get("ready")) for c in statuses)
    total = len(o["spec"].get("containers") or [])
    shown = status.get("reason") or status.get("phase", "Unknown")
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    return [
        o["metadata"]["name"],
        f"{ready}/{total}",
        shown,
        restarts,
        age(o["metadata"].get("creationTimestamp")),
        o["spec"].get("nodeName") or "<none>",
    ]


def _generic_cells(o: Obj) -> list[Any]:
    return [o["metadata"]["name"], age(o["metadata"].get("creationTimestamp"))]


PRINTERS: dict[str, tuple[tuple[Column, ...], Callable[[Obj], list[Any]]]] = {
    "nodes": (
        (
            ("Name", "string", 0),
            ("Status", "string", 0),
            ("Roles", "string", 0),
            ("Age", "string", 0),
            ("Version", "string", 0),
            ("OS-Image", "string", 1),
            ("Kernel-Version", "string", 1),
            ("Container-Runtime", "string", 1),
        ),
        _node_cells,
    ),
    "pods": (
        (
            ("Name", "string", 0),
            ("Ready", "string", 0),
            ("Status", "string", 0),
            ("Restarts", "string", 0),
            ("Age", "string", 0),
            ("Node", "string", 1),
        ),
        _pod_cells,
    ),
}
_GENERIC = ((("Name", "string", 0), ("Age", "string", 0)), _generic_cells)


def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def table(resource: str, items: Sequence[Obj], list_meta: Obj, include_object: str) -> Obj:
    columns, cells = PRINTERS.get(resource, _GENERIC)
    rows = []
    for o in items:
        row: Obj = {"cells": cells(o)}
        if include_object == "Object":
            row["object"] = o
        elif include_object != "None":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": o["metadata"]}
        rows.append(row)
    return {
        "kind": "Table",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": list_meta,
        "columnDefinitions": [
            {"name": n, "type": t, "format": "name" if n == "Name" else "", "description": "", "priority": p}
            for n, t, p in columns
        ],
        "rows": rows,
    }
