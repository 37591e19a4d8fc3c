"""A what-if's answer as ``tmnb whatif`` and ``tmnb check`` print it.

For a person: a summary line first (pods admitted and rejected, then what must be known of a node
before its pods: a kubelet that would not start, nothing predicted, a minor not modelled), the pods
with the rejected ones first, the nodes; within ``terminal.WIDTH`` columns, or whole for ``-o wide``.
For a program: JSON Lines, a record per pod (``kind: pod``) and after a node's pods a record of the
node (``kind: node``) with those facts, as each node comes back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tmnb.cli.terminal import WIDTH, table, wrap
from tmnb.cpuset import CPUSet
from tmnb.report.tables import humanize, some

#: A pod's fields in JSON, after ``kind``.
POD_FIELDS = ("node", "namespace", "pod", "admitted", "reason", "message", "numa", "cpuset")
#: The pod table's columns: ``status`` is "Admitted" or the kubelet's reason, as kubectl's STATUS.
POD_COLUMNS = ("node", "namespace", "pod", "status", "numa", "cpuset")
WIDE_POD_COLUMNS = (*POD_COLUMNS, "message")
#: The node table's columns before the headroom ones, and the note after them.
NODE_COLUMNS = ("node", "kubelet", "starts", "pods", "rejected")
HEADROOM = "headroom "
HEADROOM_NOTE = "headroom note"
#: Node names shown for a fact that several nodes share (a fleet's pool of one hardware shape).
NODES_SHOWN = 3


def facts(row: Mapping[str, Any]) -> list[str]:
    """What a person must know of a node before reading its pods: a minor predicted as another, a
    kubelet that would not start (its words), pods not predicted and why (they are not in the table)."""
    out = [str(row["kubelet note"])] if row["kubelet note"] else []
    if not row["kubelet starts"]:
        out.append(f"the kubelet would not start: {row['refusal']}")
    elif row["refusal"]:
        out.append(f"nothing predicted: {str(row['refusal']).removeprefix('not predicted: ')}")
    return out


def pod_record(row: Mapping[str, Any]) -> dict[str, Any]:
    return {"kind": "pod", **{k: row[k] for k in POD_FIELDS}}


def node_record(row: Mapping[str, Any]) -> dict[str, Any]:
    """The node's facts as fields: ``refusal`` (the kubelet's words when it would not start),
    ``not_predicted`` (why its pods have no records), ``note`` (a minor predicted as another)."""
    starts = bool(row["kubelet starts"])
    return {
        "kind": "node",
        "node": row["node"],
        "kubelet": row["kubelet"],
        "kubelet_starts": starts,
        "refusal": "" if starts else str(row["refusal"]),
        "not_predicted": str(row["refusal"]).removeprefix("not predicted: ") if starts else "",
        "note": str(row["kubelet note"]),
        "pods": int(row["pods replayed"]),
        "rejected": int(row["rejected"]),
    }


def summary(pods: pd.DataFrame, nodes: pd.DataFrame, *, width: int | None = WIDTH) -> list[str]:
    """``259 admitted, 1 rejected; gb200-01: the kubelet would not start: ...``: a fact shared by
    several nodes is said once with their names; more than one fact, one line each below."""
    admitted = int(pods["admitted"].sum()) if len(pods) else 0
    head = f"{admitted:,} admitted, {len(pods) - admitted:,} rejected"
    told: dict[str, list[str]] = {}
    for row in nodes.to_dict("records"):
        for fact in facts(row):
            told.setdefault(fact, []).append(str(row["node"]))
    said = [f"{some(names, NODES_SHOWN)}: {fact}" for fact, names in told.items()]
    if len(said) == 1:
        return wrap(f"{head}; {said[0]}", width, then="    ")
    noted = len({n for names in told.values() for n in names})
    lines = wrap(f"{head}; {noted} node{'s' if noted > 1 else ''} to note:", width) if said else [head]
    for line in said:
        lines += wrap(line, width, first="  ", then="      ")
    return lines


def pod_table(pods: pd.DataFrame, *, width: int | None = WIDTH) -> list[str]:
    """The pods, rejected ones first (each group in the replay's order), one line each. Within a width,
    a pod's NUMA nodes and exclusive CPUs are those of all its containers (``-o wide``: per container,
    and the kubelet's message)."""
    if not len(pods):
        return ["no pods to show"]
    ordered = pods.sort_values("admitted", kind="stable")
    shown = humanize(ordered.drop(columns=["uid", "admitted"]))
    shown["status"] = [
        "Admitted" if ok else reason for ok, reason in zip(ordered["admitted"], ordered["reason"], strict=True)
    ]
    if width is not None:
        shown["numa"] = [_numa(ok, numa) for ok, numa in zip(ordered["admitted"], ordered["numa"], strict=True)]
        shown["cpuset"] = [str(CPUSet().union(*map(CPUSet.parse, cpus.values()))) for cpus in ordered["cpuset"]]
    names = WIDE_POD_COLUMNS if width is None else POD_COLUMNS
    return table(names, shown[list(names)].itertuples(index=False), width=width, elastic=("numa", "cpuset"))


def _numa(admitted: bool, numa: Mapping[str, list[int] | None]) -> str:
    """The NUMA nodes a pod's containers are aligned to; "any" for an admitted pod aligned nowhere."""
    aligned = sorted({n for ids in numa.values() for n in ids or ()})
    return ",".join(map(str, aligned)) or ("any" if admitted else "")


def node_table(nodes: pd.DataFrame, *, width: int | None = WIDTH) -> list[str]:
    """The nodes: minor, start, pods, rejections, headroom per size, and a note (``-o wide``: every
    column of the what-if's node frame)."""
    if width is None:
        shown = humanize(nodes)
        return table(list(shown.columns), shown.itertuples(index=False), width=None)
    sizes = [c for c in nodes.columns if c.startswith(HEADROOM) and c != HEADROOM_NOTE]
    shown = humanize(nodes)
    rows = []
    for i, row in enumerate(nodes.to_dict("records")):
        note = "; ".join([*facts(row), *([f"headroom {row[HEADROOM_NOTE]}"] if row.get(HEADROOM_NOTE) else [])])
        cells = shown.iloc[i]
        rows.append([cells["node"], cells["kubelet"], cells["kubelet starts"], cells["pods replayed"],
                     cells["rejected"], *(cells[c] for c in sizes), note])  # fmt: skip
    names = [*NODE_COLUMNS, *(c.removeprefix(HEADROOM).replace(" ", "") for c in sizes), "note"]
    lines = table(names, rows, width=width, wrapped="note")
    if sizes:
        lines.insert(0, "Headroom: how many more Guaranteed pods of each size (CPU/memory) the node admits.")
    return lines


def changes_table(changes: pd.DataFrame, *, width: int | None = WIDTH) -> list[str]:
    """An upgrade's pods admitted or pinned differently than as today's minor: within a width, a
    paragraph per pod (its outcomes and why are sentences); ``-o wide``, a table."""
    lines = ["Pods admitted or pinned differently than as today's kubelet minor:"]
    if not len(changes):
        return [*lines, "(none)"]
    shown = humanize(changes)
    if width is None:
        return lines + table(list(shown.columns), shown.itertuples(index=False), width=None)
    for r in shown.to_dict("records"):
        today = r["as today's kubelet"]
        text = (
            f"{r['namespace']}/{r['pod']} on {r['node']}: {today} as kubelet {r['kubelet today']}, "
            f"{r['after']} as kubelet {r['kubelet after']}: {r['why']}"
        )
        lines += wrap(text, width, first="  ", then="    ")
    return lines


def paragraphs(*blocks: Sequence[str]) -> str:
    """Blocks of lines, a blank line between them; an empty block is left out."""
    return "\n\n".join("\n".join(block) for block in blocks if block)
