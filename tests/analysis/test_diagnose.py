"""Rejected pods explained by replaying their node, and remedies the model has checked.

worker-1: 2 NUMA nodes x 4 cores x 2 threads (CPUs 0-3,8-11 on NUMA 0; 4-7,12-15 on NUMA 1), static
CPU manager with CPUs 0,8 reserved, single-numa-node. A pod holds 4 exclusive CPUs on NUMA 1, so
NUMA 0 has 6 free CPUs and NUMA 1 has 4: a pod asking for 8 fits on neither.
"""

from __future__ import annotations

import dataclasses

import pytest

from factories import node, pod, settings, snapshot
from tmnb.analysis.diagnose import Diagnosis, diagnose
from tmnb.errors import InputError
from tmnb.snapshot import Allocation, Container, KubeletInfo, Pod, Snapshot, Taint, Toleration
from tmnb.sources.embedded import load_sample

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "single-numa-node"}


def fleet(big_cpu: str = "8", **kubelet: str) -> Snapshot:
    info = KubeletInfo(settings=settings(**{**STATIC, **kubelet}))
    holder = Allocation(pod_uid="uid-holder", namespace="app", pod="holder", container="main", cpuset="4-5,12-13",
                        exclusive=True, numa=[1])  # fmt: skip
    w1 = node("worker-1", kubelet=info, allocations=[holder])
    w2 = node("worker-2", kubelet=info, labels={"kubernetes.io/hostname": "worker-2", "tmnb.dev/pool": "batch"})
    big = pod("big", cpu=big_cpu, phase="Failed", reason="TopologyAffinityError",
              message="Pod was rejected: Resources cannot be allocated with Topology locality")  # fmt: skip
    return snapshot([w1, w2], [pod("holder", cpu="4"), big])


def diagnose_big(snap: Snapshot) -> Diagnosis:
    return diagnose(snap, next(p for p in snap.pods if p.name == "big"))


def test_rejection_is_reproduced_and_explained_in_numbers():
    d = diagnose_big(fleet())
    assert d.pod == "app/big" and d.node == "worker-1" and d.reproduced
    assert "asks for 8 exclusive CPUs; the largest free set on one NUMA node is 6" in d.why
    assert "NUMA 0: 6 free, NUMA 1: 4 free" in d.why
    cpu_hints = [h for h in d.hints if h["provider"] == "CPU manager"]
    assert cpu_hints and "preferred" not in cpu_hints[0]["hints"].replace("not-preferred", "")  # nothing fits one node
    assert "reject" in d.merged


def test_remedies_are_checked_and_ranked():
    kinds = {r.kind: r for r in diagnose_big(fleet()).remedies}
    assert kinds["smaller request"].change == "container main: cpu 8 → 6 (requests and limits)"
    assert "best-effort" in kinds["policy"].change and "span NUMA nodes" in kinds["policy"].note
    assert kinds["free resources"].change == "move app/holder off worker-1"
    assert kinds["free resources"].note == "frees 4 exclusive CPUs"
    assert kinds["another node"].change == "schedule it on pool batch: worker-2"
    assert "scope" not in kinds  # one container: pod scope changes nothing, so it is not offered


def test_pod_scope_is_offered_only_when_it_admits():
    # two containers of 4 CPUs: pod scope needs all 8 on one NUMA node, container scope 4 per container
    snap = fleet(big_cpu="4", topologyManagerScope="pod")
    big = next(p for p in snap.pods if p.name == "big")
    two = dataclasses.replace(big, containers=[*big.containers, dataclasses.replace(big.containers[0], name="side")])
    d = diagnose(snap, two)
    assert d.reproduced and "the pod asks for 8 exclusive CPUs" in d.why
    assert any(r.kind == "scope" and r.change == "topologyManagerScope: pod → container" for r in d.remedies)


