"""The readiness verdict: per node, can the planned change go ahead, and where to start.

Combines the lint findings with the what-if replay: a node is ``ready`` when the change can go ahead
without a step by hand, ``needs action`` when findings at or above ``fail_on`` or manual steps on the
node exist, ``will reject pods`` when the replay under the target settings rejects any pod, and
``nothing to do`` when the target is what the node runs already. A step taken once for the whole
cluster (kubeadm's ConfigMap, the control plane's upgrade) is said once on top, not on every node.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.explain import Explained, explain_rejections, rejection_table, verdict_line
from tmnb.analysis.inventory import admission_failures, shape_of
from tmnb.analysis.lint import (
    SEVERITY_ORDER,
    Finding,
    Severity,
    at_or_above,
    fleet_step,
    lint,
    manual_step,
    needs_manual_action,
    node_step,
    to_frame,
)
from tmnb.analysis.minors import differences
from tmnb.analysis.occupancy import pool_of
from tmnb.analysis.upgrade.admission import admission_changes
from tmnb.analysis.whatif import NodeRows, common_sizes, frames, node_rows, pooled
from tmnb.errors import InputError
from tmnb.kubelet.profiles import KUBELET_VERSION
from tmnb.replay import DrainSteps, Mode, NodePlan, drain_steps, plans_for, show_value
from tmnb.report.commands import command, parameters
from tmnb.report.tables import counted, some
from tmnb.report.verdict import Verdict
from tmnb.settings.target import check_target_fields
from tmnb.snapshot import Node, Snapshot, Taint
from tmnb.snapshot.taints import BLOCKING, CORDON_TAINT, cordoned, taint_text

VERDICTS = ("ready", "needs action", "will reject pods", "unknown", "nothing to do")


def plan_table(
    snapshot: Snapshot, target: Mapping[str, Any], findings: Sequence[Finding], plans: Mapping[str, NodePlan]
) -> pd.DataFrame:
    """``kubeadm upgrade plan`` style: one row per node and target field, current -> target, with the steps
    by hand on that node (a step taken once for the cluster is said once, above the plan)."""
    manual: dict[str, list[str]] = {}
    for f in findings:
        if node_step(f):
            manual.setdefault(f.node, []).append(f.remedy)
    rows = []
    for node in snapshot.nodes:
        plan = plans[node.name]
        for field in target:
            current, planned = plan.shown(field)
            rows.append(
                {
                    "node": node.name,
                    "setting": field,
                    "current": current,
                    "target": planned,
                    "change": "yes" if plan.changes(field) else "no",
                    "manual action required": " ".join(dict.fromkeys(manual.get(node.name, []))) or "",
                }
            )
    return pd.DataFrame(rows, columns=["node", "setting", "current", "target", "change", "manual action required"])


def verdicts(
    snapshot: Snapshot, findings: Sequence[Finding], whatif: pd.DataFrame, fail_on: Severity = "blocker"
) -> pd.DataFrame:
    """One row per node: verdict, counts of findings by severity, rejected pods and the first rejection. A
    fleet step below ``fail_on`` (``lint.fleet_step``) leaves a node's verdict alone: it is said once."""
    threshold = SEVERITY_ORDER[fail_on]
    failing = failing_today(snapshot)
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
        action = any(SEVERITY_ORDER[f.severity] >= threshold or node_step(f) for f in mine)
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
                "failing today": failing.get(node.name, ""),
            }
        )
    return pd.DataFrame(rows)


def failing_today(snapshot: Snapshot) -> dict[str, str]:
    """Per node, the pods its kubelet refused at admission before any change (Failed with an admission
    reason): a node the change leaves "ready" may still have them, and its row says so."""
    failed = admission_failures(snapshot)
    return {
        str(node): f"{counted(len(part), 'pod')}, {', '.join(sorted(set(part['reason'])))}: "
        + some([f"{r.namespace}/{r.pod}" for r in part.itertuples()], 3)
        for node, part in failed.groupby("node")
    }


