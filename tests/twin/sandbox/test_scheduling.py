"""The sandbox scheduler's resource fit: requests are summed exactly, as the scheduler's integer
milli-CPU and byte counts are, so pods that fill a node to the last milli-CPU all fit."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from factories import node, snapshot
from tmnb.twin.sandbox.cluster import Cluster
from tmnb.twin.sandbox.scheduling import cpu_load, requests, unfit


def _burstable(name: str, cpu: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Mi"}}}]},
    }


def test_tenths_of_a_cpu_fill_the_node_exactly() -> None:
    """0.1 + 0.1 + 0.1 is 0.30000000000000004 in floats, which would call the third pod too big."""
    w1 = node("w1", allocatable={"cpu": "300m", "memory": "1Gi", "pods": "110"})
    cluster = Cluster(snapshot([w1], []), None)
    for i in range(4):
        cluster.create_pod("app", _burstable(f"tenth-{i}", "100m"))
    pods = {p["metadata"]["name"]: p for p in cluster.items("pods", "app")}
    assert [pods[f"tenth-{i}"]["spec"].get("nodeName") for i in range(4)] == ["w1", "w1", "w1", None]
    (condition,) = pods["tenth-3"]["status"]["conditions"]
    assert condition["message"] == "0/1 nodes are available: 1 Insufficient cpu."


def _node(allocatable: dict[str, str], *, ready: bool = True, unschedulable: bool = False) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ready else "Unknown"}
    return {
        "metadata": {"name": "n"},
        "spec": {"unschedulable": True} if unschedulable else {},
        "status": {"allocatable": allocatable, "conditions": [condition]},
    }


@pytest.mark.parametrize(
    ("node", "bound", "why"),
    [
        (_node({"cpu": "4"}, unschedulable=True), [], "node(s) were unschedulable"),
        (_node({"cpu": "4"}, ready=False), [], "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"),
        (_node({"cpu": "4", "memory": "1Gi", "pods": "1"}), [_burstable("a", "1")], "Too many pods"),
        (_node({"cpu": "1500m", "memory": "1Gi"}), [_burstable("a", "1")], "Insufficient cpu"),
        (_node({"cpu": "2", "memory": "1Mi"}), [_burstable("a", "1")], "Insufficient memory"),
        (_node({"cpu": "2", "memory": "2Mi"}), [_burstable("a", "1")], None),
    ],
)
def test_filters_in_the_schedulers_words(node: dict[str, Any], bound: list[dict[str, Any]], why: str | None) -> None:
    assert unfit(node, bound, _burstable("new", "1")) == why


def test_least_allocated_cpu_scores_best() -> None:
    bound = [_burstable("a", "500m"), _burstable("b", "1")]
    assert cpu_load(_node({"cpu": "6"}), bound) == Decimal("0.25")
    assert cpu_load(_node({"cpu": "0"}), bound) == 1
    assert requests(bound[0]) == {"cpu": Decimal("0.5"), "memory": Decimal(1 << 20)}
