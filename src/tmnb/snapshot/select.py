"""Narrow a snapshot to the nodes an SRE asked about, with Kubernetes label-selector syntax."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Mapping

from tmnb.errors import InputError
from tmnb.snapshot.model import Snapshot

Matcher = Callable[[Mapping[str, str]], bool]
_KEY = r"[A-Za-z0-9][-A-Za-z0-9_./]*"
_SET = re.compile(rf"^({_KEY})\s+(in|notin)\s+\(([^)]*)\)$")
_EQ = re.compile(rf"^({_KEY})\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)$")
_EXISTS = re.compile(rf"^(!?)\s*({_KEY})$")


def split_requirements(selector: str) -> list[str]:
    """Split on commas that are not inside a parenthesised value set."""
    parts, depth, current = [], 0, ""
    for ch in selector:
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    parts.append(current)
    return [p.strip() for p in parts if p.strip()]


def _requirement(text: str) -> Matcher:
    if m := _SET.match(text):
        key, op, values = m.group(1), m.group(2), {v.strip() for v in m.group(3).split(",") if v.strip()}
        if op == "in":
            return lambda labels: labels.get(key) in values
        return lambda labels: labels.get(key) not in values
    if m := _EQ.match(text):
        key, op, value = m.groups()
        if op == "!=":
            return lambda labels: labels.get(key) != value
        return lambda labels: labels.get(key) == value
    if m := _EXISTS.match(text):
        negate, key = m.group(1) == "!", m.group(2)
        return lambda labels: (key in labels) != negate
    raise InputError(
        f"invalid label selector requirement {text!r}: expected key=value, key!=value, key, !key, or key in (a,b)",
        where="node_selector",
    )


#: tmnb's cap on a selector's length: a selector naming every node of a 2,000-node cluster with ``in``
#: fits; one beyond is pasted by mistake, and splitting it character by character would take minutes.
MAX_SELECTOR = 65_536


def parse_selector(selector: str | None) -> Matcher:
    if selector and len(selector) > MAX_SELECTOR:
        raise InputError(
            f"a label selector of {len(selector):,} characters, more than the {MAX_SELECTOR:,} tmnb accepts",
            where="node_selector",
        )
    requirements = [_requirement(part) for part in split_requirements(selector or "")]
    return lambda labels: all(req(labels) for req in requirements)


def select_nodes(snapshot: Snapshot, selector: str | None) -> Snapshot:
    """Keep matching nodes and the pods and events that belong to them."""
    if not selector:
        return snapshot
    matches = parse_selector(selector)
    nodes = [n for n in snapshot.nodes if matches(n.labels)]
    names = {n.name for n in nodes}
    return dataclasses.replace(
        snapshot,
        nodes=nodes,
        pods=[p for p in snapshot.pods if p.node in names],
        events=[e for e in snapshot.events if e.node is None or e.node in names],
    )


def select_named(snapshot: Snapshot, name: str | None) -> Snapshot:
    """Keep the node called ``name`` (and its pods and events); a name the snapshot does not hold is
    an error naming the closest ones, as an empty answer would read as "nothing to worry about"."""
    if name is None:
        return snapshot
    kept = [n for n in snapshot.nodes if n.name == name]
    if not kept:
        names = [n.name for n in snapshot.nodes]
        close = difflib.get_close_matches(name, names, n=3)
        hint = (
            f"; did you mean {', '.join(close)}?" if close else f" among the {len(names)} nodes read" if names else ""
        )
        raise InputError(f"no node named {name!r}{hint}", where="node")
    return dataclasses.replace(
        snapshot,
        nodes=kept,
        pods=[p for p in snapshot.pods if p.node == name],
        events=[e for e in snapshot.events if e.node is None or e.node == name],
    )
