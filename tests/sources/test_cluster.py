"""The live collector against a real HTTP server on loopback through the real kubernetes client."""

from __future__ import annotations

import dataclasses
import gzip
import json

import pytest
from kubernetes.client import ApiClient, V1Node, V1NodeCondition, V1NodeStatus, V1NodeSystemInfo, V1ObjectMeta

from factories import busy_snapshot, node, pod
from tmnb.cli.main import main
from tmnb.errors import CollectError, InputError
from tmnb.snapshot import DisruptionBudget, Event, Issue, OwnerRef, Taint, Toleration, Versions, load, to_dict
from tmnb.sources.cluster import ClusterApi, collect_cluster, connect
from tmnb.sources.cluster.api import NRT
from tmnb.sources.cluster.convert import node_from_api, nrt_settings, nrt_zones
from tmnb.sources.cluster.retry import Backoff
from tmnb.sources.kube_objects import pod_from_api
from tmnb.sources.node_root import read_node_root
from tmnb.sources.resolve import open_snapshot

from .api_objects import NRT_LIST, api_lists, configz_paths, pod_json
from .apiserver import TOKEN, ApiServer, FakeApi
from .node_fixture import make_node_root

W2_TAINTS = [
    Taint(key="dedicated", value="latency", effect="NoSchedule"),
    Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule", time_added="2026-12-01T08:00:00Z"),
]


def fleet():
    """Three nodes (one static-policy with allocations), pods with ReplicaSet owners, events, a PDB."""
    busy = busy_snapshot().nodes[0]
    nodes = [
        dataclasses.replace(
            busy,
            uid="uid-w1",
            versions=Versions(kubelet="v1.36.1", container_runtime="containerd://2.1.0", kernel="6.8.0"),
        ),
        node("w2", "v1.32.4", uid="uid-w2", unschedulable=True, taints=W2_TAINTS),
        node("w3", "v1.34.0", uid="uid-w3", ready=False),
        node("w4", "v1.36.1", uid="uid-w4"),
    ]
    owner = OwnerRef(kind="ReplicaSet", name="api-7d9f", uid="rs-1", controller_kind="Deployment",
                     controller_name="api")  # fmt: skip
    rollout = OwnerRef(kind="ReplicaSet", name="canary-55", uid="rs-2", controller_kind="Rollout",
                       controller_name="canary")  # fmt: skip
    pods = [pod(f"api-{i}", f"w{1 + i % 4}", owner=owner, labels={"app": "api"}) for i in range(9)]
    pods[1] = dataclasses.replace(pods[1], tolerations=[
        Toleration(key="dedicated", value="latency", effect="NoSchedule"),
        Toleration(key="node.kubernetes.io/not-ready", operator="Exists", effect="NoExecute", toleration_seconds=300),
    ])  # fmt: skip
    pods.append(pod("canary-0", "w1", owner=rollout))
    cron = OwnerRef(kind="Job", name="report-29742330", uid="job-1", controller_kind="CronJob",
                    controller_name="report")  # fmt: skip
    pods.append(pod("report-29742330-x", None, qos="BestEffort", phase="Pending", owner=cron, containers=[]))
    pods.append(
        pod("tae", "w2", phase="Failed", reason="TopologyAffinityError", message="Pod was rejected: x", owner=owner)
    )
    events = [
        Event(namespace="app", kind="Pod", name="tae", reason="TopologyAffinityError",
              message="Resources cannot be allocated with Topology locality", type="Warning", count=3,
              first_seen="2026-12-01T10:00:00Z", last_seen="2026-12-01T10:05:00Z", node="w2", component="kubelet"),
        Event(namespace="app", kind="Pod", name="api-1", reason="Scheduled", message="ok", type="Normal"),
    ]  # fmt: skip
    pdbs = [DisruptionBudget(namespace="app", name="api", selector={"app": "api"}, min_available="2")]
    return dataclasses.replace(busy_snapshot(), nodes=nodes, pods=pods, events=events, disruption_budgets=pdbs)


def fake_api(snapshot, **kw) -> FakeApi:
    objects = {"/version/": {"gitVersion": "v1.36.2"}, **configz_paths(snapshot)}
    api = FakeApi(lists=api_lists(snapshot), objects=objects)
    for key, value in kw.items():
        setattr(api, key, value)
    return api