def test_a_pod_the_node_admits_now_says_so_and_offers_nothing():
    d = diagnose_big(fleet(big_cpu="2"))
    assert not d.reproduced and "would admit the pod now" in d.why and d.remedies == []


def test_a_pod_without_a_node_is_an_input_error():
    snap = fleet()
    big = dataclasses.replace(next(p for p in snap.pods if p.name == "big"), node=None)
    with pytest.raises(InputError, match="app/big has no node"):
        diagnose(snap, big)


@pytest.mark.notebook
def test_postmortem_explains_the_rejection_with_checked_remedies(tmp_path):
    import json

    from conftest import ROOT
    from tmnb.cli.run.runner import run
    from tmnb.snapshot import save

    folder = tmp_path / "evidence" / "01-inventory"
    folder.mkdir(parents=True)
    save(fleet(), folder / "snapshot.json.gz")
    (folder / "manifest.json").write_text(json.dumps({"notebook": "01-inventory.ipynb", "status": "ok"}))
    result = run(ROOT / "notebooks" / "06-postmortem.ipynb", params={"evidence": str(tmp_path / "evidence")},
                 out=tmp_path / "pm")  # fmt: skip
    assert result.status == "ok", result.message
    html = result.html.read_text()
    assert "app/big on worker-1" in html and "the largest free set on one NUMA node is 6" in html
    assert "container main: cpu 8 → 6" in html and "schedule it on pool batch: worker-2" in html


def test_nodes_without_the_extended_resource_are_never_offered():
    snap = fleet()
    big = next(p for p in snap.pods if p.name == "big")
    gpu = dataclasses.replace(big.containers[0], requests={**big.containers[0].requests, "nvidia.com/gpu": "1"},
                              limits={**big.containers[0].limits, "nvidia.com/gpu": "1"})  # fmt: skip
    d = diagnose(snap, dataclasses.replace(big, containers=[gpu]))
    assert not any(r.kind == "another node" for r in d.remedies)  # worker-2 has no nvidia.com/gpu to give


def test_replicas_of_one_controller_are_explained_once(tmp_path):
    import json

    from tmnb.postmortem.evidence import open_evidence
    from tmnb.postmortem.rejections import diagnoses
    from tmnb.snapshot import save

    snap = fleet()
    big = next(p for p in snap.pods if p.name == "big")
    twin = dataclasses.replace(big, name="big-2", uid="uid-big-2")
    folder = tmp_path / "01-inventory"
    folder.mkdir()
    save(dataclasses.replace(snap, pods=[*snap.pods, twin]), folder / "snapshot.json.gz")
    (folder / "manifest.json").write_text(json.dumps({"notebook": "01-inventory.ipynb", "status": "ok"}))
    ((seen_in, d, alike),) = diagnoses(open_evidence(tmp_path))
    assert seen_in == "01-inventory" and d.pod == "app/big" and alike == ["app/big-2"]


def test_a_node_whose_kubelet_refused_to_start_gets_the_kubelets_words_and_the_file(tmp_path):
    import json

    import yaml

    from rollout.test_rollout_sandbox import fleet as sandbox_fleet
    from tmnb.postmortem.evidence import open_evidence
    from tmnb.postmortem.kubelet_log import start_refusals
    from tmnb.sources.resolve import open_snapshot, save_to_run
    from tmnb.twin.sandbox import Sandbox

    folder = tmp_path / "evidence" / "01-inventory"
    folder.mkdir(parents=True)
    with Sandbox(sandbox_fleet(), tmp_path / "run") as box:
        config = box.cluster.kubelets["w1"].root / "var/lib/kubelet/config.yaml"
        doc = yaml.safe_load(config.read_text())
        config.write_text(yaml.safe_dump({**doc, "topologyManagerPolicy": "single-numa"}))
        assert box.cluster.restart_kubelet("w1") is not None  # the kubelet refused
        kubeconfig = str(box.write_kubeconfig(tmp_path / "kubeconfig"))
        nodes = f"dir:{tmp_path / 'run' / 'nodes'}"
        save_to_run(open_snapshot("live", "", kubeconfig=kubeconfig, node_files=nodes), folder)
    (folder / "manifest.json").write_text(json.dumps({"notebook": "01-inventory.ipynb", "status": "ok"}))
    refused = start_refusals(open_evidence(tmp_path / "evidence"))
    assert list(refused["node"]) == ["w1"]
    (row,) = refused.to_dict("records")
    assert "single-numa" in row["kubelet said"] and row["fix"].startswith("/var/lib/kubelet/config.yaml")


