"""The fleet's kubelet minors and what differs between them (01-inventory), and for an upgrade between
today's minors and the planned one (03-readiness); values from docs/kubelet-minors.md's table."""

from factories import node, settings, snapshot
from tmnb.analysis import inventory as inv
from tmnb.analysis.minors import differences
from tmnb.analysis.readiness import assess, minor_changes
from tmnb.kubelet.profiles import profile
from tmnb.snapshot import KubeletInfo


def test_minors_table_counts_nodes_per_minor_and_says_what_they_are_predicted_as():
    snap = snapshot(
        [
            node("a", version="v1.36.1"),
            node("b", version="v1.36.2"),
            node("c", version="v1.36.2"),
            node("old", version="v1.31.4"),
            node("new", version="v1.38.0"),
            node("blank", version=""),
        ]
    )
    table = inv.kubelet_minors(snap).set_index("kubelet")
    assert list(table.index) == ["1.31", "1.36", "1.38", "unknown"]
    assert table.loc["1.36", "nodes"] == 3 and table.loc["1.36", "versions"] == "v1.36.1, v1.36.2 ×2"
    # outside 1.33-1.37: the nearest minor, not modelled; no version: 1.36, not modelled
    assert table["predicted as"].to_dict() == {"1.31": "1.33", "1.36": "1.36", "1.38": "1.37", "unknown": "1.36"}
    assert table["modelled"].to_dict() == {"1.31": False, "1.36": True, "1.38": False, "unknown": False}


def test_differences_between_136_and_137():
    """The 1.36 and 1.37 columns of the docs' table, where they differ."""
    table = differences([profile(37), profile(36)]).set_index("fact")
    assert list(table.columns) == ["1.36", "1.37"]
    assert table.to_dict("index") == {
        "PodLevelResourceManagers gate": {"1.36": "alpha, off by default", "1.37": "beta, off by default"},
        "PodLevelResourcesFixKubeletQOSClass gate": {"1.36": "–", "1.37": "beta, on by default"},
        "spec.resources: {} makes a pod BestEffort": {"1.36": "yes", "1.37": "no"},
        "cpu_manager_state written": {
            "1.36": "V2 (V3 with PodLevelResourceManagers)",
            "1.37": "V4 (V2 fields inline)",
        },
        "cpu_manager_state read": {"1.36": "V1, V2, V3", "1.37": "V1, V2, V3, V4"},
        "memory_manager_state written": {
            "1.36": "V1 (V2 with PodLevelResourceManagers)",
            "1.37": "V3 (V1 fields inline)",
        },
        "memory_manager_state read": {"1.36": "V1, V2", "1.37": "V1, V2, V3"},
        "field defaultPodSysctls": {"1.36": "–", "1.37": "known"},
    }


def test_differences_between_135_and_136_name_the_topology_manager_facts():
    table = differences([profile(35), profile(36)]).set_index("fact")
    assert table.loc["MemoryManager gate"].tolist() == ["GA, locked to true", "–"]
    assert table.loc["TopologyManagerPolicyOptions gate"].tolist() == ["GA, on by default", "GA, locked to true"]
    assert table.loc["cpu manager option prefer-align-cpus-by-uncorecache"].tolist() == ["beta", "GA"]
    assert table.loc["device hints only over the NUMA nodes holding the devices"].tolist() == ["no", "yes"]
    assert "topology manager option max-allowable-numa-nodes" not in table.index  # GA in both
    assert "failCgroupV1 default" not in table.index  # true in both


def test_one_minor_has_no_differences_and_fleet_gates_are_shown():
    assert differences([profile(36), profile(36)]).empty
    gated = KubeletInfo(settings=settings(featureGates={"KubeletPodResourcesGet": True}))
    snap = snapshot([node("a", version="v1.34.5", kubelet=gated), node("b", version="v1.36.1")])
    table = inv.minor_differences(snap).set_index("fact")
    assert table.loc["KubeletPodResourcesGet gate"].tolist() == ["beta, on by default", "GA, locked to true"]
    assert inv.minor_differences(snapshot([node("a"), node("b")])).empty


def test_readiness_shows_what_differs_for_the_planned_minor():
    snap = snapshot([node("a", version="v1.35.2"), node("b", version="v1.36.1")])
    table = minor_changes(assess(snap, {"kubeletVersion": "1.37"}))
    assert list(table.columns) == ["fact", "1.35", "1.36", "1.37"]
    assert minor_changes(assess(snap, {"topologyManagerPolicy": "restricted"})).empty
