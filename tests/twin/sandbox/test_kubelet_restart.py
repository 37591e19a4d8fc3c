"""Per-node kubelets: files laid out like the node, restarts that re-read them, and the start-up
failures operators hit, in the kubelet's words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from sandbox_fixtures import STATIC, call, kubeconfig_fixture, kubectl_fixture, sandbox_fixture  # noqa: F401  (fixtures)

from factories import node, pod, settings, snapshot
from tmnb.parse.klog import parse_kubelet_log
from tmnb.snapshot import KubeletInfo, OwnerRef
from tmnb.sources.node_root import read_node_root
from tmnb.twin.sandbox import Cluster, Sandbox
from tmnb.twin.sandbox.cluster import MAX_FAILED_PER_OWNER

CONFIG = "var/lib/kubelet/config.yaml"
STATE = "var/lib/kubelet/cpu_manager_state"


def _edit(root: Path, **fields: object) -> None:
    doc = yaml.safe_load((root / CONFIG).read_text())
    doc.update(fields)
    (root / CONFIG).write_text(yaml.safe_dump(doc))


def _ready(cluster: Cluster, name: str) -> str:
    node = cluster.get("nodes", "", name)
    return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")


def test_node_directory_reads_back_with_the_collector(sandbox: Sandbox) -> None:
    root = sandbox.cluster.kubelets["w1"].root
    node = read_node_root(root, name="w1")
    assert {k: node.kubelet.settings[k].value for k in STATIC} == STATIC
    state = json.loads((root / STATE).read_text())
    assert state["policyName"] == "static" and len(state["entries"]) == 3  # two web pods and the cache pod


def test_policy_change_with_stale_state_leaves_the_node_not_ready(sandbox: Sandbox, kubectl) -> None:  # type: ignore[no-untyped-def]
    kubelet = sandbox.cluster.kubelets["w2"]
    _edit(kubelet.root, cpuManagerPolicy="none", reservedSystemCPUs="")
    error = sandbox.cluster.restart_kubelet("w2")
    expected = (
        'could not restore state from checkpoint: configured policy "none" differs from state checkpoint policy '
        '"static", please drain this node and delete the CPU manager checkpoint file '
        '"/var/lib/kubelet/cpu_manager_state" before restarting Kubelet'
    )
    assert error == "start cpu manager error: " + expected  # the container manager's error, as the model's start
    journal = kubelet.journal()
    assert '"Could not initialize checkpoint manager, please drain node and remove policy state file"' in journal
    assert f'"Failed to start ContainerManager" err={json.dumps("start cpu manager error: " + expected)}' in journal
    assert _ready(sandbox.cluster, "w2") == "Unknown"
    assert kubectl("get", "node", "w2").stdout.splitlines()[1].split()[1] == "NotReady"
    refused = kubectl("get", "--raw", "/api/v1/nodes/w2/proxy/configz", check=False)
    assert refused.returncode != 0 and "connection refused" in refused.stderr
    # the documented fix: delete the checkpoint, start again
    (kubelet.root / STATE).unlink()
    assert sandbox.cluster.restart_kubelet("w2") is None
    assert _ready(sandbox.cluster, "w2") == "True"
    config = json.loads(kubectl("get", "--raw", "/api/v1/nodes/w2/proxy/configz").stdout)["kubeletconfig"]
    assert config["cpuManagerPolicy"] == "none"


def test_a_corrupted_checkpoint_keeps_the_kubelet_down_in_its_words(sandbox: Sandbox) -> None:
    kubelet = sandbox.cluster.kubelets["w2"]
    (kubelet.root / STATE).write_text('{"policyName":"static","defaultCpuSet":"1-3,9- 11","checksum":0}')
    error = sandbox.cluster.restart_kubelet("w2")
    inner = (
        'could not restore state from checkpoint: could not parse default cpu set "1-3,9- 11": strconv.Atoi: '
        'parsing " 11": invalid syntax, please drain this node and delete the CPU manager checkpoint file '
        '"/var/lib/kubelet/cpu_manager_state" before restarting Kubelet'
    )
    assert error == "start cpu manager error: " + inner
    journal = kubelet.journal()
    logged = '"Could not initialize checkpoint manager, please drain node and remove policy state file"'
    assert f"{logged} err={json.dumps(inner)}" in journal
    assert _ready(sandbox.cluster, "w2") == "Unknown"


def test_invalid_config_keeps_the_kubelet_down(sandbox: Sandbox) -> None:
    kubelet = sandbox.cluster.kubelets["w1"]
    _edit(kubelet.root, topologyManagerPolicy="single-numa")
    error = sandbox.cluster.restart_kubelet("w1")
    assert error is not None and "single-numa" in error
    assert '"command failed" err="failed to validate kubelet configuration' in kubelet.journal()
    assert _ready(sandbox.cluster, "w1") == "Unknown"
    (kubelet.root / CONFIG).write_text("apiVersion: kubelet.config.k8s.io/v1beta1\n")  # no kind
    assert "kind" in (sandbox.cluster.restart_kubelet("w1") or "")


def test_a_refused_dropin_keeps_the_kubelet_down_in_its_words(sandbox: Sandbox) -> None:
    kubelet = sandbox.cluster.kubelets["w1"]
    env = kubelet.root / "var/lib/kubelet/kubeadm-flags.env"
    args = env.read_text().strip().removeprefix("KUBELET_KUBEADM_ARGS=").strip('"')
    env.write_text(f'KUBELET_KUBEADM_ARGS="{args} --config-dir=/etc/kubernetes/kubelet.conf.d"\n')
    dropins = kubelet.root / "etc/kubernetes/kubelet.conf.d"
    dropins.mkdir(parents=True, exist_ok=True)
    (dropins / "10-scope.conf").write_text("topologyManagerScope: pod\n")  # no apiVersion/kind
    error = sandbox.cluster.restart_kubelet("w1")
    assert error == (
        'failed to merge kubelet configs: failed to walk through kubelet dropin directory "/etc/kubernetes/kubelet.'
        'conf.d": failed to load kubelet dropin file, path: /etc/kubernetes/kubelet.conf.d/10-scope.conf, error: '
        "Object 'Kind' is missing in 'topologyManagerScope: pod\n'"
    )
    assert '"command failed" err="failed to merge kubelet configs: ' in kubelet.journal()
    assert _ready(sandbox.cluster, "w1") == "Unknown"
    (dropins / "10-scope.conf").write_text(
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\ntopologyManagerScop: pod\n"
    )
    assert sandbox.cluster.restart_kubelet("w1") is None  # an unknown field is dropped, not refused
    assert _ready(sandbox.cluster, "w1") == "True"


def test_restart_over_http_keeps_running_pods_and_updates_nrt(sandbox: Sandbox, kubeconfig: Path) -> None:
    api = config.new_client_from_config(str(kubeconfig))
    # drain-free reconfiguration that works: change the topology policy only, keep the CPU manager
    _edit(sandbox.cluster.kubelets["w1"].root, topologyManagerPolicy="restricted")
    status, data = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w1/restart")
    assert status == 200 and json.loads(data) == {"node": "w1", "ready": True, "error": None}
    status, journal = call(sandbox, kubeconfig, "GET", "/sandbox/v1/nodes/w1/journal")
    assert status == 200 and b"Started kubelet" in journal
    nrt = client.CustomObjectsApi(api).get_cluster_custom_object(
        "topology.node.k8s.io", "v1alpha2", "noderesourcetopologies", "w1"
    )
    assert {a["name"]: a["value"] for a in nrt["attributes"]}["topologyManagerPolicy"] == "restricted"
    pods = client.CoreV1Api(api).list_pod_for_all_namespaces(field_selector="spec.nodeName=w1").items
    assert {p.status.phase for p in pods} == {"Running"}


def test_rejected_replacements_flap_and_are_bounded(tmp_path: Path) -> None:
    """9 exclusive CPUs fit no NUMA node (8 CPUs each): the running pod is rejected when the kubelet
    starts, and every replacement the ReplicaSet makes is rejected again (kubernetes#84869)."""
    owner = OwnerRef(kind="ReplicaSet", name="big-1", uid="rs-big")
    w3 = node("w3", kubelet=KubeletInfo(settings=settings(**STATIC)))
    cluster = Cluster(snapshot([w3], [pod("big-1-xxxxx", "w3", cpu="9", owner=owner)]), tmp_path / "nodes")
    for _ in range(MAX_FAILED_PER_OWNER + 5):
        cluster.reconcile()
    owned = cluster.items("pods", "app")
    assert len(owned) == MAX_FAILED_PER_OWNER
    assert {(p["status"]["phase"], p["status"]["reason"]) for p in owned} == {("Failed", "TopologyAffinityError")}
    assert {p["spec"]["nodeName"] for p in owned} == {"w3"}
    warnings = [e for e in cluster.items("events", "app") if e["reason"] == "TopologyAffinityError"]
    assert len(warnings) == MAX_FAILED_PER_OWNER


def test_sample_fleet_twin_starts_as_captured(tmp_path: Path) -> None:
    """Every sample node's kubelet starts from its rendered files and re-admits what the snapshot runs."""
    from tmnb.sources.embedded import load_sample

    sample = load_sample()
    cluster = Cluster(sample, tmp_path / "nodes")
    assert {name: k.error for name, k in cluster.kubelets.items() if k.error} == {}
    phases = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["status"]["phase"] for p in cluster.items("pods")}
    assert phases == {(p.namespace, p.name): p.phase for p in sample.pods}


