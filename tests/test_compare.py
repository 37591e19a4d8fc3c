"""Before/after comparison of snapshots: settings, containers matched across renamed pods,
alignment, verdicts, confounders, the fleet figure, and the notebook on a metrics file."""

import dataclasses
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from compare_factories import before_fleet, derive_after, fleet, latency_csv, same_versions
from conftest import ROOT
from factories import node, pod, settings, snapshot
from tmnb import plots
from tmnb.analysis import compare as cmp
from tmnb.analysis.compare.report import inputs
from tmnb.cli.run.runner import run
from tmnb.snapshot import Allocation, Device, DeviceAllocation, KubeletInfo, MemoryBlock, OwnerRef, Setting, save
from tmnb.twin.metrics import Timeline, workloads

GIB = 1 << 30


@pytest.fixture(scope="module")
def pair():
    before = before_fleet()
    return before, derive_after(before)


@pytest.fixture(scope="module")
def table(pair):
    return cmp.containers(*pair)


def by_owner(table):
    return {(r.owner, r.pod_before or r.pod_after): r for r in table.itertuples()}


# --- alignment of one allocation ----------------------------------------------------------------


def alloc(cpuset, exclusive=True, **kw):
    return Allocation(pod_uid="u", namespace="app", pod="p", container="main", cpuset=cpuset, exclusive=exclusive, **kw)


GPUS = [Device(resource="nvidia.com/gpu", id=f"gpu{i}", numa=[i]) for i in (0, 1)]


@pytest.mark.parametrize(
    ("allocation", "state", "why"),
    [
        (alloc("1-2,9"), "aligned", "CPUs on NUMA 0"),
        (alloc("3,4"), "cross-NUMA", "2 CPUs span NUMA 0,1 but fit in one zone"),
        (
            alloc("4,12", memory=[MemoryBlock(type="memory", size=GIB, numa=[0])]),
            "cross-NUMA",
            "memory on NUMA 0, CPUs on NUMA 1",
        ),
        (
            alloc("4,12", devices=[DeviceAllocation(resource="nvidia.com/gpu", ids=["gpu0"])]),
            "cross-NUMA",
            "nvidia.com/gpu on NUMA 0, CPUs on NUMA 1",
        ),
        (
            alloc(
                "4,12",
                memory=[MemoryBlock(type="hugepages-1Gi", size=GIB, numa=[1])],
                devices=[DeviceAllocation(resource="nvidia.com/gpu", ids=["gpu1"])],
            ),
            "aligned",
            "CPUs, hugepages-1Gi, nvidia.com/gpu on NUMA 1",
        ),
        (alloc("0-9"), "aligned", "CPUs on NUMA 0,1 (10 CPUs need 2 zones)"),
        (alloc("0-15", exclusive=False), "shared", "shared pool"),
    ],
)
def test_alignment(allocation, state, why):
    assert cmp.alignment(allocation, node(devices=GPUS))[:2] == (state, why)


def test_owner_of_pods():
    assert cmp.owner_of(pod("web-5d8c9-x")) == "Deployment/web-5d8c9-x"
    bare = pod("debug", owner=None)
    assert cmp.owner_of(bare) == "Pod/debug"
    rs = pod("api-6f7c-x", owner=OwnerRef(kind="ReplicaSet", name="api-6f7c"), labels={"pod-template-hash": "6f7c"})
    assert cmp.owner_of(rs) == "Deployment/api"
    assert cmp.owner_of(pod("pg-0", owner=OwnerRef(kind="StatefulSet", name="pg"))) == "StatefulSet/pg"


# --- the derived fleet: every verdict it should produce -------------------------------------------


def test_verdicts_across_a_single_numa_node_rollout(table):
    verdicts = {(r.namespace, r.owner, r.node_before): r.verdict for r in table.itertuples()}
    assert verdicts == {
        ("app", "Deployment/api", "w1"): "unchanged",
        ("app", "Deployment/api", "w2"): "unchanged",
        ("app", "Deployment/web", "w1"): "newly aligned",
        ("app", "Deployment/web", "w2"): "newly aligned",
        ("batch", "Job/report", "w3"): "gone",
        ("db", "StatefulSet/pg", "w3"): "unchanged",
        ("ml", "Deployment/big", "w3"): "now rejected",
        ("ml", "Deployment/train", "w2"): "newly aligned",
        ("web", "Deployment/nginx", "w1"): "unchanged",
    }