def collect(server: ApiServer, tmp_path, page_size: int = 4, **kw):
    client, name = connect("prod-east", str(server.kubeconfig(tmp_path / "kubeconfig")), pool_size=4)
    api = ClusterApi(client, context=name, page_size=page_size, backoff=Backoff(base=0.01))
    return collect_cluster(api=api, workers=4, progress=False, **kw)


def test_live_collection_gives_back_the_snapshot(tmp_path):
    want = fleet()
    with ApiServer(fake_api(want)) as server:
        got = collect(server, tmp_path)
        kubeconfig_snap = collect_cluster("prod-east", str(tmp_path / "kubeconfig"), progress=False)
    assert got.source.kind == "live" and got.source.context == "prod-east" and got.source.detail is None
    assert kubeconfig_snap.source.context == "prod-east" and len(kubeconfig_snap.pods) == len(want.pods)
    assert got.cluster.server_version == "v1.36.2"
    for back, orig in zip(got.nodes, want.nodes, strict=True):
        fields = ("name", "uid", "labels", "versions", "capacity", "allocatable", "ready", "unschedulable", "taints")
        assert {f: getattr(back, f) for f in fields} == {f: getattr(orig, f) for f in fields}
        assert {k: s.value for k, s in back.kubelet.settings.items()} == {
            k: s.value for k, s in orig.kubelet.settings.items()
        }
        assert {s.source for s in back.kubelet.settings.values()} == {"configz"}
        assert back.issues == []
    assert got.pods == want.pods  # owners' controllers come from the ReplicaSet list (Rollout is not guessable)
    assert [e.reason for e in got.events] == ["TopologyAffinityError"]
    assert got.events[0] == want.events[0]
    assert got.disruption_budgets == want.disruption_budgets
    assert TOKEN not in json.dumps(to_dict(got))
    verbs = {m for m, _, _ in server.api.requests}
    assert verbs == {"GET"}
    assert any("continue=4" in url for _, url, _ in server.api.requests if url.startswith("/api/v1/pods"))


def test_one_failing_node_never_aborts_the_rest(tmp_path):
    want = fleet()
    api = fake_api(
        want,
        fixed={
            "/api/v1/nodes/w2/proxy/configz": 403,
            "/api/v1/nodes/w4/proxy/configz": 500,
            "/api/v1/events": 403,
        },
    )
    api.faults["/api/v1/nodes/w3/proxy/configz"] = [503, 502]
    api.faults["/api/v1/pods"] = [429]
    api.lists["/api/v1/pods"].append({"metadata": {"name": "no-uid", "namespace": "x"}})
    with ApiServer(api) as server:
        got = collect(server, tmp_path)
    issues = {n.name: n.issues for n in got.nodes}
    assert issues["w1"] == [] and issues["w3"] == []  # w3 recovered after two 5xx
    assert got.node("w3").kubelet.settings["topologyManagerPolicy"].source == "configz"
    (forbidden,) = issues["w2"]
    assert forbidden.source == "configz"
    assert "nodes/proxy" in forbidden.message and "403" in forbidden.message
    (broken,) = issues["w4"]
    assert "HTTP 500" in broken.message and got.node("w4").kubelet.settings == {}
    attempts = [url for _, url, _ in server.api.requests if url == "/api/v1/nodes/w4/proxy/configz"]
    assert len(attempts) == ClusterApi.node_attempts == 3  # per-node calls give up sooner than lists
    assert len(got.pods) == len(want.pods)  # the 429 was retried
    assert got.events == [] and "events (HTTP 403" in got.source.detail
    assert got.source.detail.count("events (") == 1 and "1 malformed pod object(s)" in got.source.detail


def test_configz_403_names_nodes_proxy_since_the_api_server_checks_that(tmp_path):
    api = fake_api(fleet(), fixed={"/api/v1/nodes/w1/proxy/configz": 403})
    with ApiServer(api) as server:
        got = collect(server, tmp_path)
    message = got.node("w1").issues[0].message
    assert "'get' on nodes/proxy" in message and "403" in message


def test_expired_continue_token_relists_without_duplicates(tmp_path):
    want = fleet()
    api = fake_api(want, expire_continue_once={"/api/v1/pods"})
    with ApiServer(api) as server:
        got = collect(server, tmp_path, page_size=5)
    assert [p.uid for p in got.pods] == [p.uid for p in want.pods]