# ------------------------------------------------------------------------------- scheduling context
def wide_on_the_latency_canary() -> tuple[Snapshot, Pod]:
    """The demo's staged failure on the embedded sample: a Guaranteed batch pod (no tolerations) bound by
    name to lat-icx-02, 40 CPUs where the largest free set on one NUMA node is 32, rejected by its
    single-numa-node policy. The general pool's nodes run the none policy and have the CPUs, so they admit
    it; gen-icx-02 among them is cordoned. The GPU, telco and 16-NUMA pools admit it too but are tainted
    against it (nvidia.com/gpu=present, dedicated=telco, dedicated=hpc)."""
    sample = load_sample()
    resources = {"cpu": "40", "memory": "1Gi"}
    wide = Pod(namespace="batch", name="wide-batch-0", uid="uid-wide", node="lat-icx-02", qos_class="Guaranteed",
               phase="Failed", created="2026-07-21T09:20:00Z", reason="TopologyAffinityError",
               message="Pod was rejected: Resources cannot be allocated with Topology locality",
               containers=[Container(name="main", requests=resources, limits=dict(resources))])  # fmt: skip
    return dataclasses.replace(sample, pods=[*sample.pods, wide]), wide


def test_06_never_suggests_the_cordoned_gen_icx_02_but_names_it_as_cordoned(tmp_path):
    """06-postmortem's diagnoses (the evidence folder as 01 leaves it) of a pod the general pool would take."""
    import json

    from tmnb.postmortem.evidence import open_evidence
    from tmnb.postmortem.rejections import diagnoses
    from tmnb.snapshot import save

    snap, _ = wide_on_the_latency_canary()
    folder = tmp_path / "01-inventory"
    folder.mkdir()
    save(snap, folder / "snapshot.json.gz")
    (folder / "manifest.json").write_text(json.dumps({"notebook": "01-inventory.ipynb", "status": "ok"}))
    (explained,) = [d for _, d, _ in diagnoses(open_evidence(tmp_path)) if d.pod == "batch/wide-batch-0"]
    elsewhere = [r for r in explained.remedies if r.kind == "another node"]
    assert [r.change for r in elsewhere] == ["schedule it on pool general: gen-icx-01, gen-icx-03"]
    assert elsewhere[0].note == "gen-icx-02 would admit it too, but is cordoned"


def test_remedies_never_offer_pools_tainted_against_the_pod():
    snap, wide = wide_on_the_latency_canary()
    offered = " ".join(r.change for r in diagnose(snap, wide).remedies)
    for pool in ("gpu", "telco", "numa16"):
        assert f"pool {pool}" not in offered


def test_a_tolerated_taint_is_no_obstacle():
    snap, wide = wide_on_the_latency_canary()
    gpu = Toleration(key="nvidia.com/gpu", operator="Exists", effect="NoSchedule")
    changes = [r.change for r in diagnose(snap, dataclasses.replace(wide, tolerations=[gpu])).remedies]
    assert "schedule it on pool gpu: gpu-h100-01, gpu-h100-02" in changes


