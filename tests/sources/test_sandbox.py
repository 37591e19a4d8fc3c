"""Live collection of a sandbox (tmnb.twin.sandbox: a loopback API server built from a snapshot) gives
back that snapshot; injected faults cost the faulty node its /configz and nothing else."""

from __future__ import annotations

from datetime import datetime

from published_schema import schema_errors
from tmnb.parse.klog import parse_kubelet_log
from tmnb.settings.effective import same_value
from tmnb.snapshot import to_dict
from tmnb.sources.cluster import ClusterApi, collect_cluster, connect
from tmnb.sources.cluster.retry import Backoff
from tmnb.sources.embedded import load_sample
from tmnb.sources.node import collect_nodes
from tmnb.sources.transports import LocalTransport
from tmnb.twin import sandbox

IDENTITY = ("uid", "labels", "versions", "capacity", "allocatable", "ready", "unschedulable")
ADMISSION = {"TopologyAffinityError", "UnexpectedAdmissionError", "SMTAlignmentError"}


def test_collecting_a_sandbox_gives_back_its_snapshot(tmp_path):
    want = load_sample()
    broken = want.nodes[0].name
    faults = sandbox.Faults(error_rates={f"/api/v1/nodes/{broken}/proxy": 1.0}, throttle_rate=0.05, seed=7)
    with sandbox.Sandbox(want, tmp_path / "run", faults=faults) as box:
        kubeconfig = box.write_kubeconfig(tmp_path / "kubeconfig")
        client, context = connect(None, str(kubeconfig), pool_size=8)
        got = collect_cluster(api=ClusterApi(client, context=context, backoff=Backoff(base=0.01)), progress=False)
    assert got.source.kind == "live" and got.source.context == context
    assert sorted(n.name for n in got.nodes) == sorted(n.name for n in want.nodes)
    for node in want.nodes:
        back = got.node(node.name)
        assert {f: getattr(back, f) for f in IDENTITY} == {f: getattr(node, f) for f in IDENTITY}, node.name
        if node.name == broken:
            (issue,) = back.issues
            assert issue.source == "configz" and "HTTP 500" in issue.message
            continue
        assert back.issues == [], node.name
        for key, setting in node.kubelet.settings.items():
            running = back.kubelet.settings.get(key)
            assert same_value(running.value if running else None, setting.value), (node.name, key)
            assert running is None or running.source == "configz"
    assert got.cluster.server_version == want.cluster.server_version
    assert sorted(got.pods, key=lambda p: p.uid) == sorted(want.pods, key=lambda p: p.uid)
    assert sorted(e.name for e in got.events) == sorted(e.name for e in want.events if e.reason in ADMISSION)
    assert got.disruption_budgets == want.disruption_budgets
    assert schema_errors(to_dict(got)) == []  # the JSON it saves, through the published schema


def test_sandbox_nodes_through_the_node_collector(tmp_path):
    """The full path: API collection plus each sandbox node's files through the real script."""
    want = load_sample()
    with sandbox.Sandbox(want, tmp_path / "run", faults=sandbox.Faults()) as box:
        kubeconfig = box.write_kubeconfig(tmp_path / "kubeconfig")
        roots = {name: kubelet.root for name, kubelet in box.cluster.kubelets.items()}
        names = [n.name for n in want.nodes[:4]]
        bundles = collect_nodes(names, lambda n: LocalTransport(str(roots[n])), workers=2, progress=False)
        got = collect_cluster(kubeconfig=str(kubeconfig), bundles=bundles, progress=False)
    for name in names:
        back, node = got.node(name), want.node(name)
        assert back.cpus == node.cpus and [z.cpus for z in back.numa] == [z.cpus for z in node.numa], name
        exclusive = {(a.namespace, a.pod, a.container, a.cpuset) for a in node.allocations if a.exclusive}
        assert {(a.namespace, a.pod, a.container, a.cpuset) for a in back.allocations if a.exclusive} == exclusive
        policy = back.kubelet.settings["topologyManagerPolicy"]
        assert policy.source == "configz" and policy.overridden[-1].source in ("file", "default", "flag", "dropin")


def test_a_sandbox_collection_carries_each_nodes_kubelet_journal(tmp_path):
    """The sandbox's journal.log through the real script and the kubelet parser: the start of every
    node's kubelet, and a restart refused for a stale CPU manager checkpoint, as a real node logs them."""
    want = load_sample()
    name = next(n.name for n in want.nodes if n.kubelet.settings["cpuManagerPolicy"].value == "static")
    with sandbox.Sandbox(want, tmp_path / "run", faults=sandbox.Faults()) as box:
        kubeconfig = box.write_kubeconfig(tmp_path / "kubeconfig")
        root = box.cluster.kubelets[name].root
        config = root / "var/lib/kubelet/config.yaml"
        config.write_text(config.read_text().replace("cpuManagerPolicy: static", "cpuManagerPolicy: none"))
        assert box.cluster.restart_kubelet(name) is not None
        bundles = collect_nodes([name], lambda n: LocalTransport(str(root)), progress=False)
        got = collect_cluster(kubeconfig=str(kubeconfig), bundles=bundles, progress=False)
    excerpt = got.node(name).kubelet_journal
    assert excerpt is not None and excerpt.source == "/journal.log" and not excerpt.truncated
    log = parse_kubelet_log(excerpt.lines, reference=datetime.fromisoformat(got.captured_at))
    assert log.unreadable == 0
    assert [r.name for r in log.records if r.name][-6:] == [
        "kubelet_start",
        "kubelet_version",
        "topology_manager_created",
        "cpu_checkpoint_failed",
        "container_manager_failed",
        "kubelet_exit",
    ]
    assert not [i for i in got.node(name).issues if i.source == "kubelet journal"]