def test_in_memory_kubelets_for_scale_runs(tmp_path: Path) -> None:
    """Without node files the twin still starts as captured, admits, and restarts from the snapshot."""
    from tmnb.sources.embedded import load_sample

    sample = load_sample()
    cluster = Cluster(sample, None)
    assert {name: k.error for name, k in cluster.kubelets.items() if k.error} == {}
    phases = {(p["metadata"]["namespace"], p["metadata"]["name"]): p["status"]["phase"] for p in cluster.items("pods")}
    assert phases == {(p.namespace, p.name): p.phase for p in sample.pods}
    name = sample.nodes[0].name
    assert cluster.restart_kubelet(name) is None
    assert "Started kubelet" in cluster.kubelets[name].journal()
    assert not list(tmp_path.iterdir())


@pytest.mark.clock
def test_the_journal_reads_like_a_real_nodes(sandbox: Sandbox) -> None:
    """journal.log is journalctl -u kubelet -o short-iso of a real node: every line has the prefix, and
    the kubelet parser names the start-up, the refusal, the exit and the restart after the fix."""
    kubelet = sandbox.cluster.kubelets["w2"]
    before = len(kubelet.journal().splitlines())
    _edit(kubelet.root, cpuManagerPolicy="none", reservedSystemCPUs="")
    assert sandbox.cluster.restart_kubelet("w2") is not None
    (kubelet.root / STATE).unlink()
    assert sandbox.cluster.restart_kubelet("w2") is None
    lines = kubelet.journal().splitlines()[before:]
    log = parse_kubelet_log(lines)
    assert log.unreadable == 0 and len(log.records) == len(lines)
    assert {(r.host, r.ident) for r in log.records} == {("w2", "systemd"), ("w2", "kubelet")}
    assert [r.name for r in log.records if r.name] == [
        "kubelet_stop",
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
        "cpu_checkpoint_failed",
        "container_manager_failed",
        "kubelet_exit",
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
    ]
    created = [r for r in log.records if r.name == "topology_manager_created"]
    assert created[-1].values == {
        "topologyPolicyName": "single-numa-node",
        "topologyScopeName": "container",
        "topologyPolicyOptions": {},
    }
    assert len({r.pid for r in log.records if r.ident == "kubelet"}) == 2  # a new process per start
    seconds = [r.time.replace(microsecond=0) for r in log.records if r.time is not None]  # short-iso has whole seconds
    assert len(seconds) == len(log.records) and seconds == sorted(seconds)


@pytest.mark.clock
def test_a_rejected_pod_is_in_the_journal(tmp_path: Path) -> None:
    owner = OwnerRef(kind="ReplicaSet", name="big-1", uid="rs-big")
    w3 = node("w3", kubelet=KubeletInfo(settings=settings(**STATIC)))
    cluster = Cluster(snapshot([w3], [pod("big-1-xxxxx", "w3", cpu="9", owner=owner)]), tmp_path / "nodes")
    log = parse_kubelet_log(cluster.kubelets["w3"].journal())
    (denied,) = [r for r in log.records if r.message == "Pod admission denied"]
    assert denied.name == "topology_affinity_error" and denied.level == "I" and denied.source == "kubelet.go:2357"
    assert denied.values["pod"] == "app/big-1-xxxxx" and denied.values["reason"] == "TopologyAffinityError"
    assert denied.values["message"] == "Resources cannot be allocated with Topology locality"
