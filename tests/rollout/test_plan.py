"""The rollout plan: order, exclusions with reasons, the file each node gets, state files and drains."""

from __future__ import annotations

import dataclasses
import hashlib
import json

import pytest
import yaml

from factories import node, pod, settings, snapshot
from tmnb.analysis.readiness import assess
from tmnb.errors import InputError
from tmnb.rollout.apply import DROPIN_NAME
from tmnb.rollout.arguments import validate_change_id
from tmnb.rollout.config_yaml import edit_config
from tmnb.rollout.plan import (
    CORDONED_BEFORE,
    CPU_STATE,
    RolloutPlan,
    build_plan,
    plan_json,
)
from tmnb.snapshot import KubeletInfo, Setting

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "none"}


def _fleet(**kubelet: object):  # type: ignore[no-untyped-def]
    info = KubeletInfo(settings=settings(**STATIC), config_file="/var/lib/kubelet/config.yaml", **kubelet)
    nodes = [node(f"w{i}", kubelet=info) for i in range(1, 6)]
    pods = [pod(f"web-{i}", f"w{i}") for i in range(1, 6)] + [pod("extra-w2", "w2")]
    return snapshot(nodes, pods)


def _plan(snap, target, **kw):  # type: ignore[no-untyped-def]
    return build_plan(snap, assess(snap, target), change_id="c1", **kw)


def test_canary_first_then_waves_of_the_given_size() -> None:
    plan = _plan(_fleet(), {"topologyManagerPolicy": "best-effort"}, waves=2, canary="w3")
    assert [(n.node, n.gate) for n in plan.nodes] == [
        ("w3", "canary"),
        ("w1", "wave-1"),
        ("w2", "wave-1"),
        ("w4", "wave-2"),
        ("w5", "wave-2"),
    ]
    assert plan.gates == ["canary", "wave-1", "wave-2"]


def test_recommended_canary_is_the_readiness_pick() -> None:
    """Worked by hand from the readiness rule (one pool, one hardware shape, every node changes and
    none rejects: the fewest Running Guaranteed pods, then the name). With an extra pod on w1 as
    on w2, the counts are w1 2, w2 2, w3 1, w4 1, w5 1: w3, which name order alone would not pick."""
    fleet = _fleet()
    snap = snapshot(fleet.nodes, [*fleet.pods, pod("extra-w1", "w1")])
    report = assess(snap, {"topologyManagerPolicy": "best-effort"})
    plan = build_plan(snap, report, change_id="c1")
    assert report.canary["canary"].tolist() == ["w3"]
    assert [(n.node, n.gate) for n in plan.nodes] == [
        ("w3", "canary"),
        *((name, "wave-1") for name in ("w1", "w2", "w4", "w5")),  # the default wave size is 5
    ]


def test_edit_keeps_every_other_key_in_order() -> None:
    before = (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nmaxPods: 50\ncpuManagerPolicy: static\n"
    )
    after = edit_config(before, {"topologyManagerPolicy": "restricted", "maxPods": 50}, source="x")
    assert list(yaml.safe_load(after)) == ["apiVersion", "kind", "maxPods", "cpuManagerPolicy", "topologyManagerPolicy"]
    assert yaml.safe_load(after)["topologyManagerPolicy"] == "restricted"


def test_unparsable_config_is_a_clear_error() -> None:
    with pytest.raises(InputError, match=r"node-a:/var/lib/kubelet/config\.yaml: cannot edit"):
        edit_config("a: [unclosed", {"x": 1}, source="node-a:/var/lib/kubelet/config.yaml")


def test_diff_shows_the_changed_field_against_the_file_read() -> None:
    snap = _fleet()
    files = {"/var/lib/kubelet/config.yaml": b"kind: KubeletConfiguration\ntopologyManagerPolicy: none\nmaxPods: 80\n"}
    plan = _plan(snap, {"topologyManagerPolicy": "restricted"}, read=lambda _n, path: files.get(path))
    diff = plan.nodes[0].files[0].diff()
    assert "-topologyManagerPolicy: none" in diff and "+topologyManagerPolicy: restricted" in diff
    assert " maxPods: 80" in diff


