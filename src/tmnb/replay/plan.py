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
from tmnb.kubelet.profiles import (
    CHECKPOINT_POLICIES,
    KUBELET_VERSION,
    KubeletProfile,
    Resolved,
    parse_minor,
    resolve,
    upgrade_hops,
)
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
    #: the node's kubelet version as reported (None when unknown)
    version: KubeVersion | None
    #: the minor the node is predicted as today, and whether that is its own
    kubelet: Resolved
    #: the minor after the change: the target's ``kubeletVersion`` (an upgrade what-if), else today's
    planned_kubelet: KubeletProfile

    def changes(self, name: str) -> bool:
        """Whether the change moves target field ``name`` (``kubeletVersion``: the kubelet's minor)."""
        if name == KUBELET_VERSION:
            return self.upgrades or bool(self.hops)
        return show_value(self.current.get(name)) != show_value(self.planned.get(name))

    def shown(self, name: str) -> tuple[str, str]:
        """Target field ``name`` today and after the change, as the plan table shows them: ``kubeletVersion``
        is the kubelet's version as reported and the planned minor, not a configuration field."""
        if name == KUBELET_VERSION:
            return str(self.version or "unknown"), self.planned_kubelet.name
        return show_value(self.current.get(name)), show_value(self.planned.get(name))

    def spoiled_checkpoints(self) -> dict[str, tuple[str, ...]]:
        """Checkpoint files (by name) the kubelet may refuse at start after this change, with the changed
        fields that spoil them (the profile's ``checkpoint_spoilers``); a file counts only where its
        manager keeps assignments before or after the change, or its policy changes."""
        out = {}
        for name, fields in self.planned_kubelet.checkpoint_spoilers.items():
            policy_field, stateful = CHECKPOINT_POLICIES[name]
            keeps_state = self.changes(policy_field) or self.current.get(policy_field) == stateful
            changed = tuple(f for f in fields if self.changes(f))
            if keeps_state and changed:
                out[name] = changed
        return out

    @property
    def upgrades(self) -> bool:
        """Whether the change moves the node to another kubelet minor."""
        return self.planned_kubelet.minor != self.kubelet.profile.minor

    @property
    def hops(self) -> tuple[int, ...]:
        """The minors an upgrade to the planned kubelet passes one at a time, the planned one last (empty:
        no upgrade: the target sets no ``kubeletVersion``, or an older one), from the node's version as reported,
        else the minor it is predicted as."""
        if KUBELET_VERSION not in self.target:
            return ()
        return upgrade_hops(self.version or self.kubelet.profile.version, self.planned_kubelet)


def kubelet_version(node: Node) -> KubeVersion | None:
    try:
        return KubeVersion.parse(node.versions.kubelet or "")
    except InputError:
        return None


def plan_for(node: Node, target: Mapping[str, Any]) -> NodePlan:
    version = kubelet_version(node)
    resolved = resolve(version)
    current = {**defaults_for(version), **EMPTY_BY_DEFAULT, **{k: s.value for k, s in node.kubelet.settings.items()}}
    fields = {k: v for k, v in target.items() if k != KUBELET_VERSION}
    planned_kubelet = (
        parse_minor(target[KUBELET_VERSION], where=KUBELET_VERSION) if KUBELET_VERSION in target else resolved.profile
    )
    return NodePlan(node, current, {**current, **fields}, target, version, resolved, planned_kubelet)


def plans_for(nodes: Iterable[Node], target: Mapping[str, Any]) -> dict[str, NodePlan]:
    """One plan per node name, to hand to every consumer of the same change."""
    return {node.name: plan_for(node, target) for node in nodes}
