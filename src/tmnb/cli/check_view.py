"""``tmnb check``'s screen: one node today (kubelet, settings with where each came from, NUMA layout,
devices, pods pinned) and its verdict under a target, each rejection with its reason (the hints, the
merge, the constraint in numbers and the remedies ``analysis.diagnose`` checked).

The first line is the answer, as a scheduler's log or a person glancing at it needs it; sections
follow in ``kubectl describe``'s manner, within ``terminal.WIDTH`` columns or whole for ``-o wide``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tmnb.analysis import inventory
from tmnb.analysis.diagnose import Diagnosis
from tmnb.cli.terminal import WIDTH, table, wrap
from tmnb.cli.whatif_view import HEADROOM, HEADROOM_NOTE, facts
from tmnb.replay import plan_for
from tmnb.report.tables import some
from tmnb.snapshot import Snapshot

INDENT = "  "
#: A section's blocks (tables) start this far in.
BLOCK = INDENT * 2
#: Pinned containers listed within a width; ``-o wide`` lists all.
PINNED_SHOWN = 12
MODES = {
    "drain": "after a drain: every pod re-admitted, the state files the change spoils moved aside",
    "restart": "after a kubelet restart without a drain: the running pods re-admitted over today's state files",
}


def target_text(target: Mapping[str, Any]) -> str:
    """``topologyManagerPolicy=single-numa-node, kubelet 1.37``; today's settings when empty."""
    parts = [f"kubelet {v}" if k == "kubeletVersion" else f"{k}={_value(v)}" for k, v in target.items()]
    return ", ".join(parts) or "today's settings"


def _value(value: object) -> str:
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{k}: {v}" for k, v in value.items()) + "}"
    return str(value)


def headline(node: str, target: Mapping[str, Any], pods: pd.DataFrame, row: Mapping[str, Any]) -> str:
    """The answer first: the pods admitted and rejected, or why there is no answer per pod."""
    said = facts(row)
    admitted = int(pods["admitted"].sum()) if len(pods) else 0
    counts = (
        [] if not row["kubelet starts"] or row["refusal"] else [f"{admitted} admitted, {len(pods) - admitted} rejected"]
    )
    return f"{node} under {target_text(target)}: {'; '.join([*counts, *said])}"


def today(snapshot: Snapshot, node: str, *, width: int | None = WIDTH) -> list[str]:
    """The node as the source saw it."""
    found = snapshot.node(node)
    state = "Ready" if found.ready else "not Ready" if found.ready is False else "readiness unknown"
    cordon = "cordoned" if found.unschedulable else "schedulable"
    context = snapshot.source.context
    source = snapshot.source.kind + (f" (context {context})" if context and context != snapshot.source.kind else "")
    kubelet = plan_for(found, {}).kubelet
    version = (
        f"{found.versions.kubelet or 'version unknown'}, {kubelet.note() or f'modelled as {kubelet.profile.name}'}"
    )
    lines = ["Today", *_pair("Kubelet", f"{version}; {state}, {cordon}", width)]
    lines += _pair("Source", f"{source}, captured {snapshot.captured_at}", width)
    shapes = inventory.shapes(snapshot)
    if len(shapes):
        lines += _pair("Hardware", str(shapes.iloc[0]["hardware"]), width)
    lines += [f"{INDENT}Settings:", *_block(_settings(snapshot, _inner(width)))]
    layout = inventory.numa_layout(snapshot)
    if len(layout):
        lines += [f"{INDENT}NUMA:", *_block(_numa(layout, _inner(width)))]
    lines += _pair("Devices", _devices(snapshot) or "none", width)
    lines += _pods(snapshot, width)
    for issue in [i for i in found.issues if i.severity != "info"]:
        lines += _pair("Issue", f"{issue.source}: {issue.message}", width)
    return lines


def _pair(label: str, value: str, width: int | None) -> list[str]:
    """``  Label:   value``, the value wrapped under itself."""
    first = f"{INDENT}{label + ':':<10}"
    return wrap(value, width, first=first, then=" " * len(first))


def _inner(width: int | None) -> int | None:
    """The width left to a block indented by ``BLOCK``."""
    return None if width is None else width - len(BLOCK)


def _block(lines: Sequence[str]) -> list[str]:
    return [f"{BLOCK}{line}" if line else line for line in lines]


def _settings(snapshot: Snapshot, width: int | None) -> list[str]:
    rows = [
        (
            r["setting"],
            r["value"],
            " ".join(str(x) for x in (r["source"], r["detail"]) if x)
            + (f"; beat {r['overrides']}" if r["overrides"] else ""),
        )
        for r in inventory.settings(snapshot).to_dict("records")
    ]
    return table(("setting", "value", "source"), rows, width=width, wrapped="source")


def _numa(layout: pd.DataFrame, width: int | None) -> list[str]:
    rows = [
        (
            str(r["numa"]),
            str(r["cpus"]) or "none",
            f"{r['memory_gib']:,.1f} GiB",
            str(r["hugepages"]),
            str(r["distances"]),
        )
        for r in layout.to_dict("records")
    ]
    return table(("numa", "cpus", "memory", "hugepages", "distances"), rows, width=width, wrapped="distances")