def test_nodes_unreadable_is_an_error(tmp_path):
    with (
        ApiServer(fake_api(fleet(), fixed={"/api/v1/nodes": 403})) as server,
        pytest.raises(CollectError, match=r"cannot read nodes.*HTTP 403"),
    ):
        collect(server, tmp_path)
    with (
        ApiServer(fake_api(fleet(), fixed={"/api/v1/pods": 401})) as server,
        pytest.raises(CollectError, match="cannot list pods in all namespaces: HTTP 401"),
    ):
        collect(server, tmp_path)


def test_nrt_fills_zones_and_policy_when_configz_is_forbidden(tmp_path):
    want = fleet()
    nrt = {
        "metadata": {"name": "w2"},
        "attributes": [{"name": "topologyManagerPolicy", "value": "single-numa-node"},
                       {"name": "topologyManagerScope", "value": "pod"}],
        "zones": [{"name": f"node-{i}", "type": "Node",
                   "costs": [{"name": "node-0", "value": 10 + 11 * i}, {"name": "node-1", "value": 21 - 11 * i}],
                   "resources": [{"name": "cpu", "capacity": 8, "allocatable": "7", "available": "5"}]}
                  for i in (0, 1)],
    }  # fmt: skip
    api = fake_api(want, fixed={"/api/v1/nodes/w2/proxy/configz": 403})
    api.lists[NRT_LIST] = [nrt, {"metadata": {"name": "w3"}, "zones": [{"name": "node-0", "costs": [{"value": 1}]}]}]
    with ApiServer(api) as server:
        got = collect(server, tmp_path)
    w2 = got.node("w2")
    assert [(z.name, z.costs, z.resources[0].capacity) for z in w2.nrt] == [
        ("node-0", {"node-0": 10, "node-1": 21}, "8"),
        ("node-1", {"node-0": 21, "node-1": 10}, "8"),
    ]
    policy = w2.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source, policy.detail) == ("single-numa-node", "nrt", "noderesourcetopologies/w2")
    assert got.node("w1").kubelet.settings["topologyManagerPolicy"].source == "configz"  # configz wins
    (bad,) = got.node("w3").issues  # a malformed NRT object costs its node the NRT view, nothing else
    assert bad.source == "nrt" and got.node("w3").kubelet.settings["topologyManagerPolicy"].source == "configz"
    assert f"/apis/{'/'.join(NRT)}" == NRT_LIST


def test_node_from_client_model_object():
    """The conversion reads what the client itself would send for a v1 Node."""
    obj = V1Node(
        metadata=V1ObjectMeta(name="n1", uid="u", labels={"a": "b"}),
        status=V1NodeStatus(
            capacity={"cpu": "64"},
            allocatable={"cpu": "62"},
            conditions=[V1NodeCondition(type="Ready", status="Unknown")],
            node_info=V1NodeSystemInfo(
                architecture="amd64", boot_id="b", container_runtime_version="cri-o://1.31", kernel_version="6.1",
                kube_proxy_version="", kubelet_version="v1.31.2", machine_id="m", operating_system="linux",
                os_image="RHCOS", system_uuid="s",
            ),
        ),
    )  # fmt: skip
    got = node_from_api(ApiClient().sanitize_for_serialization(obj))
    assert got.versions == Versions(kubelet="v1.31.2", container_runtime="cri-o://1.31", kernel="6.1", os_image="RHCOS")
    assert (got.ready, got.unschedulable, got.capacity, got.labels) == (False, False, {"cpu": "64"}, {"a": "b"})
    assert node_from_api({"metadata": {"name": "x"}}).ready is None


