"""Lint a planned kubelet change against each node's current state, before anything is touched.

A finding says where (node, area, setting), what the plan expects and what the node has, how bad
it is (``blocker``: the change will fail or not take effect; ``warning``: it needs care or
manual action; ``info``: worth knowing) and what to do. Each rule is a ``Rule`` (``analysis.rules``):
one pitfall, its metadata and a small check, so ``RULES`` reads like the runbook's "known issues"
section. The rules live by what they read: the planned settings on the node (``setting_rules``), the
kubelet's restart (``restart_rules``), the cluster as it is (``cluster_rules``), the settings
validator's findings (``validator_rule``, with each validator code's metadata) and a target that
changes the kubelet minor (``upgrade``). ``REGISTRY`` holds every rule and every validator finding code
by id: readiness and the reports read the manual-action flag and the remedy from there.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import asdict
from typing import Any

import pandas as pd

from tmnb.analysis.cluster_rules import GUARANTEED_FRACTIONAL_CPU, MIXED_HARDWARE_POOL, VERSION_SKEW
from tmnb.analysis.restart_rules import MANAGER_POLICY_CHANGE, RESTART_DRAIN
from tmnb.analysis.rules import SEVERITY_ORDER, Finding, FleetContext, LintContext, Rule, Severity, ValidatorCode
from tmnb.analysis.setting_rules import (
    CPU_NONE_STRICT_TOPOLOGY,
    DEVICE_WITHOUT_NUMA,
    FLAG_OVERRIDES_FILE,
    KUBEADM_OVERWRITES,
    OPTION_MATURITY,
    RESERVED_CPUS_SPAN_NUMA,
)
from tmnb.analysis.upgrade import UPGRADE_RULES
from tmnb.analysis.validator_rule import KUBELET_CONFIG, VALIDATOR_CODES
from tmnb.replay import DrainSteps, NodePlan, plans_for
from tmnb.settings.findings import Finding as ValidatorFinding
from tmnb.snapshot import Snapshot
from tmnb.versions import KubeVersion

__all__ = [
    "REGISTRY",
    "RULES",
    "SEVERITY_ORDER",
    "Finding",
    "Severity",
    "at_or_above",
    "fleet_step",
    "lint",
    "manual_step",
    "needs_manual_action",
    "node_step",
    "to_frame",
]

#: Every node rule, in the order its findings are listed.
RULES: tuple[Rule[LintContext], ...] = (
    KUBELET_CONFIG,
    FLAG_OVERRIDES_FILE,
    OPTION_MATURITY,
    CPU_NONE_STRICT_TOPOLOGY,
    MANAGER_POLICY_CHANGE,
    RESTART_DRAIN,
    DEVICE_WITHOUT_NUMA,
    RESERVED_CPUS_SPAN_NUMA,
    VERSION_SKEW,
    KUBEADM_OVERWRITES,
    GUARANTEED_FRACTIONAL_CPU,
    *UPGRADE_RULES,
)
FLEET_RULES: tuple[Rule[FleetContext], ...] = (MIXED_HARDWARE_POOL,)

#: Every rule and validator code by id: what readiness and the reports read a finding's metadata from.
REGISTRY: dict[str, Rule[LintContext] | Rule[FleetContext] | ValidatorCode] = {
    **{r.id: r for r in RULES},
    **{r.id: r for r in FLEET_RULES},
    **VALIDATOR_CODES,
}


def manual_step(rule: str, severity: str) -> bool:
    """Whether a finding of ``rule`` at ``severity`` needs a step by hand during the rollout: a warning or
    blocker of a rule whose registry entry says so."""
    entry = REGISTRY.get(rule)
    return entry is not None and entry.manual and severity != "info"


def needs_manual_action(finding: Finding) -> bool:
    return manual_step(finding.rule, finding.severity)


def fleet_step(rule: str) -> bool:
    """Whether the manual step of ``rule``'s findings is taken once for the cluster, not on each node."""
    entry = REGISTRY.get(rule)
    return isinstance(entry, Rule) and entry.fleet


def node_step(finding: Finding) -> bool:
    """Whether ``finding`` needs a step by hand on its own node (``needs_manual_action``, not ``fleet_step``)."""
    return needs_manual_action(finding) and not fleet_step(finding.rule)


def lint(
    snapshot: Snapshot,
    target: Mapping[str, Any],
    *,
    pool_label: str | None = None,
    plans: Mapping[str, NodePlan] | None = None,
    steps: Mapping[str, DrainSteps] | None = None,
) -> list[Finding]:
    """Every finding for ``target`` (KubeletConfiguration fields to set) on every node of the snapshot;
    ``plans`` and ``steps`` (by node name) are the ones the caller already decided for the same target."""
    plans = plans if plans is not None else plans_for(snapshot.nodes, target)
    server = None
    if snapshot.cluster.server_version:
        server = KubeVersion.parse(snapshot.cluster.server_version, source="cluster.server_version")
    fleet = FleetContext(snapshot, pool_label)
    findings: list[Finding] = [f for rule in FLEET_RULES for f in rule.run(fleet)]
    validated: dict[tuple[object, ...], tuple[ValidatorFinding, ...]] = {}  # one run's, so a patched validator is seen
    for node in snapshot.nodes:
        decided = steps.get(node.name) if steps is not None else None
        context = LintContext(plans[node.name], tuple(snapshot.pods_on(node.name)), server, decided, validated)
        for node_rule in RULES:
            findings.extend(node_rule.run(context))
    return findings


def to_frame(findings: Iterable[Finding]) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(f) for f in findings], columns=list(Finding.__dataclass_fields__))
    order = frame["severity"].map(SEVERITY_ORDER)
    return (
        frame.assign(_o=-order)
        .sort_values(["_o", "node", "rule"], kind="stable")
        .drop(columns="_o")
        .reset_index(drop=True)
    )


def at_or_above(findings: Iterable[Finding], level: Severity) -> list[Finding]:
    return [f for f in findings if SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER[level]]
