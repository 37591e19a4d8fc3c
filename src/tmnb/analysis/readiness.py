"""The readiness verdict: per node, can the planned change go ahead, and where to start.

Combines the lint findings with the what-if replay: a node is ``ready`` when nothing needs
doing, ``needs action`` when findings at or above ``fail_on`` or manual steps exist, and
``will reject pods`` when the replay under the target settings rejects any pod.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.inventory import shape_of
from tmnb.analysis.lint import (
    SEVERITY_ORDER,
    Finding,
    Severity,
    at_or_above,
    lint,
    manual_step,
    needs_manual_action,
    to_frame,
)
from tmnb.analysis.minors import differences
from tmnb.analysis.occupancy import pool_of
from tmnb.analysis.upgrade import admission_changes
from tmnb.analysis.whatif import whatif
from tmnb.errors import InputError
from tmnb.kubelet.profiles import KUBELET_VERSION
from tmnb.replay import Mode, NodePlan, plans_for, show_value
from tmnb.report.tables import some
from tmnb.report.verdict import Verdict
from tmnb.settings.target import check_target_fields
from tmnb.snapshot import Node, Snapshot

VERDICTS = ("ready", "needs action", "will reject pods", "unknown")


def plan_table(
    snapshot: Snapshot, target: Mapping[str, Any], findings: Sequence[Finding], plans: Mapping[str, NodePlan]
) -> pd.DataFrame:
    """``kubeadm upgrade plan`` style: one row per node and changed field, current -> target."""
    manual: dict[str, list[str]] = {}
    for f in findings:
        if needs_manual_action(f):
            manual.setdefault(f.node, []).append(f.remedy)
    rows = []
    for node in snapshot.nodes:
        plan = plans[node.name]
        for field in target:
            rows.append(
                {
                    "node": node.name,
                    "setting": field,
                    "current": show_value(plan.current.get(field)),
                    "target": show_value(plan.planned.get(field)),
                    "change": "yes" if plan.changes(field) else "no",
                    "manual action required": " ".join(dict.fromkeys(manual.get(node.name, []))) or "",
                }
            )
    return pd.DataFrame(rows, columns=["node", "setting", "current", "target", "change", "manual action required"])


def verdicts(
    snapshot: Snapshot, findings: Sequence[Finding], whatif: pd.DataFrame, fail_on: Severity = "blocker"
) -> pd.DataFrame:
    """One row per node: verdict, counts of findings by severity, rejected pods and the first rejection."""
    threshold = SEVERITY_ORDER[fail_on]
    # Findings and rejections grouped by node in one pass each: a fleet has thousands of nodes and
    # a hundred thousand pods, and a scan per node made this step quadratic.
    by_node: dict[str, list[Finding]] = {}
    for f in findings:
        by_node.setdefault(f.node, []).append(f)
    rejected = whatif[~whatif["admitted"]] if not whatif.empty else whatif
    rejections: Counter[str] = Counter()
    first_rejection: dict[str, str] = {}
    if not rejected.empty:
        columns = (rejected[c] for c in ("node", "namespace", "pod", "reason"))
        for node_name, namespace, pod, reason in zip(*columns, strict=True):
            rejections[node_name] += 1
            first_rejection.setdefault(node_name, f"{namespace}/{pod}: {reason}")
    rows = []
    for node in snapshot.nodes:
        mine = by_node.get(node.name, [])
        counts = Counter(f.severity for f in mine)
        action = any(SEVERITY_ORDER[f.severity] >= threshold or needs_manual_action(f) for f in mine)
        verdict = "will reject pods" if rejections[node.name] else "needs action" if action else "ready"
        rows.append(
            {
                "node": node.name,
                "pool": pool_of(node),
                "verdict": verdict,
                "blockers": counts["blocker"],
                "warnings": counts["warning"],
                "rejected pods": rejections[node.name],
                "first rejection": first_rejection.get(node.name, ""),
            }
        )
    return pd.DataFrame(rows)


def recommend_canary(
    snapshot: Snapshot, verdict_table: pd.DataFrame, changing: set[str], pool_label: str | None = None
) -> pd.DataFrame:
    """Per pool: a Ready, schedulable node that the change actually changes, of the pool's most
    common hardware shape, with the fewest Guaranteed pods; nodes that would reject pods are never
    proposed (a canary must tell whether the change works, not demonstrate a known failure)."""
    bad = set(verdict_table.loc[verdict_table["verdict"] == "will reject pods", "node"])
    guaranteed = Counter(p.node for p in snapshot.pods if p.qos_class == "Guaranteed" and p.phase == "Running")
    by_pool: dict[str, list[Node]] = {}
    for node in snapshot.nodes:
        by_pool.setdefault(pool_of(node, pool_label), []).append(node)
    rows = []
    for pool, nodes in sorted(by_pool.items()):
        shapes = Counter(shape_of(n).label for n in nodes)
        common = shapes.most_common(1)[0][0]
        candidates = [
            n
            for n in nodes
            if shape_of(n).label == common
            and n.name in changing
            and n.ready is not False
            and not n.unschedulable
            and n.name not in bad
        ]
        if not any(n.name in changing for n in nodes):
            rows.append(
                {
                    "pool": pool,
                    "canary": "",
                    "guaranteed pods": None,
                    "shape": common,
                    "nodes in pool": len(nodes),
                    "why": "the change does not change any node of this pool",
                }
            )
            continue
        if not candidates:
            rows.append(
                {
                    "pool": pool,
                    "canary": "",
                    "guaranteed pods": None,
                    "shape": common,
                    "nodes in pool": len(nodes),
                    "why": "no Ready, schedulable node of the common shape that the change affects avoids rejections",
                }
            )
            continue
        pick = min(candidates, key=lambda n: (guaranteed[n.name], n.name))
        rows.append(
            {
                "pool": pool,
                "canary": pick.name,
                "guaranteed pods": guaranteed[pick.name],
                "shape": common,
                "nodes in pool": len(nodes),
                "why": f"fewest Guaranteed pods among {len(candidates)} candidates of the pool's most common shape"
                + (f" ({len(shapes) - 1} other shape(s) in the pool need their own canary)" if len(shapes) > 1 else ""),
            }
        )
    return pd.DataFrame(rows)


@dataclass
class Readiness:
    """Everything the readiness report shows, computed once."""

    target: dict[str, Any]
    fail_on: Severity
    findings: list[Finding]
    lint: pd.DataFrame
    pods: pd.DataFrame
    nodes: pd.DataFrame
    verdicts: pd.DataFrame
    plan: pd.DataFrame
    canary: pd.DataFrame
    #: each node's plan, built once and shared by lint, what-if, the plan table and the rollout
    plans: dict[str, NodePlan]
    #: how the what-if re-admitted the pods ("drain": from empty state; "restart")
    mode: Mode
    #: an upgrade (the target sets ``kubeletVersion``): the pods the planned minor admits or pins
    #: differently than today's minor under the same configuration, and why (``upgrade.admission_changes``)
    upgrade: pd.DataFrame

    @property
    def upgrades(self) -> bool:
        return KUBELET_VERSION in self.target

    @property
    def alert(self) -> str:
        """Why a scheduler should be alerted ("" when nothing is at or above ``fail_on``)."""
        hits = at_or_above(self.findings, self.fail_on)
        rejected = int((~self.pods["admitted"]).sum()) if not self.pods.empty else 0
        refused = int((~self.nodes["kubelet starts"]).sum()) if not self.nodes.empty else 0
        parts = []
        if hits:
            parts.append(f"{len(hits)} finding(s) at or above {self.fail_on}")
        if rejected:
            parts.append(f"{rejected} pod(s) would be rejected")
        if refused:
            parts.append(f"the kubelet would not start on {refused} node(s)")
        return "; ".join(parts)


def assess(
    snapshot: Snapshot,
    target: Mapping[str, Any],
    *,
    mode: Mode = "drain",
    fail_on: Severity = "blocker",
    pool_label: str | None = None,
    workers: int | None = None,
) -> Readiness:
    """``workers``: processes for the what-if replay (``whatif``; default: this machine's cores), which is
    most of the time on a fleet; the report is the same with any number."""
    if not isinstance(target, Mapping) or not target:
        raise InputError("expected a non-empty mapping of KubeletConfiguration fields to set", where="target")
    check_target_fields(target)
    # Checked at run time as well: a notebook passes its parameters as plain strings.
    if fail_on not in SEVERITY_ORDER:
        raise InputError(f"expected one of {', '.join(SEVERITY_ORDER)}, got {fail_on!r}", where="fail_on")
    if mode not in ("drain", "restart"):
        raise InputError(f"expected drain or restart, got {mode!r}", where="mode")
    plans = plans_for(snapshot.nodes, target)
    findings = lint(snapshot, target, pool_label=pool_label, plans=plans)
    pods, nodes = whatif(snapshot, target, mode=mode, plans=plans, workers=workers or os.cpu_count() or 1)
    table = verdicts(snapshot, findings, pods, fail_on)
    refused = set(nodes.loc[~nodes["kubelet starts"], "node"]) if not nodes.empty else set()
    table.loc[table["node"].isin(refused), "verdict"] = "needs action"
    unknown = set(nodes.loc[~nodes["modelled"], "node"]) if not nodes.empty else set()
    table.loc[table["node"].isin(unknown) & (table["verdict"] == "ready"), "verdict"] = "unknown"
    plan = plan_table(snapshot, target, findings, plans)
    changing = set(plan.loc[plan["change"] == "yes", "node"])
    changing |= {name for name, p in plans.items() if p.upgrades}
    return Readiness(
        target=dict(target),
        fail_on=fail_on,
        findings=findings,
        lint=to_frame(findings),
        pods=pods,
        nodes=nodes,
        verdicts=table,
        plan=plan,
        canary=recommend_canary(snapshot, table, changing, pool_label),
        plans=plans,
        mode=mode,
        upgrade=admission_changes(snapshot, plans, pods, mode=mode),
    )


def results(report: Readiness, snapshot_path: str | Path) -> dict[str, Any]:
    """What a readiness run hands whoever scheduled it (the run manifest's ``results``): each node's
    verdict, each pool's canary, the blocker and rejection counts, the stored snapshot, and the
    alert when there is one."""
    rejected = int((~report.pods["admitted"]).sum()) if len(report.pods) else 0
    values: dict[str, Any] = {
        "verdicts": dict(zip(report.verdicts["node"], report.verdicts["verdict"], strict=True)),
        "canary": dict(zip(report.canary["pool"], report.canary["canary"], strict=True)),
        "blockers": int((report.lint["severity"] == "blocker").sum()),
        "rejected": rejected,
        "snapshot": str(snapshot_path),
    }
    if report.upgrades:
        values["upgrade_changes"] = len(report.upgrade)
    if report.alert:
        values["alert"] = {"why": report.alert}
    return values


def minor_changes(report: Readiness) -> pd.DataFrame:
    """For an upgrade: what differs between the minors the nodes run today and the planned one (a column
    per minor), with the feature gates the planned configurations set; empty when no node changes minor."""
    moving = [p for p in report.plans.values() if p.upgrades]
    if not moving:
        return pd.DataFrame(columns=["fact"])
    profiles = [p.kubelet.profile for p in moving] + [moving[0].planned_kubelet]
    gates = {g for p in moving for g in p.planned.get("featureGates") or {}}
    return differences(profiles, gates)


def lint_by_rule(lint_table: pd.DataFrame, shown: int = 5) -> pd.DataFrame:
    """Each rule once, most severe first, with how many nodes it fires on and some of them: the
    findings table has a row per node, which at a fleet's size hides which pitfalls there are."""
    if lint_table.empty:
        return lint_table
    rows = []
    for (rule, severity), part in lint_table.groupby(["rule", "severity"], sort=False):
        nodes = list(dict.fromkeys(part["node"]))
        first = part.iloc[0]
        varies = part["explanation"].nunique() > 1
        rows.append(
            {
                "severity": severity,
                "rule": rule,
                "nodes": len(nodes),
                "for example": some(nodes, shown),
                "explanation": first["explanation"] + (f" (on {first['node']}; it differs per node)" if varies else ""),
                "remedy": first["remedy"],
                "manual step": manual_step(str(rule), str(severity)),
            }
        )
    return pd.DataFrame(rows)


def rejected_first(pods: pd.DataFrame) -> pd.DataFrame:
    if pods.empty:
        return pods
    return pods.sort_values(["admitted", "node"], kind="stable").reset_index(drop=True)


def summary(report: Readiness) -> str:
    counts = Counter(report.verdicts["verdict"])
    verdict = ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS)
    target = ", ".join(f"`{k}: {show_value(v)}`" for k, v in report.target.items())
    alert = f" **Alert:** {report.alert}." if report.alert else " No alert."
    upgrade = ""
    if report.upgrades:
        moving = sum(p.upgrades for p in report.plans.values())
        upgrade = (
            f" The upgrade moves **{moving}** node(s) to another kubelet minor; **{len(report.upgrade)}** pod(s) "
            "would be admitted or pinned differently than under today's minor."
        )
    return f"Target {target}. Nodes: {verdict}.{upgrade}{alert}"


def verdict(report: Readiness) -> Verdict:
    """The report's answer: what is ready, what blocks (each blocker's remedy in full), the canary
    per pool and the exact command that plans the canary's rollout."""
    import yaml

    counts = Counter(report.verdicts["verdict"])
    by = {v: sorted(report.verdicts.loc[report.verdicts["verdict"] == v, "node"]) for v in VERDICTS}
    ready = [f"**{counts[v]}** {v}: {', '.join(by[v])}" for v in VERDICTS if counts[v]]
    blocks = [
        f"**{f.node}** ({f.rule}): {f.explanation} **Fix:** {f.remedy}"
        for f in report.findings
        if SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER[report.fail_on]
    ]
    rejected = report.pods[~report.pods["admitted"]] if not report.pods.empty else report.pods
    for node, pods in rejected.groupby("node") if len(rejected) else ():
        first = pods.iloc[0]
        blocks.append(
            f"**{node}**: {len(pods)} pod(s) would be rejected, first {first['namespace']}/{first['pod']} "
            f"({first['reason']}: {first['message']}). Leave this node out, or free or re-size the pods first."
        )
    picked = report.canary[report.canary["canary"] != ""]
    canaries = [f"pool **{r.pool}**: canary `{r.canary}` ({r.why})" for r in picked.itertuples()]
    canaries += [f"pool **{r.pool}**: no canary: {r.why}" for r in report.canary.itertuples() if not r.canary]
    commands: list[str] = []
    blocked = {f.node for f in report.findings if SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER[report.fail_on]}
    clean = picked[~picked["canary"].isin(blocked)]
    if len(picked):
        first = (clean if len(clean) else picked).iloc[0]["canary"]
        target = yaml.safe_dump(report.target, default_flow_style=True, width=10_000).strip()
        commands = [
            f"tmnb run notebooks/04-rollout.ipynb -p target '{target}' -p nodes '[{first}]' -p canary {first}",
        ]
    if blocks:
        tone: Literal["ok", "warn", "stop"] = "stop"
        headline = f"Not ready: {len(blocks)} thing(s) block this change. Fix them, then plan the canary."
    elif counts["needs action"] or counts["unknown"]:
        tone, headline = "warn", "Ready with manual steps: the plan below lists them per node. Start with the canary."
    else:
        tone, headline = "ok", "Ready: nothing blocks this change. Start with the canary."
    next_steps = canaries + (
        ["Plan the canary's rollout (writes nothing; add `-p mode execute -p approve '[canary]'` to carry it out):"]
        if commands
        else []
    )
    return Verdict(
        tone, headline, [("Nodes", ready), ("What blocks", blocks), ("What to do next", next_steps)], commands
    )
