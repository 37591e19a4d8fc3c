import dataclasses

import pytest

from factories import Allocation, Device, Layer, busy_snapshot, node, pod, settings, snapshot
from tmnb.analysis import checklist, inventory
from tmnb.snapshot import Cluster, Container, KubeletInfo, Setting, Taint, Versions, save
from tmnb.versions import KubeVersion


@pytest.mark.parametrize(
    ("server", "kubelet", "severity"),
    [
        ("v1.36.2", "v1.36.0", "ok"),
        ("v1.36.2", "v1.34.5", "warning"),
        ("v1.36.2", "v1.33.1", "warning"),
        ("v1.36.2", "v1.32.9", "blocker"),
        ("v1.35.0", "v1.36.0", "blocker"),
        ("v2.0.0", "v1.36.0", "blocker"),
    ],
)
def test_skew(server, kubelet, severity):
    assert inventory.skew_note(KubeVersion.parse(server), KubeVersion.parse(kubelet))[0] == severity


def test_skew_notes_say_how_far_behind():
    def note(server, kubelet):
        return inventory.skew_note(KubeVersion.parse(server), KubeVersion.parse(kubelet))[1]

    assert note("v1.36.2", "v1.35.0").startswith("1 minor behind the API server")
    assert note("v1.36.2", "v1.32.9") == "kubelet is 4 minors behind the API server: beyond the supported skew of 3"
    assert note("v2.0.0", "v1.36.0").startswith("kubelet is a major version behind")


def test_versions_table_flags_the_lagging_kubelet():
    snap = snapshot([node("a"), node("old", version="v1.34.2")])
    table = inventory.versions(snap).set_index("node")
    assert table.loc["a", "skew"] == "ok"
    assert table.loc["old", "skew"] == "warning"
    assert "2 minors behind" in table.loc["old", "note"]


def test_flag_override_is_visible_with_both_values():
    flagged = dict(settings(topologyManagerPolicy="best-effort"))
    flagged["topologyManagerPolicy"] = Setting(
        value="single-numa-node",
        source="flag",
        detail="--topology-manager-policy",
        overridden=[Layer(source="file", value="best-effort", detail="/var/lib/kubelet/config.yaml")],
    )
    snap = snapshot([node("a"), node("b", kubelet=KubeletInfo(settings=flagged))])
    table = inventory.overrides(snap)
    assert list(table["node"]) == ["b"]
    assert table.loc[0, "overrides"] == "file (/var/lib/kubelet/config.yaml) said best-effort"
    matrix = inventory.settings_matrix(snap)
    assert matrix.loc["b", "topologyManagerPolicy"] == "single-numa-node ⚑flag"
    assert matrix.loc["a", "topologyManagerPolicy"] == "none"


def test_missing_setting_is_unknown_not_defaulted():
    snap = snapshot([node("a", kubelet=KubeletInfo(settings={}))])
    rows = inventory.settings(snap)
    assert set(rows["source"]) == {"unknown"}


def test_identical_nodes_share_one_shape():
    snap = snapshot([node("a"), node("b"), node("c", smt=False)])
    shapes = inventory.shapes(snap)
    assert list(shapes["nodes"]) == [2, 1] and list(shapes["node_names"]) == ["a, b", "c"]
    assert "SMT2" in shapes["hardware"][0] and "SMT1" in shapes["hardware"][1]
    layout = inventory.numa_layout(snap)
    assert list(layout["shape"]) == [1, 1, 2, 2] and list(layout["numa"]) == ["0", "1", "0", "1"]
    assert "node_names" not in layout.columns and "hardware" not in layout.columns


def test_alike_zones_share_one_row_and_the_shape_is_said_once():
    """A GB200 exposes each GPU's memory as a CPU-less NUMA node: 34 zones, 32 without CPUs; those
    on one socket are alike (80 among them, the same distances outward), so 4 rows, not 34."""
    from tmnb.sources.embedded import load_sample

    snap = load_sample()
    shapes = inventory.shapes(snap)
    (number,) = shapes[shapes["node_names"] == "gb200-01"]["shape"]
    assert "CPUs per zone 72/72/0×32," in shapes[shapes["shape"] == number]["hardware"].iloc[0]
    gb200 = inventory.numa_layout(snap).query("shape == @number")
    assert list(gb200["numa"]) == ["0", "1", "2-17", "18-33"]
    assert list(gb200["distances"]) == [
        "to 1: 40; to 2-17: 80; to 18-33: 120",
        "to 0: 40; to 2-17: 120; to 18-33: 80",
        "to 0: 80; to 1,18-33: 120; within 2-17: 80",
        "to 0: 120; to 1: 80; to 2-17: 120; within 18-33: 80",
    ]
    assert inventory.runs([1, 1, 2, 2, 2, 3], "/") == "1/1/2×3/3"
    assert inventory.runs([], " ") == ""


