"""A node's current kubelet settings and the same settings with a planned change applied.

Built once per node and change: the kubelet model's inputs (``node_input``), the lint rules, the
readiness plan table, the rollout and the sandbox all read the same plan.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from tmnb.errors import InputError
from tmnb.settings.defaults import defaults_for
from tmnb.snapshot import Node
from tmnb.versions import KubeVersion

#: Fields the kubelet leaves empty unless set (omitempty maps): absent means empty, not unknown.
EMPTY_BY_DEFAULT: dict[str, Any] = {
    "topologyManagerPolicyOptions": {},
    "cpuManagerPolicyOptions": {},
    "featureGates": {},
}
DEFAULTS: dict[str, Any] = {**defaults_for(None), **EMPTY_BY_DEFAULT}


def show_value(value: object) -> str:
    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


@dataclass(frozen=True)
class NodePlan:
    """One node's current and planned settings; lint rules and the replay read only this."""

    node: Node
    current: Mapping[str, Any]
    planned: Mapping[str, Any]
    target: Mapping[str, Any]
    version: KubeVersion | None

    def changes(self, name: str) -> bool:
        return show_value(self.current.get(name)) != show_value(self.planned.get(name))


def kubelet_version(node: Node) -> KubeVersion | None:
    try:
        return KubeVersion.parse(node.versions.kubelet or "")
    except InputError:
        return None


def plan_for(node: Node, target: Mapping[str, Any]) -> NodePlan:
    version = kubelet_version(node)
    current = {**defaults_for(version), **EMPTY_BY_DEFAULT, **{k: s.value for k, s in node.kubelet.settings.items()}}
    return NodePlan(node, current, {**current, **target}, target, version)


def plans_for(nodes: Iterable[Node], target: Mapping[str, Any]) -> dict[str, NodePlan]:
    """One plan per node name, to hand to every consumer of the same change."""
    return {node.name: plan_for(node, target) for node in nodes}
