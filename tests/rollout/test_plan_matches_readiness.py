"""03 and 04 tell one story: for every node of the embedded sample and a matrix of targets, the drain and
checkpoint steps readiness shows (``Readiness.drains``, the plan table's manual steps, the verdict) are
the rollout plan's for that node: drain or not, why, which state files move, and whether it is refused.

Both read ``replay.drain``; this test holds the two reports to it from the outside, through the tables a
person reads, so a second decision in either one fails here.
"""

from __future__ import annotations

from typing import Any

import pytest

from tmnb.analysis.readiness import Readiness, assess
from tmnb.errors import InputError
from tmnb.rollout.plan import RolloutPlan, build_plan
from tmnb.snapshot import Snapshot
from tmnb.sources.embedded import load_sample

#: kubeReserved + systemReserved + the hard eviction threshold for memory on the 2-NUMA Intel nodes.
ONE_ZONE = [{"numaNode": 0, "limits": {"memory": "2148Mi"}}]

TARGETS: list[dict[str, Any]] = [
    {"topologyManagerPolicy": "none"},
    {"topologyManagerPolicy": "best-effort"},
    {"topologyManagerPolicy": "restricted"},
    {"topologyManagerPolicy": "single-numa-node"},
    {"topologyManagerScope": "pod"},
    {"topologyManagerScope": "container"},
    {"topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
    {"topologyManagerPolicyOptions": {}},
    {"cpuManagerPolicy": "static"},
    {"cpuManagerPolicy": "none", "cpuManagerPolicyOptions": {}},
    {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
    {"cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"}},
    {"cpuManagerPolicyOptions": {}},
    {"memoryManagerPolicy": "Static", "reservedMemory": ONE_ZONE},
    {"memoryManagerPolicy": "None"},
    {"reservedSystemCPUs": "0-1"},
    {"reservedSystemCPUs": "0,1,32,33"},
    {"reservedMemory": ONE_ZONE},
    {"topologyManagerPolicy": "restricted", "cpuManagerPolicy": "static", "memoryManagerPolicy": "Static"},
]


@pytest.fixture(scope="module")
def sample() -> Snapshot:
    return load_sample()


_REPORTS: dict[str, Readiness] = {}


def _assess(sample: Snapshot, target: dict[str, Any]) -> Readiness:
    """One readiness per target for the whole module (the matrix and its coverage check read the same)."""
    key = repr(target)
    if key not in _REPORTS:
        _REPORTS[key] = assess(sample, target)
    return _REPORTS[key]


def _plan(snap: Snapshot, report: Readiness) -> tuple[RolloutPlan | None, str]:
    """04's plan of every node (its canary where readiness has none to offer), or why there is none."""
    try:
        return build_plan(snap, report, change_id="matrix"), ""
    except InputError as err:
        if err.where == "canary":  # no canary to recommend: the steps do not depend on which node goes first
            first = next(
                n.name for n in snap.nodes if not report.steps[n.name].refused and report.steps[n.name].changes
            )
            return build_plan(snap, report, change_id="matrix", canary=first), ""
        return None, err.message


@pytest.mark.parametrize("target", TARGETS, ids=lambda t: ",".join(f"{k}={v}" for k, v in t.items()))
def test_readiness_names_the_steps_the_rollout_takes(sample: Snapshot, target: dict[str, Any]) -> None:
    report = _assess(sample, target)
    plan, nothing = _plan(sample, report)
    steps = report.drains.set_index("node")
    verdicts = report.verdicts.set_index("node")["verdict"]
    manual = report.plan.groupby("node")["manual action required"].first()
    planned = {c.node: c for c in plan.nodes} if plan else {}
    excluded = {e.node: e.reason for e in plan.excluded} if plan else {}
    for node in sample.nodes:
        row = steps.loc[node.name]
        if node.name in planned:
            change = planned[node.name]
            assert row["kubelet"] == "starts"
            assert (row["drain"], row["why"], row["state files moved"]) == (
                "yes" if change.drain else "no",
                change.drain_why,
                ", ".join(change.state_files),
            ), node.name
            assert verdicts[node.name] != "will reject pods"
            # the plan table names each step by hand, so a drained node is never "ready"
            assert ("drain the node" in manual[node.name]) == change.drain, node.name
            assert all(f"move {path} aside" in manual[node.name] for path in change.state_files), node.name
            assert not change.drain or verdicts[node.name] == "needs action", node.name
            continue
        reason = excluded.get(node.name) or next(
            part.split(": ", 1)[1] for part in nothing.split("; ") if part.split(": ", 1)[0].endswith(node.name)
        )
        if row["kubelet"] != "starts":
            assert reason == f"the kubelet would {row['kubelet'].replace('refuses', 'refuse')}", node.name
            assert verdicts[node.name] == "needs action"
        elif reason == "already at the target: nothing to change":
            assert row["why"] == reason and row["drain"] == "no"
        elif reason.startswith("the what-if rejects"):
            assert verdicts[node.name] == "will reject pods"
        else:  # refused by the write path (a flag, no config file): not a drain or checkpoint matter
            assert reason.startswith("refused: "), (node.name, reason)
    # 04's canary: recommended is 03's first pick it plans; 03 never picks a node the kubelet refuses, one
    # 04 leaves out for rejections, or one with nothing to change (the write path's refusals are 04's alone)
    picks = [c for c in report.canary["canary"] if c]
    assert all(p in planned or excluded.get(p, "").startswith("refused: ") for p in picks), (picks, excluded)
    if plan is not None and any(p in planned for p in picks):
        assert plan.nodes[0].node == next(p for p in picks if p in planned)


def test_the_matrix_meets_every_kind_of_step(sample: Snapshot) -> None:
    """So the comparison above cannot pass on trivial cases: across the matrix the kubelet refuses a target,
    refuses a checkpoint at start, restores one tmnb moves aside anyway, rejects or re-pins a running pod at
    the restart, and re-admits every pod."""
    kinds: set[str] = set()
    for target in TARGETS:
        for steps in _assess(sample, target).steps.values():
            kinds |= {"refused"} if steps.refused else set()
            kinds |= {"kubelet refuses a file" for f in steps.moved if f.refused and not steps.refused}
            kinds |= {"moved with care" for f in steps.moved if f.careful and not steps.refused}
            kinds |= {"restart risk"} if steps.why.startswith("at restart the kubelet re-admits the running") else set()
            kinds |= {"no drain"} if steps.changes and not steps.drain else set()
    assert kinds == {"refused", "kubelet refuses a file", "moved with care", "restart risk", "no drain"}