def test_renamed_replicas_are_paired_on_their_node(table):
    web = table[table["owner"] == "Deployment/web"].set_index("pod_before")
    assert web.loc["web-5d8c9-aaaaa", "node_after"] == "w1"
    assert web.loc["web-5d8c9-bbbbb", "node_after"] == "w2"
    assert web.loc["web-5d8c9-aaaaa", "pod_after"] != "web-5d8c9-aaaaa"
    assert web.loc["web-5d8c9-aaaaa", ["cpuset_before", "cpuset_after"]].tolist() == ["3,4", "4,12"]
    assert web.loc["web-5d8c9-aaaaa", ["numa_before", "numa_after"]].tolist() == ["0,1", "1"]
    train = table[table["owner"] == "Deployment/train"].iloc[0]
    assert train["why_after"] == "CPUs, memory, nvidia.com/gpu on NUMA 1"
    big = table[table["owner"] == "Deployment/big"].iloc[0]
    assert big["alignment_after"] == "rejected" and big["why_after"].startswith("TopologyAffinityError: Resources")


def test_lost_alignment_moved_and_flapping_rejections(pair):
    before, after = pair
    w1 = after.node("w1")
    api = next(a for a in w1.allocations if a.namespace == "app" and a.container == "api")
    spread = dataclasses.replace(api, cpuset="2-3,4", numa=[0, 1])
    nginx = next(p for p in after.pods if p.namespace == "web")
    big = next(p for p in after.pods if p.namespace == "ml" and p.phase == "Failed")
    replacements = [dataclasses.replace(big, name=f"big-5d8c9-r{i}", uid=f"r{i}") for i in range(3)]
    after = dataclasses.replace(
        after,
        nodes=[
            dataclasses.replace(w1, allocations=[spread if a is api else a for a in w1.allocations]),
            *after.nodes[1:],
        ],
        pods=[*(dataclasses.replace(p, node="w2") if p is nginx else p for p in after.pods), *replacements],
    )
    table = cmp.containers(before, after)
    verdict = {(r.owner, r.node_before, r.pod_after): r.verdict for r in table.itertuples()}
    assert verdict[("Deployment/api", "w1", api.pod)] == "lost alignment"
    assert verdict[("Deployment/nginx", "w1", nginx.name)] == "moved"
    summary = cmp.summary(table).set_index("verdict")
    assert summary.loc["now rejected", "containers"] == 4 and summary.loc["now rejected", "owners"] == 1
    assert list(summary.index) == list(cmp.VERDICTS)
    assert cmp.attention(table)["verdict"].tolist()[:5] == ["now rejected"] * 4 + ["lost alignment"]


def test_statefulset_pods_keep_their_name_across_nodes():
    sts = OwnerRef(kind="StatefulSet", name="pg")
    before = snapshot([node("a"), node("b")], [pod("pg-0", "a", owner=sts), pod("pg-1", "b", owner=sts)])
    after = snapshot([node("a"), node("b")], [pod("pg-0", "b", owner=sts, uid="x0"), pod("pg-1", "a", owner=sts)])
    pairs = cmp.containers(before, after)
    assert (pairs["pod_before"] == pairs["pod_after"]).all()
    assert pairs["verdict"].tolist() == ["moved", "moved"]  # no allocations recorded: alignment unknown


def test_replicas_on_one_node_pair_by_their_cpus_and_idle_pods_stay_unchanged():
    def replica(name, created, phase="Running"):
        return pod(
            name,
            uid=name,
            created=created,
            phase=phase,
            owner=OwnerRef(kind="ReplicaSet", name="w-1", controller_kind="Deployment", controller_name="w"),
        )

    def fleet_of(names, created, cpusets):
        allocs = [dataclasses.replace(alloc(c), pod_uid=n, pod=n) for n, c in zip(names, cpusets, strict=True)]
        pods = [replica(n, t) for n, t in zip(names, created, strict=True)]
        return snapshot([node(allocations=allocs)], [*pods, replica(f"{names[0]}-job", created[0], "Succeeded")])

    before = fleet_of(["w-a", "w-b"], ["2026-12-01T10:00:00Z", "2026-12-01T10:01:00Z"], ["1-2", "3,9"])
    after = fleet_of(["w-c", "w-d"], ["2026-12-01T12:00:00Z", "2026-12-01T12:01:00Z"], ["3,9", "1-2"])
    table = cmp.containers(before, after)
    assert table["verdict"].tolist() == ["unchanged"] * 3
    assert dict(zip(table["pod_before"], table["pod_after"], strict=True))["w-a"] == "w-d"


