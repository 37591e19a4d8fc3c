"""``tmnb whatif`` for people and for programs, on the sample fleet's documented story
(docs/sample-fleet.md): under ``single-numa-node`` one llm-serving pod on gpu-h100-02 is refused by the
Topology Manager (its vllm container needs 24 CPUs, 96 GiB and a GPU on one NUMA zone), and gb200-01's
kubelet, with 34 NUMA nodes, refuses any policy but none in the kubelet's words "unsupported on
machines with more than 8 NUMA Nodes". The issue that asked for this output (36) counted 259 pods
admitted beside the rejected one.
"""

from __future__ import annotations

import json

import pytest

from factories import node, pod, snapshot
from tmnb.cli.main import main
from tmnb.snapshot import save

SNA = ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=single-numa-node"]
GB200 = "gb200-01: the kubelet would not start: unsupported on machines with more than 8 NUMA Nodes"
TAE = "TopologyAffinityError"


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    code = main(argv)
    out, err = capsys.readouterr()
    return code, out.splitlines(), err


def test_the_summary_comes_first_and_the_rejection_leads_the_pods(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, err = run(SNA, capsys)
    assert code == 3
    assert lines[0] == f"259 admitted, 1 rejected; {GB200}"
    assert lines[1] == "" and lines[2].split() == ["NODE", "NAMESPACE", "POD", "STATUS", "NUMA", "CPUSET"]
    node_name, namespace, name, status = lines[3].split()
    assert (node_name, namespace, status) == ("gpu-h100-02", "ml-inference", TAE)
    assert name.startswith("llm-serving-")
    assert all("Admitted" in line for line in lines[4:262])  # the 259 others, then the node table
    assert f"tmnb: {GB200}" in err.splitlines()  # stderr still says it, for a reader that keeps it apart


def test_text_columns_are_left_aligned_and_lines_end_without_blanks(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines, _ = run(SNA, capsys)
    head = lines[2]
    pod_at = head.index("POD")
    for line in lines[3:262]:
        assert line == line.rstrip()
        assert line[pod_at - 1] == " " and line[pod_at] != " "  # each name starts under its header


def test_rejected_only_keeps_the_rejection_and_the_nodes_to_note(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run([*SNA, "--rejected-only"], capsys)
    assert code == 3 and lines[0] == f"259 admitted, 1 rejected; {GB200}"
    rows = [line.split()[0] for line in lines if line.startswith(("gpu-", "gb200", "gen-", "lat-", "tel-", "big-"))]
    assert rows == ["gpu-h100-02", "gpu-h100-02", "gb200-01"]  # the pod, then the two nodes with something to say


def test_wide_shows_every_cell_and_the_kubelets_message(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines, _ = run([*SNA, "-o", "wide"], capsys)
    assert lines[2].split()[-1] == "MESSAGE"
    assert lines[3].endswith(f"{TAE}   Resources cannot be allocated with Topology locality".split("   ")[-1])
    assert "2^16 NUMA masks" in "\n".join(lines)  # spr-snc4-01's headroom note, whole on one line
    assert max(map(len, lines)) > 120


@pytest.mark.parametrize("flag", [["-o", "json"], ["--output", "json"], ["--format", "json"]])
def test_json_has_node_records_beside_the_pods(flag: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run([*SNA, *flag], capsys)
    records = [json.loads(line) for line in lines]
    pods = [r for r in records if r["kind"] == "pod"]
    nodes = {r["node"]: r for r in records if r["kind"] == "node"}
    assert code == 3 and len(pods) == 260 and len(nodes) == 14
    (rejected,) = [p for p in pods if not p["admitted"]]
    assert (rejected["node"], rejected["namespace"], rejected["reason"]) == ("gpu-h100-02", "ml-inference", TAE)
    assert nodes["gb200-01"]["kubelet_starts"] is False
    assert nodes["gb200-01"]["refusal"] == "unsupported on machines with more than 8 NUMA Nodes"
    assert nodes["gpu-h100-02"]["rejected"] == 1 and nodes["gpu-h100-02"]["refusal"] == ""
    # a node's record follows its pods: a streaming reader knows the node is done
    last_pod = max(i for i, r in enumerate(records) if r["kind"] == "pod" and r["node"] == "gpu-h100-02")
    assert records[last_pod + 1] == nodes["gpu-h100-02"]


def test_json_rejected_only(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines, _ = run([*SNA, "-o", "json", "--rejected-only"], capsys)
    assert [(r["kind"], r["node"]) for r in map(json.loads, lines)] == [
        ("pod", "gpu-h100-02"),
        ("node", "gpu-h100-02"),
        ("node", "gb200-01"),
    ]


def test_an_upgrade_alone_is_a_whatif(capsys: pytest.CaptureFixture[str]) -> None:
    """Today's settings as kubelet 1.37: gb200-01 runs policy none, so every kubelet starts."""
    code, lines, _ = run(["whatif", "--snapshot", "sample", "--kubelet-version", "1.37"], capsys)
    assert code == 0 and lines[0] == "273 admitted, 0 rejected"
    assert "Pods admitted or pinned differently than as today's kubelet minor:" in lines


def test_one_node(capsys: pytest.CaptureFixture[str]) -> None:
    code, lines, _ = run([*SNA, "--node", "gpu-h100-02"], capsys)
    assert code == 3 and lines[0] == "16 admitted, 1 rejected"
    assert {line.split()[0] for line in lines[3:20]} == {"gpu-h100-02"}


def test_a_label_selector(capsys: pytest.CaptureFixture[str]) -> None:
    _, lines, _ = run([*SNA, "-l", "tmnb.dev/pool in (gpu,gb200)", "-o", "json"], capsys)
    nodes = [r["node"] for r in map(json.loads, lines) if r["kind"] == "node"]
    assert nodes == ["gpu-h100-01", "gpu-h100-02", "gb200-01"]


def test_several_facts_are_listed_under_the_summary(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two nodes of a minor tmnb does not model (said once, with both names) and one without topology."""
    nodes = [node("w1", "v1.32.4"), node("w2", "v1.32.4"), node("bare", cpus=[], numa=[])]
    path = tmp_path / "s.json"
    save(snapshot(nodes, [pod("p", "w1")]), path)
    code, lines, _ = run(["whatif", "--snapshot", str(path), "--set", "topologyManagerScope=pod"], capsys)
    assert code == 0
    assert lines[0] == "1 admitted, 0 rejected; 3 nodes to note:"
    assert lines[1].startswith("  w1, w2: kubelet v1.32.4 is outside the modelled minors")
    assert lines[3].startswith("  bare: nothing predicted: the snapshot has no CPU and NUMA topology")
    assert lines[5] == ""  # each fact's lines go on indented, then the pods


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["whatif", "--snapshot", "sample"], "tmnb: error: --set: expected what to predict: --set FIELD=VALUE"),
        ([*SNA, "--node", "gpu-h100-2"], "tmnb: error: --node: no node named 'gpu-h100-2'; did you mean gpu-h100-02"),
        ([*SNA, "-l", "pool in gpu"], "tmnb: error: --selector: invalid label selector requirement 'pool in gpu'"),
        ([*SNA, "--context", "prod"], "tmnb: error: --snapshot: --context applies to --snapshot live only"),
        ([*SNA, "--node-files", "pod"], "tmnb: error: --snapshot: --node-files applies to --snapshot live only"),
        (
            ["whatif", "--snapshot", "live", "--node-files", "nfs", "--set", "topologyManagerScope=pod"],
            "tmnb: error: --node-files: unknown node_files 'nfs'",
        ),
        (
            ["whatif", "--node-root", ".", "--pods", "p.json", "--node", "w1", "--set", "topologyManagerScope=pod"],
            "tmnb: error: --node: --node-root is one node's copied files",
        ),
    ],
)
def test_bad_arguments_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message), err