def test_cordon_and_taints_as_the_api_serves_a_node():
    """``kubectl get node -o json`` of a cordoned GPU node: the cordon shows twice, as spec.unschedulable
    and as the taint the node lifecycle controller adds with its time; a taint without a value has none."""
    obj = {
        "metadata": {"name": "gpu-7"},
        "spec": {
            "podCIDR": "10.244.7.0/24",
            "taints": [
                {"effect": "NoSchedule", "key": "nvidia.com/gpu", "value": "present"},
                {"effect": "PreferNoSchedule", "key": "team"},
                {
                    "effect": "NoSchedule",
                    "key": "node.kubernetes.io/unschedulable",
                    "timeAdded": "2026-07-21T04:30:00Z",
                },
            ],
            "unschedulable": True,
        },
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }
    got = node_from_api(obj)
    assert got.unschedulable and got.ready
    assert [(t.key, t.value, t.effect, t.time_added) for t in got.taints] == [
        ("nvidia.com/gpu", "present", "NoSchedule", None),
        ("team", "", "PreferNoSchedule", None),
        ("node.kubernetes.io/unschedulable", "", "NoSchedule", "2026-07-21T04:30:00Z"),
    ]
    schedulable = node_from_api({"metadata": {"name": "n"}, "spec": {}})
    assert (schedulable.unschedulable, schedulable.taints) == (False, [])