def test_fleet_views(pair, table):
    matrix = cmp.alignment_matrix(table)
    assert matrix.loc["cross-NUMA", "aligned"] == 3 and matrix.loc["aligned", "rejected"] == 1
    assert matrix.loc["shared", "(none)"] == 1 and int(matrix.to_numpy().sum()) == len(table) == 9
    headline = cmp.headline(*pair, cmp.settings_diff(*pair), table)
    assert "Settings changed on 3 node(s); 9 containers compared: 1 now rejected, 1 gone, 3 newly aligned" in headline
    assert cmp.alert(table, ["latency regression"]) == {
        "why": "1 container(s) now rejected; latency regression",
        "items": ["1 container(s) now rejected", "latency regression"],
    }
    assert cmp.alert(table[table["verdict"] == "unchanged"], []) is None


def test_alignment_figure(table):
    fig = plots.alignment_changes(table)
    bars, grid = fig.axes[:2]
    assert [t.get_text() for t in bars.get_yticklabels()] == list(cmp.VERDICTS)
    assert [p.get_width() for p in bars.patches] == [1, 0, 1, 3, 0, 0, 4]
    assert (bars.get_xlabel(), grid.get_xlabel(), grid.get_ylabel()) == (
        "containers",
        "alignment after",
        "alignment before",
    )
    assert "(9 containers)" in fig._suptitle.get_text()


# --- settings --------------------------------------------------------------------------------------


def test_settings_diff_values_sources_and_nodes():
    flag = Setting(value="single-numa-node", source="flag", detail="--topology-manager-policy")
    before = snapshot([node("a"), node("b"), node("gone")])
    b_after = node("b", kubelet=KubeletInfo(settings={**settings(), "topologyManagerPolicy": flag}))
    a_after = node("a", kubelet=KubeletInfo(settings=settings(topologyManagerPolicy="none")))
    after = snapshot([a_after, b_after, node("new", version="v1.36.2")])
    diff = cmp.settings_diff(before, after)
    rows = {(r.node, r.setting): r for r in diff.itertuples()}
    assert rows[("a", "topologyManagerPolicy")].change == "source only"
    assert (rows[("a", "topologyManagerPolicy")].source_before, rows[("a", "topologyManagerPolicy")].source_after) == (
        "default",
        "file",
    )
    b = rows[("b", "topologyManagerPolicy")]
    assert (b.before, b.after, b.source_after, b.change) == ("none", "single-numa-node", "flag", "value")
    assert rows[("gone", "(node)")].change == "node removed" and rows[("new", "(node)")].change == "node added"
    changes = cmp.settings_changes(diff)
    assert changes.iloc[0][["setting", "nodes"]].tolist() in (["(node)", 1], ["topologyManagerPolicy", 1])
    assert set(changes["change"]) == {"source only", "value", "node added", "node removed"}


def test_settings_changes_group_the_fleet(pair):
    changes = cmp.settings_changes(cmp.settings_diff(*pair))
    assert changes[["setting", "before", "after", "nodes", "examples"]].values.tolist() == [
        ["kubelet version", "v1.32.4", "v1.33.2", 3, "w1, w2, w3"],
        ["topologyManagerPolicy", "none", "single-numa-node", 3, "w1, w2, w3"],
    ]
    assert cmp.settings_changes(pd.DataFrame(columns=cmp.DIFF_COLUMNS)).empty


# --- confounders -----------------------------------------------------------------------------------


def confounders(before, after):
    return cmp.confounders(before, after, cmp.containers(before, after)).set_index("confounder")


def test_the_133_upgrade_removes_the_cfs_quota(pair):
    found = confounders(*pair)
    assert list(found.index) == ["CFS quota removed", "kubelet version changed", "running replicas changed"]
    quota = found.loc["CFS quota removed"]
    assert quota["detail"].startswith("6 container(s) lost their CFS quota: from kubelet 1.33")
    assert quota["affects"] == ["throttling", "latency"]
    assert {"namespace": "app", "container": "web"} in quota["scope"]
    assert {"namespace": "web", "container": "nginx"} not in quota["scope"]  # shared: keeps its quota
    assert "v1.32.4 → v1.33.2" in found.loc["kubelet version changed", "detail"]
    assert found.loc["running replicas changed", "scope"] == [
        {"namespace": "batch", "container": "main"},
        {"namespace": "ml", "container": "main"},
    ]


