import pytest

from factories import node, pod, settings, snapshot
from tmnb.analysis.readiness import assess, lint_by_rule, rejected_first, results, summary
from tmnb.errors import InputError
from tmnb.snapshot import KubeletInfo, Taint

STATIC = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))


def fleet():
    """a: static, one 2-CPU pod (ready). b: static, four 4-CPU pods (the fourth is rejected under
    single-numa-node). c: CPU manager none (the plan changes nothing on it but warns). d: static,
    idle, NotReady (never the canary)."""
    pods = [pod("small", "a", cpu="2")]
    pods += [pod(f"big{i}", "b", cpu="4", created=f"2026-11-30T10:0{i}:00Z") for i in range(4)]
    pods += [pod("web", "c", cpu="500m", qos="Burstable")]
    return snapshot(
        [node("a", kubelet=STATIC), node("b", kubelet=STATIC), node("c"), node("d", kubelet=STATIC, ready=False)], pods
    )


def test_verdicts_plan_and_canary():
    report = assess(fleet(), {"topologyManagerPolicy": "single-numa-node"})
    verdict = report.verdicts.set_index("node")["verdict"].to_dict()
    assert verdict == {"a": "ready", "b": "will reject pods", "c": "ready", "d": "ready"}
    assert report.verdicts.set_index("node").loc["b", "first rejection"] == "app/big3: TopologyAffinityError"
    plan = report.plan.set_index("node")
    assert plan.loc["a", "current"] == "none" and plan.loc["a", "target"] == "single-numa-node"
    # One pool, one shape: the Ready node with the fewest Guaranteed pods that rejects nothing.
    assert report.canary.loc[0, "canary"] == "c"
    assert "1 pod would be rejected" in report.alert
    assert rejected_first(report.pods).loc[0, "pod"] == "big3"
    assert "**1** will reject pods" in summary(report)


def test_results_are_what_the_run_hands_its_scheduler():
    """The fleet above under single-numa-node: b rejects big3, c is the canary of the one pool
    (factories' "general"), no lint rule fires."""
    report = assess(fleet(), {"topologyManagerPolicy": "single-numa-node"})
    assert results(report, "/run/snapshot.json.gz") == {
        "verdicts": {"a": "ready", "b": "will reject pods", "c": "ready", "d": "ready"},
        "canary": {"general": "c"},
        "blockers": 0,
        "rejected": 1,
        "snapshot": "/run/snapshot.json.gz",
        "alert": {"why": "1 pod would be rejected"},
    }


def test_results_without_an_alert_have_no_alert_and_count_blockers():
    quiet = assess(snapshot([node("a", kubelet=STATIC)], [pod("small", "a", cpu="2")]), {"topologyManagerScope": "pod"})
    assert "alert" not in results(quiet, "s") and results(quiet, "s")["rejected"] == 0
    refused = assess(fleet(), {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}})
    assert results(refused, "s")["blockers"] == 1