def steps_table(snapshot: Snapshot, steps: Mapping[str, DrainSteps]) -> pd.DataFrame:
    """One row per node: whether its kubelet starts with the target, the drain and the checkpoint files
    the rollout moves aside, and why (the decision 04's plan carries, ``replay.drain``)."""
    rows = [
        {
            "node": node.name,
            "kubelet": f"refuses the target: {s.refused}" if s.refused else "starts",
            "drain": "yes" if s.drain else "no",
            "state files moved": ", ".join(s.state_files),
            "why": s.why,
            "more careful than the kubelet": "yes" if s.careful else "no",
        }
        for node in snapshot.nodes
        for s in (steps[node.name],)
    ]
    columns = ["node", "kubelet", "drain", "state files moved", "why", "more careful than the kubelet"]
    return pd.DataFrame(rows, columns=columns)


def _own_taints(snapshot: Snapshot, pool_label: str | None) -> dict[str, list[Taint]]:
    """Per node, the NoSchedule/NoExecute taints the rest of its pool does not carry (the cordon's aside):
    a pool's shared taints are what its workloads tolerate, a node's own keep them off it."""
    pools: dict[str, list[Node]] = {}
    for node in snapshot.nodes:
        pools.setdefault(pool_of(node, pool_label), []).append(node)
    out = {}
    for nodes in pools.values():
        shared = set.intersection(*({(t.key, t.value, t.effect) for t in n.taints} for n in nodes))
        for node in nodes:
            own = [
                t
                for t in node.taints
                if t.effect in BLOCKING and t.key != CORDON_TAINT and (t.key, t.value, t.effect) not in shared
            ]
            if own:
                out[node.name] = own
    return out


def not_canary(
    snapshot: Snapshot,
    verdict_table: pd.DataFrame,
    findings: Sequence[Finding],
    steps: Mapping[str, DrainSteps],
    pool_label: str | None = None,
) -> dict[str, str]:
    """Why each node that cannot be a canary cannot (a node not listed can): a canary must tell whether the
    change works, so it is one the change changes, Ready, schedulable and not tainted unlike the rest of its
    pool (its pool's pods must land there), with no blocker, a kubelet that starts with the target, and no pod
    the what-if rejects. The rollout's ``canary: recommended`` reads it."""
    rejecting = set(verdict_table.loc[verdict_table["verdict"] == "will reject pods", "node"])
    blockers: dict[str, list[str]] = {}
    for f in findings:
        if f.severity == "blocker":
            blockers.setdefault(f.node, []).append(f.rule)
    own = _own_taints(snapshot, pool_label)
    out = {}
    for node in snapshot.nodes:
        step = steps[node.name]
        tainted = ", ".join(map(taint_text, own.get(node.name, [])))
        reasons = [
            why
            for bad, why in (
                (not step.changes, "the change does not change it"),
                (bool(step.refused), f"its kubelet would refuse the target ({step.refused})"),
                (node.name in blockers, f"blocker: {', '.join(dict.fromkeys(blockers.get(node.name, [])))}"),
                (node.name in rejecting, "the what-if rejects pods there"),
                (node.ready is False, "not Ready"),
                (cordoned(node), "cordoned"),
                (bool(tainted), f"tainted {tainted}, unlike the rest of its pool: its pods do not land there"),
            )
            if bad
        ]
        if reasons:
            out[node.name] = "; ".join(reasons)
    return out


def recommend_canary(snapshot: Snapshot, excluded: Mapping[str, str], pool_label: str | None = None) -> pd.DataFrame:
    """Per pool: a node that can be the canary (``not_canary``: ``excluded`` says why the others cannot), of
    the pool's most common hardware shape, with the fewest Guaranteed pods."""
    guaranteed = Counter(p.node for p in snapshot.pods if p.qos_class == "Guaranteed" and p.phase == "Running")
    by_pool: dict[str, list[Node]] = {}
    for node in snapshot.nodes:
        by_pool.setdefault(pool_of(node, pool_label), []).append(node)
    shape = {node.name: shape_of(node).label for node in snapshot.nodes}
    rows = []
    for pool, nodes in sorted(by_pool.items()):
        shapes = Counter(shape[n.name] for n in nodes)
        common = shapes.most_common(1)[0][0]
        candidates = [n for n in nodes if shape[n.name] == common and n.name not in excluded]
        row = {"pool": pool, "canary": "", "guaranteed pods": None, "shape": common, "nodes in pool": len(nodes)}
        if all(excluded.get(n.name) == "the change does not change it" for n in nodes):
            rows.append({**row, "why": "the change does not change any node of this pool"})
            continue
        if not candidates:
            why = some([f"{n.name}: {excluded.get(n.name, 'another hardware shape')}" for n in nodes], 3, "; ")
            rows.append({**row, "why": f"no node of the pool's most common shape can be the canary: {why}"})
            continue
        pick = min(candidates, key=lambda n: (guaranteed[n.name], n.name))
        rows.append(
            {
                **row,
                "canary": pick.name,
                "guaranteed pods": guaranteed[pick.name],
                "why": (
                    f"fewest Guaranteed pods among {counted(len(candidates), 'candidate')}"
                    if len(candidates) > 1
                    else "the only candidate"
                )
                + " of the pool's most common shape"
                + (f" ({_other_shapes(len(shapes) - 1)})" if len(shapes) > 1 else ""),
            }
        )
    return pd.DataFrame(rows)