def test_no_quota_confounder_without_an_upgrade_or_with_the_gate_off():
    before = same_versions(before_fleet(), "v1.33.2")
    assert "CFS quota removed" not in confounders(before, derive_after(before)).index
    old = before_fleet()
    gate = Setting(value={"DisableCPUQuotaWithExclusiveCPUs": False}, source="file")
    after = derive_after(old)
    after = dataclasses.replace(
        after,
        nodes=[
            dataclasses.replace(n, kubelet=KubeletInfo(settings={**n.kubelet.settings, "featureGates": gate}))
            for n in after.nodes
        ],
    )
    assert "CFS quota removed" not in confounders(old, after).index


def test_becoming_exclusive_on_a_new_kubelet_is_a_confounder_too():
    shared = snapshot([node(allocations=[alloc("0-15", exclusive=False)])], [pod("p", uid="u", qos="Guaranteed")])
    pinned = snapshot([node(allocations=[alloc("1-2", exclusive=True)])], [pod("p", uid="u", qos="Guaranteed")])
    found = confounders(shared, pinned)
    assert {"CFS quota removed", "exclusive CPUs changed"} <= set(found.index)


# --- the notebook on a metrics file ------------------------------------------------------------------


def borderline(timeline: Timeline) -> pd.DataFrame:
    """One pod's per-minute p99, 3 % noise, 5.5 % higher after the change than before it."""
    rng = np.random.default_rng(3)
    change = timeline.rollout[1]
    minutes = pd.date_range(change - pd.Timedelta("2h"), change + pd.Timedelta("2h"), freq="1min")
    values = 0.1 * rng.normal(1, 0.03, len(minutes)) * np.where(minutes > change, 1.055, 1.0)
    stamps = [t.isoformat() for t in minutes]
    return pd.DataFrame(
        {"timestamp": stamps, "query": "latency_p99", "namespace": "app", "container": "maybe", "pod": "maybe-0"}
    ).assign(value=values)


@pytest.mark.notebook
def test_notebook_with_a_metrics_file(tmp_path):
    before = fleet()
    after = derive_after(before, kubelet=None)
    save(before, tmp_path / "before.json")
    save(after, tmp_path / "after.json")
    timeline = Timeline.recent()
    loads = workloads(before, after)
    csv = latency_csv(tmp_path / "latency.csv", timeline, loads)
    maybe = borderline(timeline)  # +5.5 % of one pod: past the threshold, its interval reaching back
    pd.concat([pd.read_csv(csv), maybe]).to_csv(csv, index=False)
    result = run(
        ROOT / "notebooks" / "05-compare.ipynb",
        [
            ("before", str(tmp_path / "before.json")),
            ("after", str(tmp_path / "after.json")),
            ("metrics_file", str(csv)),
            ("change", f"{timeline.rollout[1]:%Y-%m-%dT%H:%M:%SZ}"),
        ],
        out=tmp_path / "run",
    )
    glued = result.results
    expected = cmp.summary(cmp.containers(before, after)).set_index("verdict")["containers"].to_dict()
    assert glued["verdicts"] == expected
    assert glued["metrics_source"] == f"file {csv}"
    assert glued["metrics_problems"] == []
    latency = {r["group"]: r for r in glued["statistics"]}
    slower, faster, _, half, plus_ten = (f"namespace={w.namespace} container={w.container}" for w in loads)
    assert latency[slower]["verdict"] == "regression" and 20 < latency[slower]["change_pct"] < 30
    assert latency[faster]["verdict"] == "improvement"
    assert latency[half]["verdict"] == "below the threshold" and latency[half]["n_before"] > 100  # +2.5 %: real, small
    assert latency[plus_ten]["verdict"] == "regression"
    assert sorted(line.split(":")[0] for line in glued["regressions"]) == sorted(
        f"latency_p99 {g}" for g in (slower, plus_ten)
    )
    assert result.status == "alert" and slower in result.message and half not in result.message
    (possible,) = glued["possible_regressions"]
    assert possible.startswith("latency_p99 namespace=app container=maybe: +") and "maybe" not in result.message
    html = result.html.read_text()
    # in the verdict block at the top of the report, before the detail
    assert html.index("possible regression</strong>") < html.index("container=maybe") < html.index("Kubelet settings")
    assert set(glued["figures"]) == {
        "alignment-changes.png",
        "latency_p99-over-time.png",
        "latency_p99-distribution.png",
    }
    assert all((result.folder / f).stat().st_size > 5000 for f in glued["figures"])


