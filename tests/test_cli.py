"""The tmnb command line: exit codes, one-line user errors, whatif output formats."""

import json

import pytest

from factories import node, pod, settings, snapshot
from tmnb.cli import main
from tmnb.snapshot import KubeletInfo, save


@pytest.fixture
def snap_file(tmp_path):
    static = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))
    pods = [pod(f"p{i}", "w1", cpu="4", created=f"2026-11-30T10:0{i}:00Z") for i in range(4)]
    path = tmp_path / "snap.json"
    save(snapshot([node("w1", kubelet=static)], pods), path)
    return path


def test_whatif_json(snap_file, capsys):
    code = main(
        ["whatif", "--snapshot", str(snap_file), "--set", "topologyManagerPolicy=single-numa-node", "--format", "json"]
    )
    records = json.loads(capsys.readouterr().out)
    assert code == 3  # a pod would be rejected
    assert [r["admitted"] for r in records] == [True, True, True, False]
    expected = {
        "node": "w1",
        "namespace": "app",
        "pod": "p3",
        "reason": "TopologyAffinityError",
        "message": "Resources cannot be allocated with Topology locality",
    }
    assert {k: records[3][k] for k in expected} == expected
    assert records[0]["numa"] == {"main": [0]}


def test_whatif_table_and_clean_exit(snap_file, capsys):
    code = main(["whatif", "--snapshot", str(snap_file), "--set", "topologyManagerScope=pod"])
    out = capsys.readouterr().out
    assert "headroom" in out and "p3" in out
    assert code == 3  # topology none: the fourth pod still fails in the CPU manager
    assert "UnexpectedAdmissionError" in out


def test_whatif_refused_config(snap_file, capsys):
    code = main(
        [
            "whatif",
            "--snapshot",
            str(snap_file),
            "--set",
            'topologyManagerPolicyOptions={prefer-closest-numa-nodes: "maybe"}',
            "--set",
            "topologyManagerPolicy=restricted",
        ]
    )
    assert code == 3
    assert 'tmnb: w1: the kubelet would not start: bad value for option "prefer-closest-numa-nodes"' in (
        capsys.readouterr().err
    )


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["whatif", "--snapshot", "nope.json", "--set", "topologyManagerPolicy=restricted"],
            "tmnb: error: nope.json: cannot read snapshot",
        ),
        (["whatif", "--snapshot", "sample", "--set", "noequals"], "tmnb: error: --set: expected FIELD=VALUE"),
        (
            ["whatif", "--node-root", ".", "--set", "topologyManagerPolicy=restricted"],
            "tmnb: error: --node-root needs --pods",
        ),
        (["snapshot", "--source", "elsewhere", "--out", "x.json"], "tmnb: error: source: unknown source 'elsewhere'"),
        (["run", "missing.ipynb"], "tmnb: error: missing.ipynb: notebook not found"),
    ],
)
def test_user_errors_are_one_line(argv, message, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(message), err


def test_version(capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("tmnb ")
