"""The real kubectl binary against the sandbox."""

from __future__ import annotations

import json
import time

import yaml
from sandbox_fixtures import kubeconfig_fixture, kubectl_fixture, sandbox_fixture  # noqa: F401  (fixtures)

from tmnb.twin.sandbox import Sandbox


def test_get_nodes_shows_readiness_and_version(kubectl) -> None:  # type: ignore[no-untyped-def]
    out = kubectl("get", "nodes").stdout.splitlines()
    assert out[0].split()[:5] == ["NAME", "STATUS", "ROLES", "AGE", "VERSION"]
    rows = {line.split()[0]: line.split() for line in out[1:]}
    assert set(rows) == {"w1", "w2"}
    assert rows["w1"][1] == "Ready" and rows["w1"][4] == "v1.36.1"


def test_get_pods_all_namespaces(kubectl) -> None:  # type: ignore[no-untyped-def]
    out = kubectl("get", "pods", "-A").stdout.splitlines()
    assert out[0].split()[:3] == ["NAMESPACE", "NAME", "READY"]
    rows = {tuple(line.split()[:2]): line.split() for line in out[1:]}
    assert ("app", "web-5d9c7-aaaaa") in rows and ("monitoring", "node-exporter-w2") in rows
    assert rows[("app", "web-5d9c7-aaaaa")][2:4] == ["1/1", "Running"]
    wide = kubectl("get", "pods", "-n", "app", "--field-selector", "spec.nodeName=w1", "-l", "app=web", "-o", "name")
    assert wide.stdout.split() == ["pod/web-5d9c7-aaaaa", "pod/web-5d9c7-bbbbb"]


def test_configz_through_the_node_proxy(kubectl) -> None:  # type: ignore[no-untyped-def]
    doc = json.loads(kubectl("get", "--raw", "/api/v1/nodes/w1/proxy/configz").stdout)
    config = doc["kubeletconfig"]
    assert "apiVersion" not in config
    assert config["cpuManagerPolicy"] == "static" and config["topologyManagerPolicy"] == "single-numa-node"
    assert config["reservedSystemCPUs"] == "0,8"


def test_noderesourcetopologies(kubectl) -> None:  # type: ignore[no-untyped-def]
    names = kubectl("get", "noderesourcetopologies", "-o", "name").stdout.split()
    assert names == [
        "noderesourcetopology.topology.node.k8s.io/w1",
        "noderesourcetopology.topology.node.k8s.io/w2",
    ]
    nrt = json.loads(kubectl("get", "noderesourcetopologies", "w1", "-o", "json").stdout)
    assert {a["name"]: a["value"] for a in nrt["attributes"]}["topologyManagerPolicy"] == "single-numa-node"
    cpu = {z["name"]: next(r for r in z["resources"] if r["name"] == "cpu") for z in nrt["zones"]}
    # the two web pods hold 2 CPUs each and the cache pod 1; reserved CPUs 0 and 8 are not available
    assert sum(int(r["available"]) for r in cpu.values()) == 16 - 2 - 5
    assert [c["value"] for c in nrt["zones"][0]["costs"]] == [10, 21]