# --- the notebook on its defaults: the sample pair, its journal and its metrics ------------------


@pytest.mark.notebook
def test_notebook_defaults_compare_the_sample_pair_with_its_metrics(tmp_path):
    result = run(ROOT / "notebooks" / "05-compare.ipynb", [], out=tmp_path / "run")
    glued = result.results
    verdicts = glued["verdicts"]
    assert verdicts["moved"] >= 10 and verdicts["newly aligned"] >= 1 and verdicts["now rejected"] >= 2
    csv = tmp_path / "run" / "sample-metrics.csv.gz"
    assert glued["metrics_source"] == f"file {csv}" and csv.is_file()
    assert (tmp_path / "run" / "sample-journal.jsonl").is_file()
    stats = {(r["query"], r["group"]): r for r in glued["statistics"]}
    vllm, encoder = "namespace=ml-inference container=vllm", "namespace=ml-training container=encoder"
    assert stats[("latency_p99", vllm)]["verdict"] == "regression"
    assert stats[("latency_p99", encoder)]["verdict"] == "improvement"
    # the executors run on big-epyc-01 only, which the change did not touch: listed apart
    apart = {(r["query"], r["group"]): r for r in glued["untouched_statistics"]}
    executor = ("latency_p99", "namespace=analytics container=executor")
    assert executor not in stats and apart[executor]["verdict"] == "no significant change"
    assert {f"{s}-over-time.png" for s in ("cpu_usage", "latency_p99")} <= set(glued["figures"])
    assert {"latency_p99-distribution.png", "alignment-changes.png"} <= set(glued["figures"])
    assert not any(f.startswith("cpu_throttling") for f in glued["figures"])  # 0 throughout: a sentence
    assert "cpu_throttling: 0 in every sample of both windows" in result.html.read_text()
    assert result.status == "alert" and f"latency_p99 {vllm}" in result.message
    assert "embedded sample pair" in result.html.read_text()


def test_auto_inputs_mean_nothing_for_other_snapshots(tmp_path):
    got = inputs("a.json", "b.json", change="auto", metrics_file="auto", prometheus_url="", out_dir=str(tmp_path))
    assert (got.change, got.journal, got.metrics_file, got.note) == ("", "", "", "")
    assert list(tmp_path.iterdir()) == []
    mine = inputs("sample", "sample-after", change="j.jsonl", metrics_file="m.csv", prometheus_url="",
                  out_dir=str(tmp_path))  # fmt: skip
    assert (mine.journal, mine.metrics_file) == ("j.jsonl", "m.csv")
    timed = inputs("a", "b", change="2026-12-03T17:17:00Z", metrics_file="", prometheus_url="", out_dir="x")
    assert (timed.change, timed.journal) == ("2026-12-03T17:17:00Z", "")  # a time names no journal


# --- containers without an allocation -------------------------------------------------------------


def _unallocated(kubelet_settings: dict, pool: str | None, qos: str, cpu: str) -> str:
    n = node("n1", "v1.36.2", kubelet=KubeletInfo(settings=settings(**kubelet_settings)))
    n = dataclasses.replace(n, shared_pool=pool)
    p = pod("p-0", "n1", cpu, qos=qos)
    side = cmp.containers(snapshot([n], [p]), snapshot([n], [p])).iloc[0]
    return f"{side['alignment_before']}: {side['why_before']}"


def test_a_container_without_allocation_says_why():
    static = {"cpuManagerPolicy": "static"}
    assert _unallocated({"cpuManagerPolicy": "none"}, None, "Guaranteed", "2").startswith(
        "shared: cpuManagerPolicy none"
    )
    assert _unallocated(static, None, "Guaranteed", "2") == "unknown: no cpu_manager_state read on this node"
    assert _unallocated(static, "0-3", "Burstable", "500m").startswith("shared: shared pool")
    assert _unallocated(static, "0-3", "Guaranteed", "500m").startswith("shared: shared pool")
    assert _unallocated(static, "0-3", "Guaranteed", "2").startswith("unknown: Guaranteed with whole CPUs")


