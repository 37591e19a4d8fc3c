"""The sandbox scheduler's resource fit: requests are summed exactly, as the scheduler's integer
milli-CPU and byte counts are, so pods that fill a node to the last milli-CPU all fit."""

from __future__ import annotations

from factories import node, snapshot
from tmnb.sandbox.cluster import Cluster


def _burstable(name: str, cpu: str) -> dict[str, object]:
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
