"""03's verdicts tell nodes apart: a step taken once for the cluster is said once and counted on no node,
a node at the target has nothing to do, remedies speak of what the plan sets (or say which field to add
to the target), counts of one read as one, headroom's sizes do not depend on pod order, and a rejected
pod is explained as 06 explains it. Worked by hand on small fleets and on the sample fleet
(docs/sample-fleet.md)."""

import dataclasses
import random
import re

from factories import node, pod, settings, snapshot
from tmnb.analysis.explain import explanation_lines
from tmnb.analysis.readiness import assess, rejections, verdict
from tmnb.analysis.whatif import common_sizes
from tmnb.snapshot import Container, KubeletInfo
from tmnb.sources.embedded import load_sample

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8"}
SINGLE_NUMA = {"topologyManagerPolicy": "single-numa-node"}


def kubeadm(**values):
    return KubeletInfo(settings=settings(**STATIC, **values), kubeadm_managed=True)


def test_kubeadms_warning_is_one_step_for_the_cluster_not_an_action_on_every_node():
    """Two kubeadm nodes, a topology policy change that needs nothing else by hand: kubeadm rewrites the
    config file at its next upgrade on both (the change belongs in its ConfigMap: one step), so both
    are ready and the answer says the step once, naming both."""
    snap = snapshot([node("a", kubelet=kubeadm()), node("b", kubelet=kubeadm())])
    report = assess(snap, {"topologyManagerPolicy": "restricted"})
    assert set(report.lint["rule"]) == {"kubeadm-overwrites"}
    assert report.verdicts.set_index("node")["verdict"].to_dict() == {"a": "ready", "b": "ready"}
    assert set(report.plan["manual action required"]) == {""}
    answer = verdict(report)
    sections = dict(answer.sections)
    (once,) = sections["Once for the whole cluster"]
    assert once.startswith("**a**, **b** (kubeadm-overwrites)") and "kubelet-config ConfigMap" in once
    assert sections["Manual steps"] == []
    assert answer.tone == "warn" and "once for the whole cluster" in answer.headline


def test_on_the_sample_kubeadms_warning_leaves_the_verdicts_alone():
    """Under single-numa-node the sample's kubeadm nodes that change and need nothing else are ready."""
    report = assess(load_sample(), SINGLE_NUMA)
    verdicts = report.verdicts.set_index("node")["verdict"]
    for name in ("gen-icx-01", "lat-icx-01", "tel-epyc-02", "big-epyc-01"):
        assert verdicts[name] == "ready", name
    sections = dict(verdict(report).sections)
    assert not any("kubeadm-overwrites" in line for line in sections["Manual steps"])
    assert len([line for line in sections["Once for the whole cluster"] if "(kubeadm-overwrites)" in line]) == 1


def test_a_node_at_the_target_has_nothing_to_do():
    """'done' runs restricted already: nothing changes there, so nothing is to be done, and kubeadm has
    no local edit to overwrite; 'todo' changes."""
    snap = snapshot(
        [node("done", kubelet=kubeadm(topologyManagerPolicy="restricted")), node("todo", kubelet=kubeadm())],
        [pod("x", "done"), pod("y", "todo")],
    )
    report = assess(snap, {"topologyManagerPolicy": "restricted"})
    assert report.verdicts.set_index("node")["verdict"].to_dict() == {"done": "nothing to do", "todo": "ready"}
    assert set(report.lint.loc[report.lint["rule"] == "kubeadm-overwrites", "node"]) == {"todo"}
    assert "**1** nothing to do: done" in dict(verdict(report).sections)["Nodes"]


def test_the_samples_nodes_at_the_target_have_nothing_to_do():
    """lat-icx-02, lat-icx-03, tel-epyc-01 and gpu-h100-01 run single-numa-node already (the sample's
    settings); gpu-h100-01's old rejections stay on its row."""
    report = assess(load_sample(), SINGLE_NUMA)
    rows = report.verdicts.set_index("node")
    done = {"lat-icx-02", "lat-icx-03", "tel-epyc-01", "gpu-h100-01"}
    assert set(rows.index[rows["verdict"] == "nothing to do"]) == done
    assert not done & set(report.lint.loc[report.lint["rule"] == "kubeadm-overwrites", "node"])
    assert rows.loc["gpu-h100-01", "failing today"].startswith("3 pods, ")