def test_signals_of_workloads_the_change_did_not_touch_are_apart_and_never_alert(tmp_path):
    """The change touched n1 only: vault ran there (touched), encoder only on n2 (apart), and a
    group the container table does not know stays with the touched ones (no alert is dropped)."""
    from tmnb.analysis.compare.report import by_reach

    table = pd.DataFrame(
        {
            "namespace": ["payments", "ml-training"],
            "owner": ["vault", "encoder"],
            "container": ["vault", "encoder"],
            "node_before": ["n1", "n2"],
            "node_after": ["n1", None],
        }
    )
    diff = pd.DataFrame({"node": ["n1", "n2"], "change": ["changed", "source only"]})
    compared = pd.DataFrame(
        {
            "namespace": ["payments", "ml-training", "other"],
            "container": ["vault", "encoder", "x"],
            "verdict": "regression",
        }
    )
    near, apart = by_reach(compared, table, diff, ["namespace", "container"])
    assert list(near["container"]) == ["vault", "x"] and list(apart["container"]) == ["encoder"]
    near, apart = by_reach(compared, table, diff, ["namespace", "app"])
    assert len(near) == 3 and apart.empty


def test_the_answer_says_first_what_the_metrics_are_and_keeps_untouched_regressions_apart():
    from tmnb.analysis.compare import verdict_block

    table = pd.DataFrame(columns=cmp.CONTAINER_COLUMNS)
    diff = pd.DataFrame({"node": ["n1"], "change": ["changed"]})
    block = verdict_block(
        table,
        diff,
        evidence="/e",
        metrics=([], [], []),
        about=["The application metrics are synthetic.", ""],
        elsewhere=["latency_p99 container=encoder: +15.1%"],
    )
    sections = dict(block.sections)
    assert block.sections[0] == ("Read this first", ["The application metrics are synthetic."])
    assert sections["Application metrics"][-1].startswith("**on nodes the change did not touch** (")
    assert block.tone == "ok"


def plan_of_a_change(folder: Path, change_id: str) -> None:
    """The plan a rollout keeps beside its journal (a canary of the sample, planned as 04 plans it)."""
    from tmnb.analysis.readiness import assess
    from tmnb.rollout.plan import build_plan, plan_json
    from tmnb.sources.embedded import load_sample

    snap = load_sample()
    target = {"topologyManagerPolicy": "restricted"}
    plan = build_plan(snap, assess(snap, target), change_id=change_id, canary="gen-icx-01", waves=1)
    (folder / "plan.json").write_text(plan_json(plan))


def test_the_next_command_after_a_rollout_runs_as_printed(tmp_path, capsys):
    """A clean comparison with the change's journal names ``tmnb rollout status`` on its state folder,
    which runs from anywhere; a journal ``status`` cannot read (another name) gets the postmortem instead."""
    import shlex

    from printed_commands import problems
    from tmnb.analysis.compare import verdict_block
    from tmnb.cli.main import main
    from tmnb.rollout.journal import Journal

    table = pd.DataFrame(columns=cmp.CONTAINER_COLUMNS)
    diff = pd.DataFrame({"node": ["n1"], "change": ["changed"]})
    journal = tmp_path / "state" / "journal.jsonl"
    journal.parent.mkdir()
    Journal(journal, "tm-1").record("n1", "apply", "done", result="written")
    (alone,) = verdict_block(table, diff, evidence=str(tmp_path), journal=str(journal), metrics=([], [], [])).commands
    assert alone.startswith("tmnb run 06-postmortem")  # a journal without its plan: status could not read it
    plan_of_a_change(journal.parent, "tm-1")
    (status,) = verdict_block(table, diff, evidence=str(tmp_path), journal=str(journal), metrics=([], [], [])).commands
    assert status.startswith("tmnb rollout status --change-id tm-1 --state-dir /") and problems(status) == []
    assert main(shlex.split(status)[1:]) == 0 and capsys.readouterr().out.startswith("tm-1: ")
    other = journal.rename(tmp_path / "state" / "sample-journal.jsonl")
    (then,) = verdict_block(table, diff, evidence=str(tmp_path), journal=str(other), metrics=([], [], [])).commands
    assert then == f"tmnb run 06-postmortem -p evidence {tmp_path.resolve()}" and problems(then) == []
