"""Committed notebooks are clean (no outputs, one parameters cell, thin) and really run."""

import ast
import csv
import json

import nbformat
import pytest

from conftest import ROOT
from tmnb.cli.run.params import declared_parameters
from tmnb.cli.run.runner import run
from tmnb.snapshot import load

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
MAX_CELL_LINES = 15
#: What makes a cell logic rather than a call into tmnb: branches, loops, handlers, context managers,
#: definitions, lambdas and comprehensions (ternaries and ``match`` are branches too).
CONTROL_FLOW = (
    ast.If, ast.IfExp, ast.Match, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.TryStar, ast.With, ast.AsyncWith,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda,
    ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp,
)  # fmt: skip


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_committed_clean(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert nb.metadata["kernelspec"]["name"] == "python3"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(not c.outputs and c.execution_count is None for c in code), "strip outputs before committing"
    assert sum("parameters" in c.metadata.get("tags", []) for c in nb.cells) == 1
    for cell in (c for c in code if "parameters" not in c.metadata.get("tags", [])):
        assert len(cell.source.splitlines()) <= MAX_CELL_LINES, f"move logic into tmnb: {cell.source[:60]!r}"
    assert declared_parameters(path), "the parameters cell declares nothing"


def control_flow(source: str) -> list[str]:
    """The control-flow constructs in a cell's code, by name, in the order they appear."""
    return [type(node).__name__ for node in ast.walk(ast.parse(source)) if isinstance(node, CONTROL_FLOW)]


@pytest.mark.parametrize(
    ("source", "found"),
    [
        ("show(report.plan, 'plan', out_dir)", []),
        ("figures += plots.show_nodes(occ, held, snap, detail, out_dir)", []),
        ("x = a if b else c", ["IfExp"]),
        ("for n in nodes:\n    draw(n)", ["For"]),
        ("names = [f.name for f in figures]", ["ListComp"]),
        ("with open(p) as f:\n    f.read()", ["With"]),
        ("try:\n    go()\nexcept Exception:\n    pass", ["Try"]),
        ("key = lambda r: r[0]", ["Lambda"]),
        ("def helper():\n    return 1", ["FunctionDef"]),
    ],
)
def test_control_flow_is_recognised(source, found):
    assert control_flow(source) == found


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_cells_carry_no_control_flow(path):
    """Logic lives in tmnb, where it is tested; a cell calls it and shows the result."""
    nb = nbformat.read(path, as_version=4)
    for cell in (c for c in nb.cells if c.cell_type == "code"):
        found = control_flow(cell.source)
        assert not found, f"move logic into tmnb ({', '.join(found)}): {cell.source[:60]!r}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_sees_every_declared_parameter(path):
    """papermill warns 'Passed unknown parameter' for a declaration its inspection cannot read
    (a '=' in the comment, a '|' in the annotation); `papermill --help-notebook` would omit it too."""
    import papermill

    assert set(papermill.inspect_notebook(str(path))) == set(declared_parameters(path))


def test_parameter_choices_are_the_ones_the_code_accepts():
    from typing import get_args

    from tmnb.analysis.lint import Severity
    from tmnb.replay.node_input import Mode as WhatifMode
    from tmnb.rollout.executors import EXECUTORS
    from tmnb.rollout.run import Mode as RolloutMode

    readiness = declared_parameters(ROOT / "notebooks" / "03-readiness.ipynb")
    rollout = declared_parameters(ROOT / "notebooks" / "04-rollout.ipynb")
    assert readiness["mode"]["choices"] == list(get_args(WhatifMode))
    assert set(readiness["fail_on"]["choices"]) == set(get_args(Severity))
    assert rollout["mode"]["choices"] == list(get_args(RolloutMode))
    assert rollout["executor"]["choices"] == list(EXECUTORS)
    for path in NOTEBOOKS:
        for name, spec in declared_parameters(path).items():
            if "choices" in spec:
                assert ast.literal_eval(spec["default"]) in spec["choices"], f"{path.name}: {name}"


@pytest.mark.notebook
def test_inventory_on_the_sample(tmp_path):
    result = run(ROOT / "notebooks" / "01-inventory.ipynb", out=tmp_path / "run")
    assert result.status == "ok"
    checklist = result.results["checklist"]
    assert len(checklist) == 7
    assert checklist["Inventory stored in versioned form"] == "done"
    assert checklist["NUMA layout captured for every node type"] == "done"
    snap = load(result.results["snapshot"])
    assert len(snap.nodes) == result.results["nodes"] >= 12
    assert len(snap.pods) == result.results["pods"] >= 150
    manifest = json.loads(result.manifest.read_text())
    assert "snapshot.json.gz" in manifest["files"]
    html = result.html.read_text()
    assert "Effective kubelet settings" in html and "⚑flag" in html
    # the sample runs 1.34 (gen-icx-03) and 1.36: both minors, and what differs between them
    assert "Kubelet minors" in html and "MemoryManager gate" in html
    # gen-icx-02 is cordoned, the GPU pool tainted: the scheduling context is on the page and in its CSV
    rows = {r["node"]: r for r in csv.DictReader((result.folder / "tables" / "scheduling.csv").open())}
    assert rows["gen-icx-02"]["cordoned"] == "yes, since 2026-07-21T04:30:00Z"
    assert rows["gpu-h100-01"]["taints"] == "nvidia.com/gpu=present:NoSchedule"
    assert "Cordons and taints" in html and "dedicated=latency:NoSchedule" in html


@pytest.mark.notebook
def test_inventory_with_a_node_selector_and_a_snapshot_file(tmp_path):
    from tmnb.snapshot import save
    from tmnb.sources.embedded import load_sample

    sample = load_sample()
    pool_key = "tmnb.dev/pool"
    pool = sample.nodes[0].labels[pool_key]
    save(sample, tmp_path / "in.json.gz")
    result = run(
        ROOT / "notebooks" / "01-inventory.ipynb",
        [("source", str(tmp_path / "in.json.gz")), ("node_selector", f"{pool_key}={pool}")],
        out=tmp_path / "run",
    )
    expected = sum(n.labels.get(pool_key) == pool for n in sample.nodes)
    assert result.results["nodes"] == expected < len(sample.nodes)


@pytest.mark.notebook
def test_occupancy_on_the_sample(tmp_path):
    result = run(ROOT / "notebooks" / "02-numa-occupancy.ipynb", [("nodes", "[tel-epyc-01]")], out=tmp_path / "run")
    assert result.results["detail_nodes"] == ["tel-epyc-01"]
    pngs = sorted(p.name for p in tmp_path.joinpath("run").glob("*.png"))
    assert (
        pngs
        == sorted(result.results["figures"])
        == ["fleet-cpu.png", "fleet-memory.png", "tel-epyc-01-cpu-map.png", "tel-epyc-01-numa.png"]
    )
    assert "tmnb.dev/pool" not in result.results["pools"] and len(result.results["pools"]) >= 4


@pytest.mark.notebook
def test_readiness_alerts_on_the_sample(tmp_path):
    from tmnb.cli.main import main

    code = main(
        [
            "run",
            str(ROOT / "notebooks" / "03-readiness.ipynb"),
            "--out",
            str(tmp_path / "run"),
            "-p",
            "target",
            "{topologyManagerPolicy: single-numa-node, topologyManagerScope: pod}",
        ]
    )
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    results = manifest["results"]
    assert code == 3 and manifest["status"] == "alert"
    assert "the kubelet would not start" in results["alert"]["why"]  # the GB200 (34 NUMA nodes) refuses
    assert results["verdicts"]["gb200-01"] == "needs action"
    assert results["blockers"] >= 1
    # gb200-01's kubelet refuses the target: its pool has no canary, every other pool has one
    assert results["canary"].pop("gb200") == "" and all(results["canary"].values()), results["canary"]
    assert (tmp_path / "run" / "03-readiness.html").exists()
    # the steps table shows what 04's plan does on each node it plans (gpu-h100-02 drains: the restart
    # would reject a running pod), in the same words
    import csv

    from tmnb.analysis.readiness import assess
    from tmnb.rollout.plan import build_plan
    from tmnb.sources.embedded import load_sample

    shown = {r["node"]: r for r in csv.DictReader((tmp_path / "run" / "tables" / "steps.csv").open())}
    snap = load_sample()
    plan = build_plan(
        snap, assess(snap, {"topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod"}), change_id="c"
    )
    assert plan.nodes and shown["gpu-h100-02"]["drain"] == "yes"
    for change in plan.nodes:
        row = shown[change.node]
        assert (row["drain"], row["why"], row["state files moved"]) == (
            "yes" if change.drain else "no",
            change.drain_why,
            ", ".join(change.state_files),
        )
    # gpu-h100-02 runs best-effort with an llm-serving pod's GPU on NUMA 1 and its CPUs on NUMA 0
    # (docs/sample-fleet.md): single-numa-node rejects it, and 03 explains why as 06 would
    (explained,) = csv.DictReader((tmp_path / "run" / "tables" / "rejections.csv").open())
    assert explained["node"] == "gpu-h100-02" and explained["pod"].startswith("ml-inference/llm-serving-")
    assert "nvidia.com/gpu: {1 preferred}" in explained["hints"] and "cpu: {0 preferred}" in explained["hints"]
    assert "topologyManagerPolicy: single-numa-node → best-effort" in explained["would admit"]


@pytest.mark.notebook
def test_readiness_of_an_upgrade_on_the_sample(tmp_path):
    """kubeletVersion 1.37 on the sample (1.34 and 1.36 today, API server v1.36.2): a kubelet newer than its
    API server breaks the version skew policy, so the run alerts; no pod changes, every node's checkpoints
    are read back from their inline fields on a rollback, and the minors' differences are shown."""
    result = run(
        ROOT / "notebooks" / "03-readiness.ipynb", [("target", "{kubeletVersion: '1.37'}")], out=tmp_path / "run"
    )
    assert result.status == "alert" and "14 findings at or above blocker" in result.results["alert"]["why"]
    assert set(result.results["verdicts"].values()) == {"needs action"}
    assert result.results["upgrade_changes"] == 0
    html = result.html.read_text()
    assert "Kubelet upgrade" in html and "upgrade.checkpoint-inline" in html
    assert "V4 (V2 fields inline)" in html


#: a change whose option value "true" is a string to the kubelet (a boolean, it would refuse the config)
STATIC_TARGET = {
    "cpuManagerPolicy": "static",
    "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
    "reservedSystemCPUs": "0-1",
    "topologyManagerPolicy": "restricted",
}


@pytest.fixture(scope="module")
def sample_runs(tmp_path_factory):
    """The six notebooks on the sample, each reading what the one before wrote as a user chains them:
    01's snapshot (named relative to the working directory) read by 02 and 03, 03's change (with a
    string YAML would read as a boolean) planned by 04 from the sample, the sample pair compared by 05,
    and 06 on the folder of all of them."""
    import os

    runs = tmp_path_factory.mktemp("sample-runs")
    inventory = run(ROOT / "notebooks" / "01-inventory.ipynb", out=runs / "01")
    stored = os.path.relpath(inventory.results["snapshot"])
    target = json.dumps(STATIC_TARGET)
    change = [("source", "sample"), ("target", target), ("state_dir", str(runs / "state"))]
    return [
        inventory,
        run(ROOT / "notebooks" / "02-numa-occupancy.ipynb", [("source", stored)], out=runs / "02"),
        run(ROOT / "notebooks" / "03-readiness.ipynb", [("source", stored), ("target", target)], out=runs / "03"),
        run(ROOT / "notebooks" / "04-rollout.ipynb", change, out=runs / "04"),
        run(ROOT / "notebooks" / "05-compare.ipynb", out=runs / "05"),
        run(ROOT / "notebooks" / "06-postmortem.ipynb", [("evidence", str(runs))], out=runs / "06"),
    ]


@pytest.mark.notebook
@pytest.mark.parametrize("index", range(len(NOTEBOOKS)), ids=[p.stem for p in NOTEBOOKS])
def test_every_printed_command_runs_as_printed(sample_runs, index):
    """Each command a report prints on the sample names a real subcommand, notebook and parameters,
    with values ``tmnb run`` types as the report meant them and paths that hold from any directory."""
    from printed_commands import explained, printed_commands, typed

    result = sample_runs[index]
    printed = printed_commands(result.notebook)
    assert printed, f"{result.notebook.name} printed no tmnb command"
    assert not explained(printed), explained(printed)
    if result.notebook.stem == "03-readiness":  # the change 04 plans is the one 03 checked
        (rollout,) = (c for c in printed if c.startswith("tmnb run 04-rollout"))
        assert typed(rollout)["target"] == STATIC_TARGET