def _devices(snapshot: Snapshot) -> str:
    """``nvidia.com/gpu: 4 on NUMA 0, 4 on NUMA 1; ...``"""
    per: dict[str, list[str]] = {}
    for r in inventory.devices(snapshot).to_dict("records"):
        where = "without NUMA affinity" if r["numa"] == "none" else f"on NUMA {r['numa']}"
        per.setdefault(str(r["resource"]), []).append(f"{r['devices']} {where}")
    return "; ".join(f"{resource}: {', '.join(counts)}" for resource, counts in per.items())


def _pods(snapshot: Snapshot, width: int | None) -> list[str]:
    """The pods: how many run, the containers holding exclusive CPUs, the pods rejected now."""
    active = [p for p in snapshot.pods if p.phase in ("Running", "Pending")]
    guaranteed = sum(p.qos_class == "Guaranteed" for p in active)
    failed = inventory.admission_failures(snapshot)
    rejected = [f"{r['namespace']}/{r['pod']} ({r['reason']})" for r in failed.to_dict("records")]
    lines = _pair("Pods", f"{len(active)} running or pending, {guaranteed} Guaranteed", width)
    if rejected:
        lines += _pair("Failed", f"{len(rejected)} at admission: {some(rejected, 3)}", width)
    pinned = inventory.guaranteed_pods(snapshot)
    if len(pinned):
        pinned = pinned[pinned["cpuset"] != ""]
    if not len(pinned):
        return [*lines, f"{INDENT}Pinned:   no container holds exclusive CPUs"]
    rows = [(f"{r['namespace']}/{r['pod']}", r["container"], r["cpuset"], r["numa"]) for r in pinned.to_dict("records")]
    shown = rows if width is None else rows[:PINNED_SHOWN]
    pinned_table = table(("pod", "container", "cpus", "numa"), shown, width=_inner(width), elastic=("cpus",))
    lines += [f"{INDENT}Pinned:", *_block(pinned_table)]
    if len(rows) > len(shown):
        lines.append(f"{BLOCK}… and {len(rows) - len(shown)} more (-o wide lists them)")
    return lines


def verdict(
    target: Mapping[str, Any],
    mode: str,
    pods: pd.DataFrame,
    row: Mapping[str, Any],
    diagnoses: Sequence[Diagnosis],
    *,
    width: int | None = WIDTH,
) -> list[str]:
    """The node under the target: its kubelet, the pods admitted and rejected, each rejection's reason."""
    lines = [f"Under {target_text(target)}", *wrap(MODES[mode], width, first=INDENT, then=INDENT)]
    if row["kubelet starts"]:
        said = [f"starts as {row['kubelet']}", *facts(row)]
    else:  # its words, not facts()' sentence about it
        said = [f"{row['kubelet']} would not start: {row['refusal']}", *[str(n) for n in [row["kubelet note"]] if n]]
    lines += _pair("Kubelet", "; ".join(said), width)
    if not row["kubelet starts"] or row["refusal"]:
        return lines
    admitted = int(pods["admitted"].sum()) if len(pods) else 0
    lines += _pair("Pods", f"{admitted} admitted, {len(pods) - admitted} rejected", width)
    sizes = [c for c in row if c.startswith(HEADROOM) and c != HEADROOM_NOTE]
    room = [f"{row[c]} of {c.removeprefix(HEADROOM)}" for c in sizes if pd.notna(row[c])]
    if room or row.get(HEADROOM_NOTE):
        room_text = f"more Guaranteed pods it admits: {', '.join(room)}" if room else f"{row[HEADROOM_NOTE]}"
        lines += _pair("Headroom", room_text, width)
    by_pod = {d.pod: d for d in diagnoses}
    for r in pods[~pods["admitted"]].to_dict("records"):
        name = f"{r['namespace']}/{r['pod']}"
        lines += ["", *_rejection(name, r["reason"], r["message"], by_pod.get(name), width)]
    return lines


def _rejection(name: str, reason: str, message: str, found: Diagnosis | None, width: int | None) -> list[str]:
    """A rejected pod, the kubelet's words, and why: the constraint, each provider's hints, the merge,
    the remedies the model admits."""
    lines = wrap(f"Rejected: {name}: {reason}: {message}", width, first=INDENT, then=BLOCK)
    if found is None:
        return lines
    hints = "; ".join(f"{h['container']} {h['provider']} {h['resource']}: {h['hints']}" for h in found.hints)
    remedies = "; ".join(m.change + (f" ({m.note})" if m.note else "") for m in found.remedies)
    said = [
        ("why", found.why),
        ("hints", hints),
        ("merge", found.merged),
        ("would admit", remedies or "none the model found"),
    ]
    for label, text in said:
        if text:
            first = f"{BLOCK}{label + ':':<13}"
            lines += wrap(text, width, first=first, then=" " * len(first))
    return lines