def test_pod_tolerations_as_the_api_serves_them():
    """What the API server returns for a pod after admission: its own tolerations (one without an operator,
    which Kubernetes reads as Equal) and the two DefaultTolerationSeconds adds."""
    obj = pod_json(pod("p", "w1"))
    default = {"operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
    obj["spec"]["tolerations"] = [
        {"key": "dedicated", "value": "latency", "effect": "NoSchedule"},
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
        {"operator": "Exists"},
        {"key": "node.kubernetes.io/not-ready", **default},
        {"key": "node.kubernetes.io/unreachable", **default},
    ]
    got = pod_from_api(obj).tolerations
    assert [(t.key, t.operator, t.value, t.effect, t.toleration_seconds) for t in got] == [
        ("dedicated", "Equal", "latency", "NoSchedule", None),
        ("nvidia.com/gpu", "Exists", "", "NoSchedule", None),
        ("", "Exists", "", None, None),
        ("node.kubernetes.io/not-ready", "Exists", "", "NoExecute", 300),
        ("node.kubernetes.io/unreachable", "Exists", "", "NoExecute", 300),
    ]
    assert pod_from_api(pod_json(pod("q", "w1"))).tolerations == []
    obj["spec"]["tolerations"] = [{"key": "a", "effect": "NoSchedul"}]
    with pytest.raises(InputError, match=r"expected a taint effect") as err:
        pod_from_api(obj, source="pods.json")
    assert err.value.where == "$.spec.tolerations[0].effect"


def test_nrt_without_attributes_gives_no_settings():
    assert nrt_settings({"metadata": {"name": "x"}, "topologyPolicies": ["SingleNUMANodePodLevel"]}) == {}
    assert nrt_zones({"zones": []}) == []


def test_node_bundles_merge_under_configz(tmp_path):
    """Bundles add hardware, allocations and the disk layers; /configz stays the running truth."""
    want = fleet()
    w1 = want.node("w1")
    disk = dataclasses.replace(w1, kubelet=dataclasses.replace(w1.kubelet, flags=["/usr/bin/kubelet"]))
    bundle = read_node_root(make_node_root(disk, tmp_path / "w1"), name="w1")
    api = fake_api(want)
    api.objects["/api/v1/nodes/w1/proxy/configz"] = {
        "kubeletconfig": {"cpuManagerPolicy": "static", "topologyManagerPolicy": "restricted"}
    }
    pg = pod("pg-0", "w1", uid="u1", namespace="db", owner=None)
    api.lists["/api/v1/pods"].append(pod_json(pg))
    skipped = Issue(source="node collector", message="node not collected: ssh w2: collector exited 255")
    with ApiServer(api) as server:
        got = collect(server, tmp_path, bundles={"w1": bundle, "w2": skipped})
    n1 = got.node("w1")
    assert (n1.numa, n1.cpus, n1.devices) == (bundle.numa, bundle.cpus, bundle.devices)
    assert n1.labels == w1.labels and n1.versions == w1.versions  # identity from the API
    policy = n1.kubelet.settings["topologyManagerPolicy"]
    assert (policy.value, policy.source) == ("restricted", "configz")
    assert policy.overridden[-1] == bundle.kubelet.settings["topologyManagerPolicy"].as_layer()
    reserved = n1.kubelet.settings["reservedSystemCPUs"]  # on disk, absent from /configz: running value unset
    assert (reserved.value, reserved.source, reserved.overridden[-1].value) == (None, "configz", "0,8")
    pg_alloc = next(a for a in n1.allocations if a.pod_uid == "u1")
    assert (pg_alloc.namespace, pg_alloc.pod) == ("db", "pg-0")
    assert got.node("w2").issues[-1] == skipped and not got.node("w2").numa


def test_open_snapshot_live_and_cli(tmp_path, capsys):
    with ApiServer(fake_api(fleet())) as server:
        kubeconfig = str(server.kubeconfig(tmp_path / "kubeconfig"))
        snap = open_snapshot("live", "kubernetes.io/hostname=w2", context="prod-east", kubeconfig=kubeconfig)
        out = tmp_path / "live.json.gz"
        code = main(["snapshot", "--source", "live", "--context", "prod-east", "--kubeconfig", kubeconfig,
                     "--out", str(out)])  # fmt: skip
    assert [n.name for n in snap.nodes] == ["w2"] and snap.source.context == "prod-east"
    configz_calls = [u for _, u, _ in server.api.requests if u.endswith("/proxy/configz")]
    assert "/api/v1/nodes/w2/proxy/configz" in configz_calls and len(configz_calls) == 5  # 1 + 4 for the CLI
    assert code == 0 and "4 nodes" in capsys.readouterr().out
    assert load(out).source.kind == "live" and TOKEN.encode() not in gzip.decompress(out.read_bytes())
    assert main(["snapshot", "--source", "live", "--context", "nope", "--kubeconfig", kubeconfig, "--out", "x"]) == 2
    assert "cannot load kube context nope" in capsys.readouterr().err
    assert main(["snapshot", "--source", "sample", "--context", "prod-east", "--out", str(out)]) == 2
    assert "tmnb: error: --source: --context applies to --source live only" in capsys.readouterr().err


def test_one_node_is_read_alone(tmp_path, monkeypatch):
    """A question about one node asks the API server for that node and its pods only, reads its
    /configz alone, and its files alone through the chosen transport."""
    import tmnb.sources.node as node_collector

    read: list[list[str]] = []
    real = node_collector.collect_nodes

    def collect_nodes(names, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(list(names))
        return real(read[-1], *args, **kwargs)

    monkeypatch.setattr(node_collector, "collect_nodes", collect_nodes)
    (tmp_path / "nodes").mkdir()
    with ApiServer(fake_api(fleet())) as server:
        kubeconfig = str(server.kubeconfig(tmp_path / "kubeconfig"))
        snap = open_snapshot("live", kubeconfig=kubeconfig, node_files=f"dir:{tmp_path / 'nodes'}", node="w2")
    assert [n.name for n in snap.nodes] == ["w2"] and {p.node for p in snap.pods} == {"w2"}
    assert read == [["w2"]]
    urls = [u for _, u, _ in server.api.requests]
    assert [u for u in urls if u.endswith("/proxy/configz")] == ["/api/v1/nodes/w2/proxy/configz"]
    assert any(u.startswith("/api/v1/nodes?") and "fieldSelector=metadata.name%3Dw2" in u for u in urls)
    assert any(u.startswith("/api/v1/pods?") and "fieldSelector=spec.nodeName%3Dw2" in u for u in urls)


def test_no_kubeconfig_anywhere_says_what_to_do(tmp_path, monkeypatch, capsys):
    """A first run on a laptop without a cluster: the message names the ways out, not a loader's error."""
    from kubernetes import config

    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(config.kube_config, "KUBE_CONFIG_DEFAULT_LOCATION", "~/.kube/config")
    with pytest.raises(CollectError, match=r"no kubeconfig: \$KUBECONFIG is unset.*source sample"):
        connect()
    assert main(["snapshot", "--source", "live", "--out", str(tmp_path / "s.json")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert line.startswith("tmnb: error: no kubeconfig")
    with pytest.raises(CollectError, match=r"kubeconfig .*/gone does not exist"):
        connect(kubeconfig=str(tmp_path / "gone"))
    monkeypatch.setenv("KUBECONFIG", f"{tmp_path / 'a'}:{tmp_path / 'b'}")
    with pytest.raises(CollectError, match=r"\$KUBECONFIG names .*/a, .*/b, and none of it exists"):
        connect()
    monkeypatch.delenv("KUBECONFIG")
    (tmp_path / ".kube").mkdir()
    (tmp_path / ".kube" / "config").write_text("root:x:0:0\n")  # there is one, and it is bad: the loader's words
    with pytest.raises(CollectError, match="cannot load kube context"):
        connect()
