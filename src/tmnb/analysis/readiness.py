"""The readiness verdict: per node, can the planned change go ahead, and where to start.

Combines the lint findings with the what-if replay: a node is ``ready`` when nothing needs
doing, ``needs action`` when findings at or above ``fail_on`` or manual steps exist, and
``will reject pods`` when the replay under the target settings rejects any pod.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from tmnb.analysis.inventory import shape_of
from tmnb.analysis.lint import SEVERITY_ORDER, Finding, Severity, plan_for
from tmnb.analysis.occupancy import pool_of
from tmnb.snapshot import Snapshot

#: Findings whose remedy is a manual step during the rollout, not a change of plan.
MANUAL_ACTION_RULES = {"manager-policy-change", "flag-overrides-file", "kubeadm-overwrites", "version-skew"}
VERDICTS = ("ready", "needs action", "will reject pods")


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def plan_table(snapshot: Snapshot, target: Mapping[str, Any], findings: Sequence[Finding]) -> pd.DataFrame:
    """``kubeadm upgrade plan`` style: one row per node and changed field, current -> target."""
    manual: dict[str, list[str]] = {}
    for f in findings:
        if f.rule in MANUAL_ACTION_RULES and f.severity != "info":
            manual.setdefault(f.node, []).append(f.remedy)
    rows = []
    for node in snapshot.nodes:
        plan = plan_for(node, target)
        for field in target:
            rows.append(
                {
                    "node": node.name,
                    "setting": field,
                    "current": _show(plan.current.get(field)),
                    "target": _show(plan.planned.get(field)),
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
    rows = []
    for node in snapshot.nodes:
        mine = [f for f in findings if f.node == node.name]
        counts = Counter(f.severity for f in mine)
        replay = whatif[whatif["node"] == node.name] if not whatif.empty else whatif
        rejected = replay[~replay["admitted"]] if not replay.empty else replay
        action = any(SEVERITY_ORDER[f.severity] >= threshold for f in mine) or any(
            f.rule in MANUAL_ACTION_RULES and f.severity != "info" for f in mine
        )
        verdict = "will reject pods" if len(rejected) else "needs action" if action else "ready"
        first = rejected.iloc[0] if len(rejected) else None
        rows.append(
            {
                "node": node.name,
                "pool": pool_of(node),
                "verdict": verdict,
                "blockers": counts["blocker"],
                "warnings": counts["warning"],
                "rejected pods": len(rejected),
                "first rejection": "" if first is None else f"{first['namespace']}/{first['pod']}: {first['reason']}",
            }
        )
    return pd.DataFrame(rows)


def recommend_canary(snapshot: Snapshot, verdict_table: pd.DataFrame, pool_label: str | None = None) -> pd.DataFrame:
    """Per pool: a Ready, schedulable node of the pool's most common hardware shape with the fewest
    Guaranteed pods; nodes that would reject pods are never proposed."""
    bad = set(verdict_table.loc[verdict_table["verdict"] == "will reject pods", "node"])
    guaranteed = Counter(p.node for p in snapshot.pods if p.qos_class == "Guaranteed" and p.phase == "Running")
    by_pool: dict[str, list] = {}
    for node in snapshot.nodes:
        by_pool.setdefault(pool_of(node, pool_label), []).append(node)
    rows = []
    for pool, nodes in sorted(by_pool.items()):
        shapes = Counter(shape_of(n).label for n in nodes)
        common = shapes.most_common(1)[0][0]
        candidates = [
            n
            for n in nodes
            if shape_of(n).label == common and n.ready is not False and not n.unschedulable and n.name not in bad
        ]
        if not candidates:
            rows.append(
                {
                    "pool": pool,
                    "canary": "",
                    "guaranteed pods": None,
                    "shape": common,
                    "nodes in pool": len(nodes),
                    "why": "no Ready, schedulable node of the common shape avoids rejections",
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