def _remedy(report, rule, node_name):
    (text,) = report.lint.loc[(report.lint["rule"] == rule) & (report.lint["node"] == node_name), "remedy"]
    return text


def test_remedies_speak_of_what_the_plan_sets_or_name_the_field_to_add():
    """The sample under single-numa-node, which sets topologyManagerPolicy alone. spr-snc4-01 (16 NUMA
    nodes) runs max-allowable-numa-nodes, which the kubelet warns about and the node needs: keep it.
    gb200-01 (34 NUMA nodes) refuses a policy without it: add topologyManagerPolicyOptions to the target.
    tel-epyc-02's prefer-closest-numa-nodes does nothing under single-numa-node: nothing to change."""
    report = assess(load_sample(), SINGLE_NUMA)
    keep = _remedy(report, "topology.max-numa-above-default", "spr-snc4-01")
    assert keep.startswith("Keep it:") and "in the plan" not in keep
    add = _remedy(report, "topology.too-many-numa-nodes", "gb200-01")
    assert add.startswith("Add topologyManagerPolicyOptions to the target with max-allowable-numa-nodes")
    assert "add topologyManagerPolicyOptions to the target" in _remedy(
        report, "topology.prefer-closest-ineffective", "tel-epyc-02"
    )
    for remedy in report.lint["remedy"]:
        for field in re.findall(r"[Cc]orrect (\w+) in the plan|the plan's (\w+)", remedy):
            assert {f for f in field if f} <= set(SINGLE_NUMA), remedy


