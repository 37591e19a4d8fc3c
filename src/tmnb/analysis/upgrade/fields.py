"""Configured fields one of the two minors does not know: ignored by the planned minor, or by
today's minor after a rollback of the kubelet alone (with the gates it would refuse then)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from tmnb.analysis.minors import describe_gate
from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.analysis.upgrade.gates import AREA, feature_gates, go_bool, refusal
from tmnb.kubelet.profiles import KUBELET_VERSION
from tmnb.snapshot import Node


def _configured(node: Node, target: Mapping[str, Any]) -> dict[str, tuple[str, bool]]:
    """Fields the configuration file, its drop-ins or the plan set: field -> (where, in a drop-in)."""
    out: dict[str, tuple[str, bool]] = {}
    for name, setting in node.kubelet.settings.items():
        layers = setting.overridden if setting.source == "configz" else (*setting.overridden, setting.as_layer())
        written = [layer for layer in layers if layer.source in ("file", "dropin")]
        if written:
            out[name] = (written[-1].detail or written[-1].source, written[-1].source == "dropin")
    for name in target:
        if name != KUBELET_VERSION:
            out[name] = ("the planned change", False)
    return out


def _ignored(name: str, dropin: bool) -> str:
    if dropin:
        return (
            "ignores it without logging anything (drop-ins are merged as plain JSON, and a key that matches no "
            "field is dropped)"
        )
    return (
        'ignores it after logging "Using lenient decoding as strict decoding failed" '
        f'err="strict decoding error: unknown field \\"{name}\\""'
    )


def _field_unknown(c: LintContext) -> Iterator[Hit]:
    if not c.plan.upgrades:
        return
    for name, (where, dropin) in sorted(_configured(c.node, c.plan.target).items()):
        since = c.profile.field_since(name)
        if since is not None:
            yield Hit(
                name,
                f"a field kubelet {c.profile.name} knows",
                f"set in {where}",
                f"{name} exists from kubelet 1.{since} (kubelet {c.today.name} reads it); kubelet {c.profile.name} "
                f"{_ignored(name, dropin)}, so the setting has no effect.",
                fill={"minor": c.profile.name},
            )


UPGRADE_FIELD_UNKNOWN = Rule[LintContext](
    "upgrade.field-unknown",
    AREA,
    "warning",
    "Remove {setting} from the configuration of kubelet {minor}, or keep this node on its minor.",
    _field_unknown,
    summary="the configuration sets a field the planned minor does not know: it is ignored",
)


def _rollback_config(c: LintContext) -> Iterator[Hit]:
    """The planned configuration as today's minor would read it after a rollback of the kubelet alone."""
    if not c.plan.upgrades:
        return
    today, new = c.today, c.profile
    gates = feature_gates(c.plan.planned) or {}
    for name, value in gates.items():
        if refusal(new, {name: value}, dependencies=False) is not None:
            continue  # the planned minor refuses it too: a gate rule (``gates``) or the validator says so
        refused = refusal(today, {name: value}, dependencies=False)
        if refused is not None:
            yield Hit(
                f"featureGates.{name}",
                f"a configuration kubelet {today.name} accepts",
                f"{name}: {go_bool(value)}",
                f"Kubelet {new.name} accepts {name} ({describe_gate(new.gates.get(name))}); a rollback to kubelet "
                f'{today.name} with this configuration dies while decoding it: "{refused}".',
                severity="warning",
                fill={"minor": today.name},
            )
    for name in sorted(k for k in c.plan.target if k != KUBELET_VERSION):
        since = today.field_since(name)
        if since is not None:
            yield Hit(
                name,
                f"a field kubelet {today.name} knows",
                "set by the planned change",
                f"{name} exists from kubelet 1.{since}; a rollback to kubelet {today.name} with this configuration "
                f"{_ignored(name, False)}.",
                fill={"minor": today.name},
            )


UPGRADE_ROLLBACK_CONFIG = Rule[LintContext](
    "upgrade.rollback-config",
    AREA,
    "info",
    "Roll the configuration back with the kubelet: a rollback to kubelet {minor} needs the node's current {setting}.",
    _rollback_config,
    summary="what today's minor would refuse (warning) or ignore (info) in the planned configuration on a rollback",
)
