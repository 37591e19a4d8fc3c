"""``tmnb check NODE``: one node today and under a target, in one screen, each rejection explained.

Expectations come from the sample fleet's documented story (docs/sample-fleet.md): gpu-h100-02 runs
best-effort with pod scope from its config file, GPUs 0-3 on NUMA 0 and 4-7 on NUMA 1, and under
single-numa-node one llm-serving pod is refused by the Topology Manager (the kubelet's words: "Resources
cannot be allocated with Topology locality") though best-effort admits it; gpu-h100-01 has three
llm-serving replicas rejected in a row; lat-icx-02's policy comes from --topology-manager-policy over
the file's restricted; gb200-01 has 34 NUMA nodes (2 Grace, 32 without CPUs), its trainer spans both
Grace nodes, and any policy but none makes its kubelet refuse to start, "unsupported on machines with
more than 8 NUMA Nodes". The same node read live, or from its own files, gets the same answer.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from tmnb.cli.main import main
from tmnb.sources.embedded import load_sample
from tmnb.twin.sandbox import Sandbox

SNA = ("--set", "topologyManagerPolicy=single-numa-node")
TAE = "TopologyAffinityError: Resources cannot be allocated with Topology locality"
GB200_WORDS = "unsupported on machines with more than 8 NUMA Nodes"


def check(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["check", *argv])
    return code, capsys.readouterr().out


def section(text: str, title: str) -> list[str]:
    """The lines of the section that starts with ``title`` (to the next blank line)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(title))
    end = next((i for i in range(start, len(lines)) if not lines[i]), len(lines))
    return lines[start:end]


def unwrapped(lines: list[str]) -> str:
    return " ".join(" ".join(lines).split())