def test_policy_change_needs_action_with_manual_steps():
    report = assess(fleet(), {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8"})
    verdict = report.verdicts.set_index("node")["verdict"]
    assert verdict["c"] == "needs action"
    manual = report.plan.set_index(["node", "setting"]).loc[("c", "cpuManagerPolicy"), "manual action required"]
    assert "move /var/lib/kubelet/cpu_manager_state aside" in manual
    assert "finding(s)" not in report.alert  # warnings are below fail_on=blocker (b still over-commits CPUs)


def test_kubelet_refusal_is_needs_action_and_alerts():
    report = assess(fleet(), {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}})
    verdict = report.verdicts.set_index("node")["verdict"]
    assert verdict["c"] == "needs action"
    assert "the kubelet would not start on 1 node" in report.alert
    assert "1 finding at or above blocker" in report.alert


def test_fail_on_lowers_the_alert_threshold():
    report = assess(fleet(), {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8"}, fail_on="warning")
    assert "at or above warning" in report.alert


@pytest.mark.parametrize(
    ("kwargs", "where"),
    [({"target": {}}, "target"), ({"fail_on": "fatal"}, "fail_on"), ({"mode": "reboot"}, "mode")],
)
def test_bad_parameters(kwargs, where):
    args = {"target": {"topologyManagerPolicy": "restricted"}, **kwargs}
    with pytest.raises(InputError) as err:
        assess(fleet(), args.pop("target"), **args)
    assert err.value.where == where


def test_nodes_without_topology_get_an_unknown_verdict():
    snap = fleet()
    snap = type(snap)(**{**snap.__dict__, "nodes": [*snap.nodes, node("e", cpus=[], numa=[], kubelet=STATIC)]})
    report = assess(snap, {"topologyManagerPolicy": "restricted"})
    assert report.verdicts.set_index("node").loc["e", "verdict"] == "unknown"
    assert "**1** unknown" in summary(report)


def test_the_canary_is_a_node_the_change_changes():
    already = KubeletInfo(
        settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8", topologyManagerPolicy="restricted")
    )
    snap = snapshot([node("done", kubelet=already), node("todo", kubelet=STATIC)], [pod("x", "todo", cpu="2")])
    report = assess(snap, {"topologyManagerPolicy": "restricted"})
    assert report.canary.loc[0, "canary"] == "todo"  # "done" has fewer Guaranteed pods but nothing to change
    report = assess(snapshot([node("done", kubelet=already)]), {"topologyManagerPolicy": "restricted"})
    assert report.canary.loc[0, "canary"] == "" and "does not change" in report.canary.loc[0, "why"]


def test_assess_builds_each_nodes_plan_once(monkeypatch):
    import tmnb.replay.plan as plan_module

    calls: list[str] = []
    real = plan_module.plan_for

    def counting(node, target):
        calls.append(node.name)
        return real(node, target)

    monkeypatch.setattr(plan_module, "plan_for", counting)
    from tmnb.sources.embedded import load_sample

    snapshot = load_sample()
    report = assess(snapshot, {"topologyManagerPolicy": "restricted"})
    assert sorted(calls) == sorted(n.name for n in snapshot.nodes)
    assert set(report.plans) == {n.name for n in snapshot.nodes}


def test_lint_by_rule_names_each_pitfall_once_with_its_nodes():
    """The sample: kubeadm's warning on many nodes is one row counting them, the blocker first."""
    from tmnb.sources.embedded import load_sample

    report = assess(load_sample(), {"topologyManagerPolicy": "single-numa-node"})
    table = lint_by_rule(report.lint)
    assert table["rule"].is_unique and table["nodes"].sum() == len(report.lint)
    assert table.iloc[0]["severity"] == "blocker"
    kubeadm = table[table["rule"] == "kubeadm-overwrites"].iloc[0]
    assert kubeadm["nodes"] == (report.lint["rule"] == "kubeadm-overwrites").sum() > 5
    assert kubeadm["for example"].endswith(f"and {kubeadm['nodes'] - 5} more")
    assert lint_by_rule(report.lint.iloc[0:0]).empty


def test_the_canary_never_has_a_blocker_or_a_kubelet_that_refuses_the_target():
    """On the sample, single-numa-node: gb200-01's kubelet refuses (34 NUMA nodes, the Topology Manager's
    limit is 8), so its pool has no canary and says why; every pick has no blocker and a kubelet that starts."""
    from tmnb.analysis.readiness import verdict
    from tmnb.sources.embedded import load_sample

    report = assess(load_sample(), {"topologyManagerPolicy": "single-numa-node"})
    canary = report.canary.set_index("pool")
    assert canary.loc["gb200", "canary"] == ""
    assert canary.loc["gb200", "why"] == (
        "no node of the pool's most common shape can be the canary: gb200-01: its kubelet would refuse the target "
        "(unsupported on machines with more than 8 NUMA Nodes); blocker: topology.too-many-numa-nodes"
    )
    blocked = set(report.lint.loc[report.lint["severity"] == "blocker", "node"])
    picks = [c for c in report.canary["canary"] if c]
    assert picks and not blocked & set(picks)
    assert all(not report.steps[c].refused for c in picks)
    (command,) = verdict(report).commands
    assert f"-p canary {picks[0]}" in command and "gb200-01" not in command


def test_with_no_node_that_can_be_the_canary_03_says_so_and_prints_no_04_command():
    """Every kubelet here is 1.32 under a 1.36 API server: outside the supported skew, a blocker on each."""
    from tmnb.analysis.readiness import verdict

    old = [node(name, version="v1.32.4", kubelet=STATIC) for name in ("a", "b")]
    report = assess(snapshot(old, [pod("x", "a")]), {"topologyManagerPolicy": "restricted"})
    assert report.canary["canary"].tolist() == [""]
    assert report.not_canary == {"a": "blocker: version-skew", "b": "blocker: version-skew"}
    answer = verdict(report)
    assert answer.commands == [] and answer.tone == "stop"  # the blockers speak first
    assert any("No node can be the canary" in line for _, lines in answer.sections for line in lines)
    unchanged = assess(snapshot([node("a", kubelet=STATIC)]), {"cpuManagerPolicy": "static"})
    answer = verdict(unchanged)
    assert answer.commands == [] and answer.headline.startswith("Nothing to roll out yet: no node can be the canary")
    assert any("No node can be the canary" in line for _, lines in answer.sections for line in lines)


def test_the_04_command_carries_the_change_03_checked_as_04_reads_it():
    """Strings YAML reads as another type ("true" of an option, "0" of a CPU list) stay strings in the
    printed command, once the shell and ``tmnb run`` have read it (nested quotes did not)."""
    from printed_commands import problems, typed
    from tmnb.analysis.readiness import verdict

    target = {
        "topologyManagerPolicy": "restricted",
        "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
        "reservedSystemCPUs": "0",
    }
    (command,) = verdict(assess(fleet(), target)).commands
    assert typed(command) == {"target": target, "nodes": ["c"], "canary": "c"}
    assert problems(command) == []


def test_an_upgrade_is_left_to_the_node_pipeline_and_04_rolls_out_the_configuration():
    """04 refuses kubeletVersion (a rollout changes configuration, not binaries): 03 says to upgrade the
    kubelet first and hands 04 the rest of the change, or nothing when the change is the upgrade alone."""
    from printed_commands import typed
    from tmnb.analysis.readiness import verdict

    older = snapshot([node(n, version="v1.35.2", kubelet=STATIC) for n in ("a", "b")], [pod("x", "a", cpu="2")])
    both = verdict(assess(older, {"kubeletVersion": "1.36", "topologyManagerScope": "pod"}))
    (command,) = both.commands
    assert typed(command)["target"] == {"topologyManagerScope": "pod"}
    upgrade = "Upgrade the kubelet to 1.36 with your node image or package pipeline, canary first"
    assert any(line.startswith(upgrade) for line in dict(both.sections)["What to do next"])
    alone = verdict(assess(older, {"kubeletVersion": "1.36"}))
    assert alone.commands == [] and any(line.startswith(upgrade) for line in dict(alone.sections)["What to do next"])


def test_every_node_needing_action_is_named_on_top_and_old_failures_on_their_node():
    """The sample under single-numa-node: gen-icx-03 needs action for a manual step (its kubelet is
    two minors behind; a warning, below fail_on), so the answer on top names it; gpu-h100-01 has
    three pods its kubelet refused before any change, which its row and the top say."""
    from tmnb.analysis.readiness import lint_per_node, verdict
    from tmnb.sources.embedded import load_sample

    report = assess(load_sample(), {"topologyManagerPolicy": "single-numa-node"})
    sections = dict(verdict(report).sections)
    named = " ".join(sections["What blocks"] + sections["Manual steps"])
    acting = report.verdicts[report.verdicts["verdict"] == "needs action"]["node"]
    assert "gen-icx-03" in set(acting)
    assert all(f"**{node}**" in named for node in acting), (list(acting), named)
    assert any(line.startswith("**gen-icx-03** (version-skew)") for line in sections["Manual steps"])
    rows = report.verdicts.set_index("node")
    assert rows.loc["gpu-h100-01", "failing today"].startswith("3 pods, TopologyAffinityError: ml-inference/")
    assert rows.loc["lat-icx-01", "failing today"] == ""
    assert [line for line in sections["Nodes"] if "failing today" in line] == [
        f"**gpu-h100-01** ({rows.loc['gpu-h100-01', 'verdict']}): failing today, before any change: "
        + rows.loc["gpu-h100-01", "failing today"]
    ]
    per_node = lint_per_node(report.lint)
    assert "remedy" not in per_node.columns and len(per_node) == len(report.lint)
    skew = per_node[per_node["rule"] == "version-skew"]
    assert list(skew["explanation where it differs per node"]) == [""] * len(skew)


def test_the_admission_table_names_pods_without_their_uid():
    report = assess(fleet(), {"topologyManagerPolicy": "single-numa-node"})
    shown = rejected_first(report.pods)
    assert "uid" in report.pods.columns and "uid" not in shown.columns
    assert list(shown["pod"])[:1] == ["big3"] and len(shown) == len(report.pods)


def test_the_canary_is_not_cordoned_nor_tainted_unlike_its_pool():
    """Three general nodes, the fewest Guaranteed pods on a (none), then b (one), then c (two): a is
    cordoned and b carries a maintenance taint the others do not, so c is the canary. A taint every
    node of a pool shares (the GPU pool's) is the pool's own, which its workloads tolerate."""
    maintenance = Taint(key="maintenance", value="disk", effect="NoSchedule")
    gpu = Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule")
    nodes = [node("a", kubelet=STATIC, unschedulable=True), node("b", kubelet=STATIC, taints=[maintenance]),
             node("c", kubelet=STATIC)]  # fmt: skip
    gpus = [node(f"g{i}", kubelet=STATIC, taints=[gpu], labels={"tmnb.dev/pool": "gpu"}) for i in (1, 2)]
    pods = [pod("b1", "b"), pod("c1", "c"), pod("c2", "c"), pod("g", "g1")]
    report = assess(snapshot([*nodes, *gpus], pods), {"topologyManagerPolicy": "restricted"})
    assert report.not_canary == {
        "a": "cordoned",
        "b": "tainted maintenance=disk:NoSchedule, unlike the rest of its pool: its pods do not land there",
    }
    assert report.canary.set_index("pool")["canary"].to_dict() == {"general": "c", "gpu": "g2"}
