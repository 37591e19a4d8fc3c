"""The NodeResourceTopology a sandbox node publishes, from the node and its free CPUs alone."""

from __future__ import annotations

from factories import GIB, node, settings
from tmnb.cpuset import CPUSet
from tmnb.snapshot import Device, KubeletInfo
from tmnb.twin.sandbox.nrt import nrt_object

NODE_OBJECT = {"metadata": {"creationTimestamp": "2026-12-01T12:00:00Z", "uid": "node-uid"}}


def _cpus(nrt: dict, zone: str) -> dict[str, str]:
    found = next(z for z in nrt["zones"] if z["name"] == zone)
    return next(r for r in found["resources"] if r["name"] == "cpu")


def test_static_policy_shows_the_free_cpus_per_zone() -> None:
    """factories.node: CPUs 0-3,8-11 on NUMA 0 and 4-7,12-15 on NUMA 1; a GPU on NUMA 1."""
    static = KubeletInfo(settings=settings(cpuManagerPolicy="static", topologyManagerPolicy="restricted"))
    w1 = node("w1", kubelet=static, devices=[Device(resource="nvidia.com/gpu", id="g0", numa=[1])])
    nrt = nrt_object(w1, CPUSet.parse("1-3,4-7"), NODE_OBJECT, 42)
    assert _cpus(nrt, "node-0") == {"name": "cpu", "capacity": "8", "allocatable": "8", "available": "3"}
    assert _cpus(nrt, "node-1")["available"] == "4"
    zone1 = next(z for z in nrt["zones"] if z["name"] == "node-1")
    assert zone1["costs"] == [{"name": "node-0", "value": 21}, {"name": "node-1", "value": 10}]
    assert [r["name"] for r in zone1["resources"]] == ["cpu", "memory", "nvidia.com/gpu"]
    assert zone1["resources"][1]["capacity"] == str(64 * GIB)
    assert nrt["metadata"]["resourceVersion"] == "42" and nrt["metadata"]["ownerReferences"][0]["uid"] == "node-uid"
    assert {a["name"]: a["value"] for a in nrt["attributes"]} == {
        "topologyManagerScope": "container",
        "topologyManagerPolicy": "restricted",
    }


def test_without_a_static_policy_or_a_running_kubelet_every_cpu_is_available() -> None:
    w1 = node("w1")
    assert _cpus(nrt_object(w1, CPUSet.parse("1"), NODE_OBJECT, 1), "node-0")["available"] == "8"
    static = node("w1", kubelet=KubeletInfo(settings=settings(cpuManagerPolicy="static")))
    assert _cpus(nrt_object(static, None, NODE_OBJECT, 1), "node-0")["available"] == "8"