def test_one_node_today_and_its_rejection_explained(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(["gpu-h100-02", "--source", "sample", *SNA], capsys)
    assert code == 3
    assert out.splitlines()[0] == "gpu-h100-02 under topologyManagerPolicy=single-numa-node: 16 admitted, 1 rejected"
    today = section(out, "Today")
    assert today[1].split()[:2] == ["Kubelet:", "v1.36.2,"]
    settings = {line.split()[0]: line.split()[1:] for line in today if line.startswith("    topologyManager")}
    assert settings["topologyManagerPolicy"][:2] == ["best-effort", "file"]
    assert settings["topologyManagerScope"][:2] == ["pod", "file"]
    assert "nvidia.com/gpu: 4 on NUMA 0, 4 on NUMA 1" in unwrapped(today)
    rejected = unwrapped(section(out, "  Rejected: "))
    assert rejected.startswith("Rejected: ml-inference/llm-serving-") and TAE in rejected
    assert "why: " in rejected and "NUMA 0: " in rejected and "merge: (pod): " in rejected and "→ reject" in rejected
    assert "would admit: " in rejected and "topologyManagerPolicy: single-numa-node → best-effort" in rejected


def test_a_kubelet_that_would_not_start_says_so_in_its_words(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(["gb200-01", "--source", "sample", *SNA], capsys)
    assert code == 3
    assert unwrapped(section(out, "gb200-01")) == (  # the answer first, wrapped within 120 columns
        f"gb200-01 under topologyManagerPolicy=single-numa-node: the kubelet would not start: {GB200_WORDS}"
    )
    numa = section(out, "  NUMA:")[2:6]
    assert [line.split()[0] for line in numa] == ["0", "1", "2-17", "18-33"]  # 34 zones, alike ones said once
    assert [line.split()[1] for line in numa[2:]] == ["none", "none"]  # the GPU partitions have no CPUs
    assert section(out, "  NUMA:")[6].startswith("  Devices:")
    (trainer,) = [line for line in section(out, "Today") if "gb200-train" in line]
    assert trainer.split()[-1] == "0,1"  # the trainer spans both Grace nodes
    assert out.splitlines()[-1].split() == ["Kubelet:", "1.36", "would", "not", "start:", *GB200_WORDS.split()]


def test_today_says_where_a_setting_came_from_and_what_was_refused(capsys: pytest.CaptureFixture[str]) -> None:
    _, out = check(["lat-icx-02", "--source", "sample"], capsys)
    (policy,) = [line for line in out.splitlines() if line.startswith("    topologyManagerPolicy ")]
    assert policy.split()[1:4] == ["single-numa-node", "flag", "--topology-manager-policy;"] and "restricted" in out
    code, out = check(["gpu-h100-01", "--source", "sample"], capsys)
    assert code == 0 and out.splitlines()[0] == "gpu-h100-01 under today's settings: 24 admitted, 0 rejected"
    failed = unwrapped(section(out, "Today"))
    assert (
        "Failed: 3 at admission: ml-inference/llm-serving-" in failed and failed.count("(TopologyAffinityError)") == 3
    )


def test_an_upgrade_alone(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = check(["gb200-01", "--source", "sample", "--kubelet-version", "1.37"], capsys)
    assert code == 0 and out.splitlines()[0] == "gb200-01 under kubelet 1.37: 13 admitted, 0 rejected"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([], "tmnb: error: NODE: expected the node's name"),
        (
            ["gpu-h100-2", "--source", "sample"],
            "tmnb: error: NODE: no node named 'gpu-h100-2'; did you mean gpu-h100-02",
        ),
        (
            ["x", "--source", "sample", "--context", "c"],
            "tmnb: error: --source: --context applies to --source live only",
        ),
        (["--source", "node-root:."], "tmnb: error: --pods: --source node-root:DIR needs the node's pods"),
        (["x", "--source", "sample", "--pods", "p.json"], "tmnb: error: --pods: the pods of a copied node root"),
        (["x", "--node-files", "nfs"], "tmnb: error: --node-files: unknown node_files 'nfs'"),
        (
            ["x", "--source", "sample", "--set", "topologyManagerPolicy=strict"],
            "tmnb: error: --set.topologyManagerPolicy",
        ),
    ],
)
def test_bad_arguments_are_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", *argv]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message), err


@pytest.fixture(scope="module")
def box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with Sandbox(load_sample(), tmp_path_factory.mktemp("sandbox"), controller_interval=0.2) as sandbox:
        yield sandbox


def test_live_reads_that_node_alone(
    box: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a live source the node's files are read through the chosen transport for that node only."""
    import tmnb.sources.node as node_collector

    read: list[list[str]] = []
    real = node_collector.collect_nodes

    def collect_nodes(names, *args, **kwargs):  # type: ignore[no-untyped-def]
        read.append(list(names))
        return real(read[-1], *args, **kwargs)

    monkeypatch.setattr(node_collector, "collect_nodes", collect_nodes)
    kubeconfig = str(box.write_kubeconfig(tmp_path / "kubeconfig"))
    files = f"dir:{box.run_dir / 'nodes'}"
    code, out = check(["gpu-h100-02", "--kubeconfig", kubeconfig, "--node-files", files, *SNA], capsys)
    assert code == 3 and read == [["gpu-h100-02"]]
    assert out.splitlines()[0] == "gpu-h100-02 under topologyManagerPolicy=single-numa-node: 16 admitted, 1 rejected"
    assert TAE in unwrapped(section(out, "  Rejected: "))


def test_the_nodes_own_files(
    box: Sandbox, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--source node-root:DIR`` with the node's pods; on the node itself (``node-root:/``) the node is
    the one this host's kubelet registers (the host name here: this machine is no node, so "/" reads
    the sandbox node's files)."""
    import tmnb.sources.node_root as reader

    root = box.cluster.kubelets["gpu-h100-02"].root
    assert root is not None
    items = [p for p in box.cluster.items("pods") if p["spec"].get("nodeName") == "gpu-h100-02"]
    pods = tmp_path / "pods.json"
    pods.write_text(json.dumps({"kind": "PodList", "apiVersion": "v1", "items": items}))
    code, out = check(["--source", f"node-root:{root}", "--pods", str(pods), *SNA], capsys)
    assert code == 3
    assert unwrapped(section(out, "gpu-h100-02")) == (  # node files do not say the kubelet's version; the API does
        "gpu-h100-02 under topologyManagerPolicy=single-numa-node: 16 admitted, 1 rejected; kubelet version unknown: "
        "predicted as kubelet 1.36"
    )
    real = reader.read_node_root
    monkeypatch.setattr(
        reader, "read_node_root", lambda where, *, name: real(root if str(where) == "/" else where, name=name)
    )
    monkeypatch.setattr(socket, "gethostname", lambda: "GPU-H100-02")
    code, out = check(["--source", "node-root:/", "--pods", str(pods), *SNA], capsys)
    assert code == 3 and out.startswith(
        "gpu-h100-02 under topologyManagerPolicy=single-numa-node: 16 admitted, 1 rejected;"
    )