def _other_shapes(n: int) -> str:
    return "1 other shape in the pool needs its own canary" if n == 1 else f"{n} other shapes in the pool need theirs"


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
    #: each node's drain and checkpoint steps (``replay.drain``): lint, the steps table and the rollout read them
    steps: dict[str, DrainSteps]
    #: the steps per node, as a table (``steps_table``)
    drains: pd.DataFrame
    #: why a node cannot be the canary (``not_canary``); the rollout's ``canary: recommended`` reads it
    not_canary: dict[str, str]
    #: how the what-if re-admitted the pods ("drain": from empty state; "restart")
    mode: Mode
    #: an upgrade (the target sets ``kubeletVersion``): the pods the planned minor admits or pins
    #: differently than today's minor under the same configuration, and why (``upgrade.admission_changes``)
    upgrade: pd.DataFrame
    #: the what-if's rejections explained (``explain.explain_rejections``)
    explained: list[Explained]

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
            parts.append(f"{counted(len(hits), 'finding')} at or above {self.fail_on}")
        if rejected:
            parts.append(f"{counted(rejected, 'pod')} would be rejected")
        if refused:
            parts.append(f"the kubelet would not start on {counted(refused, 'node')}")
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
    """``workers``: processes for each node's replays (``whatif.pooled``; default: this machine's cores),
    the restart behind the drain steps and the what-if, which are most of the time on a fleet; the report
    is the same with any number."""
    if not isinstance(target, Mapping) or not target:
        raise InputError("expected a non-empty mapping of KubeletConfiguration fields to set", where="target")
    check_target_fields(target)
    # Checked at run time as well: a notebook passes its parameters as plain strings.
    if fail_on not in SEVERITY_ORDER:
        raise InputError(f"expected one of {', '.join(SEVERITY_ORDER)}, got {fail_on!r}", where="fail_on")
    if mode not in ("drain", "restart"):
        raise InputError(f"expected drain or restart, got {mode!r}", where="mode")
    plans = plans_for(snapshot.nodes, target)
    sizes = common_sizes(snapshot)

    def replays(i: int) -> tuple[DrainSteps, NodeRows]:
        """A node's restart (its drain steps) and its what-if: the two replays, in one pooled pass."""
        node = snapshot.nodes[i]
        steps = drain_steps(plans[node.name], snapshot.pods_on(node.name))
        return steps, node_rows(snapshot, i, target, mode, sizes, plans)

    replayed = list(pooled(len(snapshot.nodes), replays, workers or os.cpu_count() or 1))
    steps = {n.name: s for n, (s, _) in zip(snapshot.nodes, replayed, strict=True)}
    findings = lint(snapshot, target, pool_label=pool_label, plans=plans, steps=steps)
    pods, nodes = frames(rows for _, rows in replayed)
    table = verdicts(snapshot, findings, pods, fail_on)
    refused = set(nodes.loc[~nodes["kubelet starts"], "node"]) if not nodes.empty else set()
    refused |= {n for n, s in steps.items() if s.refused}
    table.loc[table["node"].isin(refused), "verdict"] = "needs action"
    unknown = set(nodes.loc[~nodes["modelled"], "node"]) if not nodes.empty else set()
    table.loc[table["node"].isin(unknown) & (table["verdict"] == "ready"), "verdict"] = "unknown"
    unchanged = {n for n, s in steps.items() if not s.changes}
    table.loc[table["node"].isin(unchanged) & (table["verdict"] != "will reject pods"), "verdict"] = "nothing to do"
    excluded = not_canary(snapshot, table, findings, steps, pool_label)
    return Readiness(
        target=dict(target),
        fail_on=fail_on,
        findings=findings,
        lint=to_frame(findings),
        pods=pods,
        nodes=nodes,
        verdicts=table,
        plan=plan_table(snapshot, target, findings, plans),
        canary=recommend_canary(snapshot, excluded, pool_label),
        plans=plans,
        steps=steps,
        drains=steps_table(snapshot, steps),
        not_canary=excluded,
        mode=mode,
        upgrade=admission_changes(snapshot, plans, pods, mode=mode),
        explained=explain_rejections(snapshot, pods, target, mode),
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


def lint_per_node(lint_table: pd.DataFrame) -> pd.DataFrame:
    """Every finding per node without the texts ``lint_by_rule`` already says once per rule: the
    explanation only where it differs between the rule's nodes, never the remedy."""
    if lint_table.empty:
        return lint_table
    varies = lint_table.groupby("rule")["explanation"].transform("nunique") > 1
    shown = lint_table.drop(columns=["explanation", "remedy"])
    return shown.assign(**{"explanation where it differs per node": lint_table["explanation"].where(varies, "")})


def rejected_first(pods: pd.DataFrame) -> pd.DataFrame:
    """The predicted admission as a person reads it: rejected pods first, named by namespace and
    name (the UID, 36 characters no one searches for, stays in the results)."""
    if pods.empty:
        return pods
    shown = pods.drop(columns=[c for c in ("uid",) if c in pods.columns])
    return shown.sort_values(["admitted", "node"], kind="stable").reset_index(drop=True)


def summary(report: Readiness) -> str:
    counts = Counter(report.verdicts["verdict"])
    verdict = ", ".join(f"**{counts[v]}** {v}" for v in VERDICTS)
    target = ", ".join(f"`{k}: {show_value(v)}`" for k, v in report.target.items())
    alert = f" **Alert:** {report.alert}." if report.alert else " No alert."
    upgrade = ""
    if report.upgrades:
        moving = sum(p.upgrades for p in report.plans.values())
        upgrade = (
            f" The upgrade moves **{counted(moving, 'node')}** to another kubelet minor; "
            f"**{counted(len(report.upgrade), 'pod')}** would be admitted or pinned differently than under "
            "today's minor."
        )
    return f"Target {target}. Nodes: {verdict}.{upgrade}{alert}"


def rejections(report: Readiness) -> pd.DataFrame:
    """03's rejected pods, each explained (``explain.rejection_table``)."""
    return rejection_table(report.explained)


def _named(nodes: list[str], shown: int = 10) -> str:
    return some([f"**{n}**" for n in nodes], shown)


def _grouped(findings: list[Finding], label: str) -> list[str]:
    """Findings that read the same on several nodes said once, with their nodes: ``label`` names the remedy."""
    groups: dict[tuple[str, str, str], list[str]] = {}
    for f in findings:
        groups.setdefault((f.rule, f.explanation, f.remedy), []).append(f.node)
    return [
        f"{_named(nodes)} ({rule}): {explanation} **{label}:** {remedy}"
        for (rule, explanation, remedy), nodes in groups.items()
    ]


def _rejection_lines(report: Readiness) -> list[str]:
    """Each node whose pods the what-if rejects: how many, and the first one explained where 03 explains it."""
    rejected = report.pods[~report.pods["admitted"]] if not report.pods.empty else report.pods
    explained: dict[str, Explained] = {}
    for e in report.explained:
        explained.setdefault(e.diagnosis.node, e)
    lines = []
    for node, pods in rejected.groupby("node") if len(rejected) else ():
        found = explained.get(str(node))
        if found is not None:
            lines.append(verdict_line(found, len(pods)))
            continue
        first = pods.iloc[0]
        lines.append(
            f"**{node}**: {counted(len(pods), 'pod')} would be rejected, first {first['namespace']}/{first['pod']} "
            f"({first['reason']}: {first['message']}). Leave this node out, or free or re-size the pods first."
        )
    return lines


def verdict(report: Readiness) -> Verdict:
    """The report's answer: what is ready, what blocks (each blocker's remedy in full, said once for the
    nodes it reads the same on; each rejection's cause and what admits it), the steps taken once for the
    cluster, the steps per node, the canary per pool and the exact command that plans the canary's rollout."""
    counts = Counter(report.verdicts["verdict"])
    by = {v: sorted(report.verdicts.loc[report.verdicts["verdict"] == v, "node"]) for v in VERDICTS}
    ready = [f"**{counts[v]}** {v}: {', '.join(by[v])}" for v in VERDICTS if counts[v]]
    threshold = SEVERITY_ORDER[report.fail_on]
    blocks = _grouped([f for f in report.findings if SEVERITY_ORDER[f.severity] >= threshold], "Fix")
    blocks += _rejection_lines(report)
    below = [f for f in report.findings if SEVERITY_ORDER[f.severity] < threshold and needs_manual_action(f)]
    once = _grouped([f for f in below if fleet_step(f.rule)], "Step, once for the cluster")
    steps = _grouped([f for f in below if not fleet_step(f.rule)], "Step")
    picked = report.canary[report.canary["canary"] != ""]
    canaries = [f"pool **{r.pool}**: canary `{r.canary}` ({r.why})" for r in picked.itertuples()]
    canaries += [f"pool **{r.pool}**: no canary: {r.why}" for r in report.canary.itertuples() if not r.canary]
    if not len(picked):
        canaries.append("**No node can be the canary**, so there is no rollout to plan: fix what blocks it first.")
    # 04 rolls out configuration only and refuses kubeletVersion: the kubelet is upgraded by its pipeline first
    configuration = {k: v for k, v in report.target.items() if k != KUBELET_VERSION}
    commands: list[str] = []
    if len(picked) and configuration:
        first = str(picked.iloc[0]["canary"])
        commands = [command("run", "04-rollout", params={"target": configuration, "nodes": [first], "canary": first})]
    if blocks:
        tone: Literal["ok", "warn", "stop"] = "stop"
        verb = "blocks" if len(blocks) == 1 else "block"
        fix = "Fix it" if len(blocks) == 1 else "Fix them"
        headline = f"Not ready: {counted(len(blocks), 'thing')} {verb} this change. {fix}, then plan the canary."
    elif not len(picked):
        tone, headline = "warn", "Nothing to roll out yet: no node can be the canary (see what to do next)."
    elif counts["needs action"] or counts["unknown"]:
        tone, headline = "warn", "Ready with manual steps: the plan below lists them per node. Start with the canary."
    elif once:
        tone, headline = "warn", "Ready, with a step once for the whole cluster (below). Start with the canary."
    else:
        tone, headline = "ok", "Ready: nothing blocks this change. Start with the canary."
    next_steps = canaries
    if report.upgrades and len(picked):
        next_steps.append(
            f"Upgrade the kubelet to {report.target[KUBELET_VERSION]} with your node image or package pipeline, "
            "canary first: a rollout (04) changes the kubelet's configuration, not its version."
        )
    if commands:
        then = "Then plan" if report.upgrades else "Plan"
        next_steps.append(
            f"{then} the canary's rollout (writes nothing; add "
            f"`{parameters(mode='execute', approve=['canary'])}` to carry it out):"
        )
    return Verdict(
        tone,
        headline,
        [
            ("Nodes", ready + failing_lines(report.verdicts)),
            ("What blocks", blocks),
            ("Once for the whole cluster", once),
            ("Manual steps", steps),
            ("What to do next", next_steps),
        ],
        commands,
    )


def failing_lines(verdict_table: pd.DataFrame) -> list[str]:
    """The nodes with pods failing today, whatever the change's verdict: old failures, not the change's."""
    if "failing today" not in verdict_table:
        return []
    failing = verdict_table[verdict_table["failing today"] != ""]
    return [
        f"**{node}** ({verdict}): failing today, before any change: {pods}"
        for node, verdict, pods in zip(failing["node"], failing["verdict"], failing["failing today"], strict=True)
    ]