def test_a_remedy_on_a_field_the_plan_sets_speaks_of_the_plan():
    """The same gb200-01 under a target that sets topologyManagerPolicyOptions without the limit."""
    target = {**SINGLE_NUMA, "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}}
    report = assess(load_sample(), target)
    assert _remedy(report, "topology.too-many-numa-nodes", "gb200-01").startswith(
        "Set max-allowable-numa-nodes in the plan's topologyManagerPolicyOptions"
    )


def test_a_count_of_one_reads_as_one():
    """The sample's bigmem, numa16 and latency pools have one candidate each under single-numa-node."""
    report = assess(load_sample(), SINGLE_NUMA)
    canary = report.canary.set_index("pool")
    assert canary.loc["bigmem", "why"] == "the only candidate of the pool's most common shape"
    assert canary.loc["general", "why"].startswith("fewest Guaranteed pods among 2 candidates")
    text = verdict(report).markdown() + report.alert
    assert not re.search(r"\b1 (candidates|pods|nodes|findings|things)\b", text), text
    assert "among 1 candidate" not in text and "(s)" not in report.alert


def test_headroom_sizes_are_the_most_common_then_the_smallest():
    """The sample's Guaranteed single-container pods with whole CPUs: 18 of 4 CPU / 8Gi, then 6 each of
    2/4Gi, 6/8Gi, 8/16Gi, 24/96Gi and 30/128Gi: the ties go to the smaller sizes, whatever the pods' order."""
    sample = load_sample()
    expected = [("4", "8Gi"), ("2", "4Gi"), ("6", "8Gi")]
    assert common_sizes(sample) == expected
    shuffled = list(sample.pods)
    random.Random(7).shuffle(shuffled)
    for pods in (shuffled, list(reversed(sample.pods))):
        assert common_sizes(dataclasses.replace(sample, pods=pods)) == expected


def test_headroom_ties_by_size_on_a_small_fleet():
    """Two pods of 8 CPUs listed first, then two of 2 and two of 4: one count each, smallest first."""
    sizes = [("8", "16Gi"), ("8", "16Gi"), ("4", "8Gi"), ("2", "4Gi"), ("4", "8Gi"), ("2", "4Gi")]
    pods = [
        pod(f"p{i}", "a", containers=[Container(name="main", requests=r, limits=r)])
        for i, r in enumerate({"cpu": cpu, "memory": memory} for cpu, memory in sizes)
    ]
    assert common_sizes(snapshot([node("a")], pods), count=2) == [("2", "4Gi"), ("4", "8Gi")]


def _fleet_with_a_rejection():
    """b: static, reserved CPUs 0 and 8 (NUMA 0 keeps 6 CPUs, NUMA 1 all 8), four pods of 4 CPUs in
    creation order. Under single-numa-node big0 takes NUMA 0 (2 left), big1 and big2 NUMA 1 (0 left),
    and big3 finds 2 CPUs at most on one NUMA node. a: static and idle."""
    static = KubeletInfo(settings=settings(**STATIC))
    pods = [pod(f"big{i}", "b", cpu="4", created=f"2026-11-30T10:0{i}:00Z") for i in range(4)]
    return snapshot([node("a", kubelet=static), node("b", kubelet=static)], pods)


def test_03_explains_a_rejected_pod_as_06_does():
    report = assess(_fleet_with_a_rejection(), SINGLE_NUMA)
    (row,) = rejections(report).to_dict("records")
    assert (row["node"], row["pod"]) == ("b", "app/big3")
    assert row["reason"] == "TopologyAffinityError: Resources cannot be allocated with Topology locality"
    assert row["why"] == (
        "container main asks for 4 exclusive CPUs; the largest free set on one NUMA node is 2 (NUMA 0: 2 free, "
        "NUMA 1: 0 free); single-numa-node needs them on one NUMA node"
    )
    assert row["hints"] == "main CPU manager cpu: none: cannot fit"
    assert row["merge"] == "main: {nil not-preferred} → reject"
    assert row["would admit"].startswith("1. container main: cpu 4 → 2 (requests and limits) (checked on b)")
    assert "move app/big0 off b (checked on b): frees 4 exclusive CPUs" in row["would admit"]
    (block,) = dict(verdict(report).sections)["What blocks"]
    assert block.startswith("**b**: 1 pod would be rejected, first app/big3 (TopologyAffinityError): container")
    assert "**Would admit it:** container main: cpu 4 → 2 (requests and limits) (checked on b)." in block


def test_a_rejected_pods_explanation_as_text_lines():
    (explained,) = assess(_fleet_with_a_rejection(), SINGLE_NUMA).explained
    lines = explanation_lines(explained.diagnosis, ["app/big4", "app/big5"])
    assert lines[0] == "app/big3 on b: TopologyAffinityError: Resources cannot be allocated with Topology locality"
    assert lines[1].startswith("  why: container main asks for 4 exclusive CPUs")
    assert lines[2] == "  hints: main CPU manager cpu: none: cannot fit"
    assert lines[3] == "  merge: main: {nil not-preferred} → reject"
    assert lines[4] == "  would admit it (each checked with the model, best first):"
    assert lines[5] == "    1. container main: cpu 4 → 2 (requests and limits) (checked on b)"
    assert lines[-1] == "  refused the same way: 2 more pods of its controller: app/big4, app/big5"


def test_on_a_large_fleet_another_node_is_looked_for_among_each_pools_freest(monkeypatch):
    """Past ``FEW_NODES`` nodes, the "another node" remedy replays each pool's ``PER_POOL`` nodes with the
    most unrequested CPU, not every node: with one per pool, idle a (16 CPUs free) is checked, and c, which
    runs a 4-CPU pod, is not."""
    from tmnb.analysis import explain

    monkeypatch.setattr(explain, "FEW_NODES", 2)
    monkeypatch.setattr(explain, "PER_POOL", 1)
    snap = _fleet_with_a_rejection()
    snap = dataclasses.replace(
        snap,
        nodes=[*snap.nodes, node("c", kubelet=KubeletInfo(settings=settings(**STATIC)))],
        pods=[*snap.pods, pod("web", "c", cpu="4")],
    )
    (explained,) = assess(snap, SINGLE_NUMA).explained
    (elsewhere,) = [r for r in explained.diagnosis.remedies if r.kind == "another node"]
    assert elsewhere.change == "schedule it on other nodes of this pool: a"