def test_flag_override_is_refused_naming_the_flag() -> None:
    flagged = settings(**STATIC)
    flagged["topologyManagerPolicy"] = Setting("none", "flag", "--topology-manager-policy (kubeadm-flags.env)")
    snap = _fleet()
    nodes = [
        snap.nodes[0].__class__(
            **{**snap.nodes[0].__dict__, "kubelet": KubeletInfo(settings=flagged, config_file="/c")}
        ),
        *snap.nodes[1:],
    ]
    snap = snapshot(nodes, snap.pods)
    plan = _plan(snap, {"topologyManagerPolicy": "restricted"})
    excluded = {e.node: e.reason for e in plan.excluded}
    assert "w1" in excluded and "--topology-manager-policy (kubeadm-flags.env)" in excluded["w1"]
    assert "w1" not in [n.node for n in plan.nodes]


def test_cpu_policy_change_moves_the_state_file_and_drains() -> None:
    plan = _plan(_fleet(), {"cpuManagerPolicy": "none", "reservedSystemCPUs": ""})
    change = plan.nodes[0]
    assert change.state_files == [CPU_STATE]
    assert change.drain and "cpu_manager_state" in change.drain_why


def test_topology_only_change_needs_no_drain_when_every_pod_is_readmitted() -> None:
    plan = _plan(_fleet(), {"topologyManagerPolicy": "best-effort"})
    assert not plan.nodes[0].drain and plan.nodes[0].state_files == []


def test_rejecting_node_is_excluded_unless_overridden() -> None:
    snap = _fleet()
    big = pod("big", "w4", cpu="10")  # 10 exclusive CPUs: more than one NUMA node has (8)
    snap = snapshot(snap.nodes, [*snap.pods, big])
    plan = _plan(snap, {"topologyManagerPolicy": "single-numa-node"})
    reasons = {e.node: e.reason for e in plan.excluded}
    assert "w4" in reasons and "app/big" in reasons["w4"]
    forced = _plan(snap, {"topologyManagerPolicy": "single-numa-node"}, override=["w4"])
    assert "w4" in [n.node for n in forced.nodes]


def test_dropin_where_the_kubelet_has_a_config_dir() -> None:
    plan = _plan(_fleet(config_dir="/etc/kubernetes/kubelet.conf.d"), {"topologyManagerPolicy": "restricted"})
    f = plan.nodes[0].files[0]
    assert f.how == "drop-in" and f.path == f"/etc/kubernetes/kubelet.conf.d/{DROPIN_NAME}"
    assert yaml.safe_load(f.after) == {
        "apiVersion": "kubelet.config.k8s.io/v1beta1",
        "kind": "KubeletConfiguration",
        "topologyManagerPolicy": "restricted",
    }


def test_kubeadm_managed_edit_warns_about_the_configmap() -> None:
    plan = _plan(_fleet(kubeadm_managed=True), {"topologyManagerPolicy": "restricted"})
    assert plan.kubeadm_nodes() == ["w1", "w2", "w3", "w4", "w5"]
    (warning,) = plan.nodes[0].warnings
    assert warning.startswith("kubeadm writes /var/lib/kubelet/config.yaml again at the next `kubeadm upgrade node`")
    assert "kubeadm-patches/kubeletconfiguration+strategic.yaml" in warning and "`--patches DIR`" in warning
    assert "kubelet-config ConfigMap" in warning
    assert _plan(_fleet(), {"topologyManagerPolicy": "restricted"}).kubeadm_nodes() == []