def test_devices_by_numa_and_without_topology():
    devs = [Device(resource="nvidia.com/gpu", id=f"GPU-{i}", numa=[i // 2]) for i in range(4)]
    devs.append(Device(resource="example.com/fpga", id="fpga0", numa=None))
    snap = snapshot([node("g", devices=devs, capacity={"cpu": "16", "nvidia.com/gpu": "4", "example.com/fpga": "1"})])
    table = inventory.devices(snap)
    assert table.to_dict("records") == [
        {"node": "g", "resource": "example.com/fpga", "numa": "none", "devices": 1},
        {"node": "g", "resource": "nvidia.com/gpu", "numa": "0", "devices": 2},
        {"node": "g", "resource": "nvidia.com/gpu", "numa": "1", "devices": 2},
    ]
    assert set(inventory.extended_resources(snap)["resource"]) == {"nvidia.com/gpu", "example.com/fpga"}


def test_guaranteed_pods_explain_exclusive_cpus():
    static = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))
    n = node("s", kubelet=static)
    pods = [pod("whole", "s", cpu="2"), pod("milli", "s", cpu="1500m"), pod("elsewhere", "a", cpu="2")]
    allocs = [
        Allocation(
            pod_uid="uid-whole", namespace="app", pod="whole", container="main", cpuset="1-2", exclusive=True, numa=[0]
        ),
        Allocation(
            pod_uid="uid-milli",
            namespace="app",
            pod="milli",
            container="main",
            cpuset="0,3-7,9-15",
            exclusive=False,
            numa=[0, 1],
        ),
    ]
    snap = snapshot([node("a"), n.__class__(**{**n.__dict__, "allocations": allocs})], pods)
    table = inventory.guaranteed_pods(snap).set_index("pod")
    assert table.loc["whole", "exclusive"] and table.loc["whole", "cpuset"] == "1-2"
    assert not table.loc["milli", "exclusive"]
    assert "not a whole number" in table.loc["milli", "why"]
    assert "not static" in table.loc["elsewhere", "why"]
    assert table["consistent"].all()


def test_admission_failures_match_both_spellings():
    pods = [
        pod("new", phase="Failed", reason="TopologyAffinityError", message="Pod was rejected: x"),
        pod("old", phase="Failed", reason="Topology Affinity Error"),
        pod("evicted", phase="Failed", reason="Evicted"),
    ]
    assert list(inventory.admission_failures(snapshot(pods=pods))["pod"]) == ["new", "old"]


def test_checklist_is_computed_from_the_data(tmp_path):
    complete = snapshot([node("a")], [pod("p", "a")])
    path = tmp_path / "s.json"
    save(complete, path)
    table = checklist.checklist(complete, path).set_index("item")["status"]
    assert table.eq("done").all(), table

    gaps = snapshot(
        [node("a", versions=Versions()), node("b", kubelet=KubeletInfo(settings={}), cpus=[], numa=[])],
        cluster=Cluster(),
    )
    statuses = checklist.checklist(gaps, None).set_index("item")["status"]
    assert statuses["Kubernetes and kubelet versions recorded"] == "partial"  # b has one, API server unknown
    assert statuses["Topology Manager policy and scope documented"] == "partial"
    assert statuses["NUMA layout captured for every node type"] == "partial"
    assert statuses["Baseline pods and CPU assignments captured"] == "missing"
    assert statuses["Inventory stored in versioned form"] == "missing"


def test_checklist_notices_a_snapshot_changed_after_writing(tmp_path):
    snap = snapshot([node("a")], [pod("p", "a")])
    path = tmp_path / "s.json"
    save(snapshot([node("zzz")]), path)
    assert checklist.stored_versioned(path, snap)[0] == "partial"


def test_configz_on_top_keeps_the_disk_view_and_shows_drift():
    live = dict(settings())
    live["topologyManagerPolicy"] = Setting(
        value="single-numa-node",
        source="configz",
        overridden=(
            Layer(source="default", value="none"),
            Layer(source="file", value="restricted", detail="/c.yaml"),
            Layer(source="flag", value="single-numa-node", detail="--topology-manager-policy"),
        ),
    )
    live["topologyManagerScope"] = Setting(
        value="pod", source="configz", overridden=(Layer(source="file", value="container", detail="/c.yaml"),)
    )
    snap = snapshot([node("a", kubelet=KubeletInfo(settings=live))])
    matrix = inventory.settings_matrix(snap)
    assert matrix.loc["a", "topologyManagerPolicy"] == "single-numa-node ⚑flag"
    assert matrix.loc["a", "topologyManagerScope"] == "pod ≠disk"
    table = inventory.overrides(snap).set_index("setting")
    assert table.loc["topologyManagerPolicy", "overrides"] == "file (/c.yaml) said restricted"


def test_structured_settings_read_as_the_kubelet_flags_write_them():
    from tmnb.sources.embedded import load_sample

    matrix = inventory.settings_matrix(load_sample())
    assert matrix.loc["tel-epyc-01", "reservedMemory"].startswith("NUMA 0: memory=1524Mi; NUMA 1: memory=1Gi")
    assert matrix.loc["gen-icx-01", "kubeReserved"] == "cpu=500m, ephemeral-storage=1Gi, memory=1Gi"
    assert matrix.loc["lat-icx-01", "cpuManagerPolicyOptions"] == "full-pcpus-only=true"
    assert not matrix.stack().astype(str).str.contains(r"[{}\[\]]").any()  # no JSON or Python reprs


def test_shared_pool_containers_are_complete_without_a_cpuset():
    """A live node's CPU manager state records only exclusive containers: pg and main hold exclusive
    CPUs (both recorded), a Burstable container in the shared pool has none to record."""
    busy = busy_snapshot()
    pods = [
        pod("pg-0", "w1", uid="u1", containers=[_container("pg", "4")]),
        pod("train", "w1", uid="u2", containers=[_container("main", "2")]),
        pod("web", "w1", cpu="500m", qos="Burstable"),
    ]
    snap = dataclasses.replace(busy, pods=pods)
    assert checklist.baseline_pods_captured(snap) == (
        "done",
        "3 pods; 2/2 containers with exclusive CPUs (Guaranteed, whole CPUs, static policy) with their cpuset "
        "recorded; the other 1 running container(s) use the shared pool and need none",
    )
    unrecorded = dataclasses.replace(snap, pods=[*pods, pod("late", "w1")])
    assert checklist.baseline_pods_captured(unrecorded)[0] == "partial"


def _container(name: str, cpu: str) -> Container:
    requests = {"cpu": cpu, "memory": "1Gi"}
    return Container(name=name, requests=requests, limits=dict(requests))


def test_scheduling_shows_each_nodes_cordon_and_taints_as_kubectl_writes_them():
    cordon = Taint(key="node.kubernetes.io/unschedulable", effect="NoSchedule", time_added="2026-12-01T08:00:00Z")
    nodes = [
        node(
            "a", unschedulable=True, taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule"), cordon]
        ),
        node("b", unschedulable=True, ready=None),  # an older snapshot: the cordon without its taint
        node("c", taints=[Taint(key="team", effect="PreferNoSchedule")], ready=False),
    ]
    table = inventory.scheduling(snapshot(nodes))
    assert table.to_dict("records") == [
        {"node": "a", "ready": "yes", "cordoned": "yes, since 2026-12-01T08:00:00Z",
         "taints": "nvidia.com/gpu=present:NoSchedule"},
        {"node": "b", "ready": "unknown", "cordoned": "yes", "taints": ""},
        {"node": "c", "ready": "no", "cordoned": "no", "taints": "team:PreferNoSchedule"},
    ]  # fmt: skip


def test_an_inventory_with_a_pod_rejected_at_admission_is_never_a_green_checklist(tmp_path):
    """The after-change 01 of the demo: every checklist item done, and a new TopologyAffinityError on
    the changed node. The verdict names the pod and its node, and does not say all is well."""
    pods = [pod("p", "a"), pod("big", "a", phase="Failed", reason="TopologyAffinityError")]
    after = snapshot([node("a")], pods)
    path = tmp_path / "s.json"
    save(after, path)
    checks = checklist.checklist(after, path)
    assert checks["status"].eq("done").all()
    said = checklist.verdict(checks, path, after)
    assert said.tone == "warn" and said.headline.startswith("1 pod(s) rejected at admission on 1 node(s)")
    assert dict(said.sections)["Rejected at admission"] == [
        "`app/big` on **a**: TopologyAffinityError (ReplicaSet/big-rs keeps recreating it)"
    ]
    calm = snapshot([node("a")], [pod("p", "a")])
    save(calm, tmp_path / "calm.json")
    assert checklist.verdict(checklist.checklist(calm, tmp_path / "calm.json"), path, calm).tone == "ok"