def test_cordon_drain_respects_the_pdb_then_uncordon(kubectl, sandbox: Sandbox) -> None:  # type: ignore[no-untyped-def]
    assert kubectl("cordon", "w1").stdout.strip() == "node/w1 cordoned"
    assert "Ready,SchedulingDisabled" in kubectl("get", "node", "w1").stdout
    taint = "{.spec.taints[0].key}:{.spec.taints[0].effect}"  # the node lifecycle controller's, as kubectl reads it
    assert (
        kubectl("get", "node", "w1", "-o", f"jsonpath={taint}").stdout == "node.kubernetes.io/unschedulable:NoSchedule"
    )
    started = time.monotonic()
    drain = kubectl("drain", "w1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=40s")
    # maxUnavailable 1: the second web pod waits for the first one's replacement, and kubectl retries after 5s
    assert "Cannot evict pod as it would violate the pod's disruption budget." in drain.stderr
    assert "ignoring DaemonSet-managed Pods: monitoring/node-exporter-w1" in drain.stderr
    assert "node/w1 drained" in drain.stdout
    assert time.monotonic() - started >= 5
    left = kubectl("get", "pods", "-A", "--field-selector", "spec.nodeName=w1", "-o", "name").stdout.split()
    assert left == ["pod/node-exporter-w1"]
    # drain returns once the last pod is evicted; its replacement comes at the controllers' next tick
    deadline = time.monotonic() + 10
    while True:
        web = json.loads(kubectl("get", "pods", "-n", "app", "-l", "app=web", "-o", "json").stdout)["items"]
        if len(web) == 2 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert len(web) == 2 and {p["spec"]["nodeName"] for p in web} == {"w2"}
    assert all(p["status"]["phase"] == "Running" for p in web)
    assert kubectl("uncordon", "w1").stdout.strip() == "node/w1 uncordoned"
    assert kubectl("get", "node", "w1", "-o", "jsonpath={.spec.unschedulable}{.spec.taints}").stdout == ""


def test_drain_times_out_while_the_pdb_blocks(kubectl, sandbox: Sandbox) -> None:  # type: ignore[no-untyped-def]
    sandbox.cluster.patch_node("w2", {"spec": {"unschedulable": True}})  # nowhere for replacements to go
    drain = kubectl("drain", "w1", "--ignore-daemonsets", "--delete-emptydir-data", "--timeout=3s", check=False)
    assert drain.returncode != 0
    assert "global timeout reached" in drain.stderr
    assert "Cannot evict pod as it would violate the pod's disruption budget." in drain.stderr


def test_rejected_pod_shows_topology_affinity_error(kubectl) -> None:  # type: ignore[no-untyped-def]
    # 10 exclusive CPUs fit no single NUMA node (6 and 8 free), so single-numa-node rejects it
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "big", "namespace": "app"},
        "spec": {
            "nodeName": "w2",
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"limits": {"cpu": "10", "memory": "1Gi"}}}
            ],
        },
    }
    kubectl("create", "--validate=false", "-f", "-", stdin=yaml.safe_dump(manifest))
    row = kubectl("get", "pod", "big", "-n", "app").stdout.splitlines()[1].split()
    assert row[1:3] == ["0/1", "TopologyAffinityError"]
    status = json.loads(kubectl("get", "pod", "big", "-n", "app", "-o", "json").stdout)["status"]
    assert status["phase"] == "Failed"
    assert status["message"] == "Pod was rejected: Resources cannot be allocated with Topology locality"
    events = json.loads(
        kubectl("get", "events", "-n", "app", "--field-selector", "involvedObject.name=big", "-o", "json").stdout
    )["items"]
    assert [(e["type"], e["reason"], e["message"], e["source"]["component"]) for e in events] == [
        ("Warning", "TopologyAffinityError", "Resources cannot be allocated with Topology locality", "kubelet")
    ]


def test_admitted_pod_gets_exclusive_cpus_on_one_numa_node(kubectl, sandbox: Sandbox) -> None:  # type: ignore[no-untyped-def]
    manifest = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "fits", "namespace": "app"},
        "spec": {
            "containers": [{"name": "main", "image": "busybox", "resources": {"limits": {"cpu": "4", "memory": "1Gi"}}}]
        },
    }
    kubectl("create", "--validate=false", "-f", "-", stdin=yaml.safe_dump(manifest))
    got = json.loads(kubectl("get", "pod", "fits", "-n", "app", "-o", "json").stdout)
    assert got["status"]["phase"] == "Running"
    assert got["spec"]["nodeName"] == "w2"  # least allocated
    state = json.loads((sandbox.cluster.kubelets["w2"].root / "var/lib/kubelet/cpu_manager_state").read_text())
    cpus = state["entries"][got["metadata"]["uid"]]["main"]
    assert cpus == got["metadata"]["annotations"]["sandbox.tmnb.dev/cpuset"].split("=")[1]
    assert "started app/fits on w2" in kubectl("logs", "fits", "-n", "app").stdout