def test_the_kubeadm_patch_is_the_target_as_kubeadm_names_it(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """kubeadm's --patches reads files named target[suffix][+patchtype].extension; the kubelet
    configuration's target is kubeletconfiguration (kubeadm upgrade node phase kubelet-config --help)."""
    from tmnb.rollout.kubeadm import write_patch

    path = write_patch(tmp_path, {"topologyManagerPolicy": "restricted", "topologyManagerScope": "pod"})
    assert path == tmp_path / "kubeadm-patches" / "kubeletconfiguration+strategic.yaml"
    assert path.read_text() == (
        "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
        "topologyManagerPolicy: restricted\ntopologyManagerScope: pod\n"
    )


def test_the_plans_diff_is_of_the_bytes_read_on_the_node() -> None:
    """Not the snapshot's view re-serialised: the node's comments and quoting are in the diff's context,
    and only the changed line differs."""
    text = (
        "# hand-kept\nkind: KubeletConfiguration\ncpuManagerPolicy: 'static'\n\n"
        'topologyManagerPolicy: "none"   # for now\nmaxPods:  80\n'
    )
    plan = _plan(_fleet(), {"topologyManagerPolicy": "restricted"}, read=lambda _n, _p: text.encode())
    f = plan.nodes[0].files[0]
    assert f.read and f.before == text
    assert f.diff().splitlines() == [
        "--- /var/lib/kubelet/config.yaml",
        "+++ /var/lib/kubelet/config.yaml",
        "@@ -2,5 +2,5 @@",
        " kind: KubeletConfiguration",
        " cpuManagerPolicy: 'static'",
        " ",
        '-topologyManagerPolicy: "none"   # for now',
        '+topologyManagerPolicy: "restricted" # for now',
        " maxPods:  80",
    ]


def test_an_unread_file_shows_the_fields_set_not_a_file_made_up() -> None:
    f = _plan(_fleet(), {"topologyManagerPolicy": "restricted"}).nodes[0].files[0]
    assert not f.read and f.before is None
    assert f.diff() == (
        "# /var/lib/kubelet/config.yaml not read (the executor cannot read the node; preflight reads it): sets\n"
        "+topologyManagerPolicy: restricted\n"
    )


def test_a_warning_every_planned_node_carries_is_said_once() -> None:
    import pandas as pd

    from tmnb.rollout.runbook import shared_warning

    plan = _plan(_fleet(kubeadm_managed=True), {"topologyManagerPolicy": "restricted"})
    table, common = shared_warning(pd.DataFrame(plan.rows()).fillna(""))
    assert "kubelet-config ConfigMap" in common and "warnings" not in table and len(table) == 5
    mixed = pd.DataFrame(plan.rows()).fillna("")
    mixed.loc[0, "warnings"] = "another"
    quiet = pd.DataFrame(_plan(_fleet(), {"topologyManagerPolicy": "restricted"}).rows()).fillna("")
    assert shared_warning(quiet)[0].columns.tolist() == quiet.drop(columns="warnings").columns.tolist()
    kept, common = shared_warning(mixed)
    assert common == "" and list(kept["warnings"]) == list(mixed["warnings"])  # not shared: each row keeps its own


def test_plan_json_round_trip() -> None:
    plan = _plan(_fleet(), {"topologyManagerPolicy": "restricted"}, waves=2)
    again = RolloutPlan.from_json(json.loads(json.dumps(plan.to_json())))
    assert again == plan


@pytest.mark.parametrize("bad", ["Has-Caps", "-lead", "a" * 64, "semi;colon", "../up"])
def test_change_id_must_be_dns1123(bad: str) -> None:
    with pytest.raises(InputError, match="change_id"):
        validate_change_id(bad)


def test_unknown_nodes_and_canaries_are_named() -> None:
    snap = _fleet()
    with pytest.raises(InputError, match="ghost"):
        _plan(snap, {"topologyManagerPolicy": "restricted"}, nodes=["w1", "ghost"])
    with pytest.raises(InputError, match="canary: 'w9' is not a planned node"):
        _plan(snap, {"topologyManagerPolicy": "restricted"}, canary="w9")


@pytest.mark.parametrize("mode", ["drain", "restart"])
def test_each_nodes_prediction_is_its_drain_replay(mode: str) -> None:
    """The plan reuses the readiness replay when that replayed in drain mode, and replays in drain
    mode itself otherwise: either way the same counts. Worked by hand: every node has 16 CPUs, 8 on
    each NUMA node (0 and 8 reserved on node 0). Under single-numa-node a 2-CPU Guaranteed pod fits
    one NUMA node and is admitted; big's 10 exclusive CPUs fit on none (8 at most), so the merged
    hint is not preferred and it is rejected (TopologyAffinityError). w4 is planned by override."""
    snap = _fleet()
    snap = snapshot(snap.nodes, [*snap.pods, pod("big", "w4", cpu="10")])
    report = assess(snap, {"topologyManagerPolicy": "single-numa-node"}, mode=mode)
    plan = build_plan(snap, report, change_id="c1", override=["w4"])
    assert {n.node: n.prediction for n in plan.nodes} == {
        "w1": {"admitted": 1, "rejected": 0},  # web-1
        "w2": {"admitted": 2, "rejected": 0},  # web-2 and extra-w2: 4 of the 14 unreserved CPUs
        "w3": {"admitted": 1, "rejected": 0},
        "w4": {"admitted": 1, "rejected": 1},  # web-4 admitted, big rejected
        "w5": {"admitted": 1, "rejected": 0},
    }


def test_a_flag_under_the_running_value_still_decides_the_field():
    """Collected live, a field's winning layer is /configz; the flag read from the node's files sits
    under it and still beats any edit of the file (the kubelet restarts with it)."""
    from tmnb.rollout.plan import overridden_by
    from tmnb.snapshot import KubeletInfo, Layer, Setting

    running = Setting(
        "single-numa-node",
        "configz",
        None,
        (
            Layer("file", "restricted", "/var/lib/kubelet/config.yaml"),
            Layer("flag", "single-numa-node", "--topology-manager-policy (/var/lib/kubelet/kubeadm-flags.env)"),
        ),
    )
    n = node("w1", kubelet=KubeletInfo(settings={"topologyManagerPolicy": running}))
    (reason,) = overridden_by(n, {"topologyManagerPolicy": "best-effort"}, "edit")
    assert reason.startswith(
        "topologyManagerPolicy is set by the command-line flag --topology-manager-policy "
        "(/var/lib/kubelet/kubeadm-flags.env)=single-numa-node, which beats the config file"
    )


def test_a_running_value_no_layer_explains_is_refused():
    """configz disagrees with the file tmnb would edit, and no flag or drop-in was read: something else
    decides the field (or the kubelet was not restarted), so the plan does not write blind."""
    from tmnb.rollout.plan import overridden_by
    from tmnb.snapshot import KubeletInfo, Layer, Setting

    running = Setting(
        "single-numa-node", "configz", None, (Layer("file", "restricted", "/var/lib/kubelet/config.yaml"),)
    )
    n = node("w1", kubelet=KubeletInfo(settings={"topologyManagerPolicy": running}))
    (reason,) = overridden_by(n, {"topologyManagerPolicy": "best-effort"}, "edit")
    assert reason.startswith(
        "topologyManagerPolicy: the running kubelet (/configz) has single-numa-node but "
        "/var/lib/kubelet/config.yaml says restricted"
    )
    agreeing = Setting("restricted", "configz", None, (Layer("file", "restricted", "/var/lib/kubelet/config.yaml"),))
    n = node("w1", kubelet=KubeletInfo(settings={"topologyManagerPolicy": agreeing}))
    assert overridden_by(n, {"topologyManagerPolicy": "best-effort"}, "edit") == []


def test_a_rollout_refuses_a_kubelet_version_in_its_target():
    """An upgrade is a what-if: the rollout writes configuration files, so kubeletVersion never reaches one."""
    from tmnb.errors import InputError
    from tmnb.rollout.request import RolloutRequest

    with pytest.raises(InputError, match="changes the kubelet's configuration, not its version"):
        RolloutRequest(target={"kubeletVersion": "1.37"}, change_id="c1", source="sample")


def _holding_across_numa():  # type: ignore[no-untyped-def]
    """w1 runs a 4-CPU pod pinned to 3-4,11-12: CPUs of both NUMA nodes (0-3,8-11 | 4-7,12-15)."""
    import dataclasses

    from tmnb.snapshot import Allocation

    fleet = _fleet()
    held = Allocation(
        pod_uid="uid-wide", namespace="app", pod="wide", container="main", cpuset="3-4,11-12", exclusive=True
    )
    nodes = [dataclasses.replace(n, allocations=[*n.allocations, held]) if n.name == "w1" else n for n in fleet.nodes]
    return snapshot(nodes, [*fleet.pods, pod("wide", "w1", cpu="4")])


def test_a_running_pod_the_restart_would_reject_makes_the_node_drain_and_is_named() -> None:
    """At restart the kubelet regenerates the pod's hint from the CPUs it holds (NUMA {0,1}), which
    single-numa-node refuses; after a drain the same pod fits one NUMA node, so only a drain is safe."""
    plan = _plan(_holding_across_numa(), {"topologyManagerPolicy": "single-numa-node"})
    w1 = plan.node("w1")
    assert w1.drain
    assert w1.drain_why == (
        "at restart the kubelet re-admits the running pods (what-if, restart mode): app/wide: TopologyAffinityError: "
        "Resources cannot be allocated with Topology locality"
    )
    assert not plan.node("w2").drain


def test_drain_never_refuses_a_node_whose_restart_would_reject_a_running_pod() -> None:
    with pytest.raises(InputError, match=r"node w1: drain='never' but at restart .* app/wide: TopologyAffinityError"):
        _plan(_holding_across_numa(), {"topologyManagerPolicy": "single-numa-node"}, drain="never")


def test_a_running_pod_the_restart_would_re_pin_is_named_and_makes_the_node_drain() -> None:
    """The snapshot read w1's state files and found a memory_manager_state but no cpu_manager_state (deleted
    by hand since the kubelet last started), while the running kubelet still pins app/wide to 3-4,11-12.
    At the restart the CPU manager starts fresh and re-admits wide: reserved 0,8 leave 1-3,9-11 free on
    NUMA 0 and 4-7,12-15 on NUMA 1; best-effort prefers the narrowest NUMA set holding 4 CPUs, NUMA 0,
    where whole cores are taken in order: cores 1 (1,9) and 2 (2,10), so 1-2,9-10, not 3-4,11-12."""
    import dataclasses

    from tmnb.snapshot import Allocation, StateFile

    fleet = _fleet()
    held = Allocation(
        pod_uid="uid-wide", namespace="app", pod="wide", container="main", cpuset="3-4,11-12", exclusive=True
    )
    memory = StateFile(manager="memory", path="/var/lib/kubelet/memory_manager_state", policy="None")
    w1 = dataclasses.replace(fleet.nodes[0], allocations=[held], state_files=[memory])
    pods = [p for p in fleet.pods if p.node != "w1"] + [pod("wide", "w1", cpu="4")]
    plan = _plan(snapshot([w1, *fleet.nodes[1:]], pods), {"topologyManagerPolicy": "best-effort"})
    change = plan.node("w1")
    assert change.drain and change.state_files == []
    assert change.drain_why == (
        "at restart the kubelet re-admits the running pods (what-if, restart mode): "
        "app/wide: main re-pinned from CPUs 3-4,11-12 to 1-2,9-10"
    )
    assert not plan.node("w2").drain


def test_a_recommended_canary_is_never_a_node_that_cannot_be_one() -> None:
    """Kubelets 1.32 under a 1.36 API server: outside the supported skew, a blocker on every node. 03
    recommends none, so 04's canary: recommended refuses, naming why; a named canary is the user's call."""
    info = KubeletInfo(settings=settings(**STATIC), config_file="/var/lib/kubelet/config.yaml")
    snap = snapshot([node(f"w{i}", version="v1.32.4", kubelet=info) for i in (1, 2)])
    target = {"topologyManagerPolicy": "restricted"}
    with pytest.raises(InputError, match=r"no planned node can be the canary \(w1: blocker: version-skew; w2: "):
        _plan(snap, target)
    assert _plan(snap, target, canary="w2").nodes[0].node == "w2"


def test_recommended_canary_among_the_selected_nodes_is_one_that_can_be() -> None:
    """Readiness picks w3 for the pool; the selection leaves w3 out, w1 has a flag-set field (a blocker,
    refused by the plan too) and w2 is cordoned: w4 is the first selected node that can be the canary."""
    import dataclasses

    fleet = _fleet()
    flagged = KubeletInfo(
        settings={**settings(**STATIC), "topologyManagerScope": Setting("pod", "flag", "--topology-manager-scope")},
        config_file="/var/lib/kubelet/config.yaml",
    )
    nodes = [
        dataclasses.replace(n, kubelet=flagged) if n.name == "w1" else n
        for n in (dataclasses.replace(n, unschedulable=n.name == "w2") for n in fleet.nodes)
    ]
    snap = snapshot(nodes, [*fleet.pods, pod("more-w4", "w4"), pod("more-w5", "w5")])
    report = assess(snap, {"topologyManagerScope": "container", "topologyManagerPolicy": "best-effort"})
    assert report.canary["canary"].tolist() == ["w3"]
    plan = build_plan(snap, report, change_id="c1", nodes=["w1", "w2", "w4", "w5"])
    assert (plan.nodes[0].node, plan.nodes[0].gate) == ("w4", "canary")


#: A node's config as safe_dump writes it (so the edit keeps every other line), with credentials
#: where a kubelet config can hold them: a header's value, a private key pasted into providerID.
SECRET_CONFIG = (
    "kind: KubeletConfiguration\n"
    "staticPodURLHeader:\n"
    "  Authorization:\n"
    "  - Bearer plantedBearer0123456789\n"
    "  X-Auth-Token:\n"
    "  - plantedRawToken42\n"
    "topologyManagerPolicy: none\n"
    "providerID: '-----BEGIN PRIVATE KEY----- MIIEplantedKeyBody -----END PRIVATE KEY-----'\n"
    "maxPods: 80\n"
)


def test_a_diff_shows_lines_holding_secrets_unchanged_without_their_values() -> None:
    files = {"/var/lib/kubelet/config.yaml": SECRET_CONFIG.encode()}
    plan = _plan(_fleet(), {"topologyManagerPolicy": "restricted"}, read=lambda _n, path: files.get(path))
    f = plan.nodes[0].files[0]
    assert f.diff() == (
        "--- /var/lib/kubelet/config.yaml\n"
        "+++ /var/lib/kubelet/config.yaml\n"
        "@@ -4,6 +4,6 @@\n"
        "   <redacted>\n"
        "   X-Auth-Token:\n"
        "   <redacted>\n"
        "-topologyManagerPolicy: none\n"
        "+topologyManagerPolicy: restricted\n"
        " providerID: <redacted>\n"
        " maxPods: 80\n"
    )
    stored = plan_json(plan)
    assert not [s for s in ("plantedBearer", "plantedRawToken", "MIIEplanted") if s in stored]
    assert f.before is not None and f.before.count("\n") == SECRET_CONFIG.count("\n")  # line for line
    assert f.before_sha256 == hashlib.sha256(SECRET_CONFIG.encode()).hexdigest()  # the preflight's drift check


def test_a_diff_shows_a_changed_secret_as_changed_without_its_value() -> None:
    files = {"/var/lib/kubelet/config.yaml": SECRET_CONFIG.encode()}
    target = {"staticPodURLHeader": {"Authorization": ["Bearer plantedNewBearer987654"]}}
    plan = _plan(_fleet(), target, read=lambda _n, path: files.get(path))
    assert plan.nodes[0].files[0].diff() == (
        "--- /var/lib/kubelet/config.yaml\n"
        "+++ /var/lib/kubelet/config.yaml\n"
        "@@ -1,9 +1,7 @@\n"
        " kind: KubeletConfiguration\n"
        " staticPodURLHeader:\n"
        "   Authorization:\n"
        "-  <redacted>\n"  # the old bearer token ...
        "-  X-Auth-Token:\n"
        "-  <redacted>\n"
        "+  <redacted>\n"  # ... and the new one: changed, neither shown
        " topologyManagerPolicy: none\n"
        " providerID: <redacted>\n"
        " maxPods: 80\n"
    )


def test_on_the_sample_each_wave_keeps_to_one_pool_and_the_cordoned_node_goes_last_and_stays_cordoned() -> None:
    """tmnb rollout plan --set topologyManagerPolicy=restricted on the embedded sample: six nodes change, in
    four pools; gen-icx-02 is cordoned (a hardware ticket), so it is no canary, goes last in a wave of its own
    and the plan says the rollout leaves it cordoned."""
    from tmnb.sources.embedded import load_sample

    sample = load_sample()
    pools = {n.name: n.labels["tmnb.dev/pool"] for n in sample.nodes}
    plan = _plan(sample, {"topologyManagerPolicy": "restricted"})
    (canary,) = plan.in_gate("canary")
    assert canary.node != "gen-icx-02"
    for gate in plan.gates[1:]:
        assert len({pools[n.node] for n in plan.in_gate(gate)}) == 1, gate
    home = [
        n.node for n in plan.nodes if pools[n.node] == pools[canary.node] and n.node not in (canary.node, "gen-icx-02")
    ]
    assert [n.node for n in plan.in_gate("wave-1")] == home  # the rest of the canary's pool goes on first
    assert [n.node for n in plan.in_gate(plan.gates[-1])] == ["gen-icx-02"] == [plan.nodes[-1].node]
    assert plan.node("gen-icx-02").warnings[-1] == CORDONED_BEFORE
    assert not any(CORDONED_BEFORE in w for n in plan.nodes if n.node != "gen-icx-02" for w in n.warnings)


def test_waves_are_cut_pool_by_pool_from_the_canarys_pool_on() -> None:
    """Worked by hand: pools a (a1-a3) and b (b1, b2), all at none; canary b2, waves of 2: the canary's pool
    first (b1), then a1, a2, then a3 alone rather than beside a node of another pool."""
    info = KubeletInfo(settings=settings(**STATIC), config_file="/var/lib/kubelet/config.yaml")
    names = {"a1": "a", "a2": "a", "a3": "a", "b1": "b", "b2": "b"}
    nodes = [node(n, kubelet=info, labels={"tmnb.dev/pool": p}) for n, p in names.items()]
    plan = _plan(snapshot(nodes, []), {"topologyManagerPolicy": "best-effort"}, waves=2, canary="b2")
    assert [(n.node, n.gate) for n in plan.nodes] == [
        ("b2", "canary"), ("b1", "wave-1"), ("a1", "wave-2"), ("a2", "wave-2"), ("a3", "wave-3"),
    ]  # fmt: skip


def test_a_cordoned_node_named_as_the_canary_is_refused() -> None:
    fleet = _fleet()
    cordoned = snapshot([*fleet.nodes[:2], dataclasses.replace(fleet.nodes[2], unschedulable=True)], fleet.pods)
    with pytest.raises(InputError, match="w3 is cordoned: no new pod lands there") as err:
        _plan(cordoned, {"topologyManagerPolicy": "best-effort"}, canary="w3")
    assert err.value.where == "canary"
    plan = _plan(cordoned, {"topologyManagerPolicy": "best-effort"}, canary="w1")
    assert [(n.node, n.gate) for n in plan.nodes] == [("w1", "canary"), ("w2", "wave-1"), ("w3", "wave-2")]
