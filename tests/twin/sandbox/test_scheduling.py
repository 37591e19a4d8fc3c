"""The sandbox scheduler's filters: cordons and taints unless tolerated, in the default scheduler's
words (NodeUnschedulable, TaintToleration), and the resource fit: requests are summed exactly, as the
scheduler's integer milli-CPU and byte counts are, so pods that fill a node to the last milli-CPU all fit."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from factories import node, pod, snapshot
from tmnb.snapshot import Taint, Toleration
from tmnb.twin.sandbox.cluster import Cluster
from tmnb.twin.sandbox.scheduling import cpu_load, requests, unfit


def _burstable(name: str, cpu: str, tolerations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Mi"}}}]}
    return {"metadata": {"name": name}, "spec": spec | ({"tolerations": tolerations} if tolerations else {})}


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


def _node(
    allocatable: dict[str, str], *, ready: bool = True, unschedulable: bool = False, taints: list[Any] | None = None
) -> dict[str, Any]:
    condition = {"type": "Ready", "status": "True" if ready else "Unknown"}
    spec: dict[str, Any] = {"unschedulable": True} if unschedulable else {}
    return {
        "metadata": {"name": "n"},
        "spec": spec | ({"taints": taints} if taints else {}),
        "status": {"allocatable": allocatable, "conditions": [condition]},
    }


FITS = {"cpu": "4", "memory": "1Gi"}
GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}
CORDON = {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule", "timeAdded": "2026-07-21T04:30:00Z"}


@pytest.mark.parametrize(
    ("node", "tolerations", "why"),
    [
        (_node(FITS, taints=[GPU_TAINT]), None, "node(s) had untolerated taint {nvidia.com/gpu: present}"),
        (_node(FITS, taints=[GPU_TAINT]), [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
         None),
        (_node(FITS, taints=[GPU_TAINT]), [{"key": "nvidia.com/gpu", "value": "absent", "effect": "NoSchedule"}],
         "node(s) had untolerated taint {nvidia.com/gpu: present}"),
        (_node(FITS, taints=[{"key": "team", "effect": "PreferNoSchedule"}]), None, None),
        (_node(FITS, taints=[{"key": "team", "effect": "NoExecute"}]), None, "node(s) had untolerated taint {team: }"),
        (_node(FITS, unschedulable=True, taints=[CORDON]), None, "node(s) were unschedulable"),
        (_node(FITS, unschedulable=True, taints=[CORDON]),
         [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}], None),
        (_node(FITS, unschedulable=True, taints=[CORDON, GPU_TAINT]), [{"operator": "Exists"}], None),
    ],
)  # fmt: skip
def test_cordons_and_taints_unless_tolerated(
    node: dict[str, Any], tolerations: list[dict[str, Any]] | None, why: str | None
) -> None:
    assert unfit(node, [], _burstable("new", "1", tolerations)) == why


def test_a_cordon_brings_its_taint_and_an_uncordon_takes_it_away() -> None:
    """What ``kubectl cordon`` leads to in a real cluster: spec.unschedulable, then the node lifecycle
    controller's node.kubernetes.io/unschedulable:NoSchedule with the time it added it; other taints stay."""
    gpu = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    cluster = Cluster(snapshot([node("w1", taints=[gpu])], []), None)
    cordoned = cluster.patch_node("w1", {"spec": {"unschedulable": True}})
    first, added = cordoned["spec"]["taints"]
    assert first == GPU_TAINT
    assert added["key"] == "node.kubernetes.io/unschedulable" and added["effect"] == "NoSchedule"
    assert added["timeAdded"].endswith("Z")
    again = cluster.patch_node("w1", {"spec": {"unschedulable": True}})
    assert again["spec"]["taints"][1] == added  # kept, not stamped anew
    assert cluster.patch_node("w1", {"spec": {"unschedulable": None}})["spec"] == {"taints": [GPU_TAINT]}


def test_a_replacement_lands_only_where_its_tolerations_let_it() -> None:
    gpu = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    nodes = [node("g1", taints=[gpu]), node("w1", unschedulable=True), node("w2")]
    tolerant = Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")
    snap = snapshot(nodes, [pod("web", None, cpu="1", phase="Pending"),
                            pod("trainer", None, cpu="1", phase="Pending", tolerations=[tolerant])])  # fmt: skip
    cluster = Cluster(snap, None)
    cluster.create_pod("app", _burstable("plain", "1"))
    cluster.create_pod("app", _burstable("gpu", "1", [{"key": "nvidia.com/gpu", "operator": "Exists"}]))
    placed = {p["metadata"]["name"]: p["spec"].get("nodeName") for p in cluster.items("pods", "app")}
    assert placed["plain"] == "w2"  # g1's taint and w1's cordon keep it off
    assert placed["gpu"] == "g1"  # tolerated, and less allocated than w2 now
    assert cluster.get("nodes", "", "w1")["spec"]["taints"][0]["key"] == "node.kubernetes.io/unschedulable"
    served = cluster.get("pods", "app", "trainer")["spec"]["tolerations"]
    assert served == [{"operator": "Exists", "key": "nvidia.com/gpu", "effect": "NoSchedule"}]


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