def test_cordoned_and_tainted_nodes_are_offered_as_such_when_nothing_else_admits():
    """worker-2 and worker-3 would admit the pod; one is cordoned, the other tainted against it."""
    snap = fleet()
    w2 = dataclasses.replace(snap.node("worker-2"), unschedulable=True)
    w3 = dataclasses.replace(snap.node("worker-2"), name="worker-3", labels={"tmnb.dev/pool": "ml"},
                             taints=[Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")])  # fmt: skip
    d = diagnose_big(dataclasses.replace(snap, nodes=[snap.node("worker-1"), w2, w3]))
    elsewhere = [(r.change, r.note) for r in d.remedies if r.kind == "another node"]
    assert elsewhere == [
        ("schedule it on pool batch once uncordoned: worker-2",
         "cordoned now: whoever cordoned it says when it takes pods again"),
        ("tolerate nvidia.com/gpu=present:NoSchedule and schedule it on pool ml: worker-3",
         "the pool is tainted to keep other workloads off: agree with its owners first"),
    ]  # fmt: skip


def test_a_whatif_rejection_is_explained_in_the_state_the_replay_reached():
    """worker-1 runs the CPU manager without the Topology Manager and holds nothing today (NUMA 0: 6 free
    CPUs, NUMA 1: 8). Under single-numa-node after a drain, three pods of 6 CPUs come back in creation
    order: the first takes NUMA 0's six, the second six of NUMA 1's eight, and the third is refused with
    2 CPUs left on one NUMA node, which is what its explanation must count, not today's free CPUs."""
    from tmnb.analysis.diagnose import diagnose_whatif

    info = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))
    pods = [pod(n, cpu="6", created=f"2026-11-30T10:0{i}:00Z") for i, n in enumerate(("first", "second", "third"))]
    snap = snapshot([node("worker-1", kubelet=info)], pods)
    (d,) = diagnose_whatif(snap, "worker-1", {"topologyManagerPolicy": "single-numa-node"})
    assert (d.pod, d.reason, d.reproduced) == ("app/third", "TopologyAffinityError", True)
    assert d.message == "Resources cannot be allocated with Topology locality"
    assert "asks for 6 exclusive CPUs; the largest free set on one NUMA node is 2" in d.why
    assert "NUMA 0: 0 free, NUMA 1: 2 free" in d.why
    kinds = {r.kind: r.change for r in d.remedies}
    assert kinds["smaller request"] == "container main: cpu 6 → 2 (requests and limits)"
    assert kinds["free resources"] in ("move app/first off worker-1", "move app/second off worker-1")
    assert diagnose(snap, next(p for p in snap.pods if p.name == "third")).reproduced is False  # today it fits


@pytest.mark.parametrize(
    ("target", "mode"),
    [
        ({"topologyManagerPolicy": "single-numa-node"}, "drain"),
        ({"topologyManagerPolicy": "restricted", "topologyManagerScope": "pod"}, "drain"),
        ({"topologyManagerPolicy": "single-numa-node"}, "restart"),
    ],
)
def test_every_whatif_rejection_of_the_sample_is_explained_and_reproduced(target, mode):
    """The explanation's kubelet, started from what the replay's kubelet held just before the pod,
    rejects it as the replay did, for every rejection of the sample's what-ifs."""
    from tmnb.analysis.diagnose import diagnose_whatif
    from tmnb.analysis.whatif import whatif
    from tmnb.sources.embedded import load_sample

    sample = load_sample()
    frame, _ = whatif(sample, target, mode=mode, with_headroom=False)
    rejected = frame[~frame["admitted"]]
    assert len(rejected)  # the sample's story has rejections under each of these
    explained = [d for n in sorted(set(rejected["node"])) for d in diagnose_whatif(sample, n, target, mode=mode)]
    assert sorted(d.pod for d in explained) == sorted(f"{r.namespace}/{r.pod}" for r in rejected.itertuples())
    assert all(d.reproduced for d in explained), [(d.pod, d.why) for d in explained if not d.reproduced]
    assert [d.reason for d in explained] == [
        rejected.set_index(rejected["namespace"] + "/" + rejected["pod"]).loc[d.pod, "reason"] for d in explained
    ]
