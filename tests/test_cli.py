"""The tmnb command line: exit codes, one-line user errors, whatif output formats."""

import json
import re

import pytest

from factories import node, pod, settings, snapshot
from tmnb.cli.main import main
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
    lines = capsys.readouterr().out.splitlines()
    records = [json.loads(line) for line in lines]  # JSON Lines, as the README says: a pod per line, then its node
    assert code == 3  # a pod would be rejected
    assert [r["kind"] for r in records] == ["pod"] * 4 + ["node"]
    assert [r["admitted"] for r in records[:4]] == [True, True, True, False]
    assert records[4] == {
        "kind": "node", "node": "w1", "kubelet": "1.36", "kubelet_starts": True, "refusal": "", "not_predicted": "",
        "note": "", "pods": 4, "rejected": 1,
    }  # fmt: skip
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
    assert "Headroom" in out and "p3" in out
    assert code == 3  # topology none: the fourth pod still fails in the CPU manager
    assert out.splitlines()[3].split() == ["w1", "app", "p3", "UnexpectedAdmissionError"]  # rejections first


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
            "tmnb: error: nope.json: --snapshot: cannot read snapshot",
        ),
        (["whatif", "--snapshot", "sample", "--set", "noequals"], "tmnb: error: --set: expected FIELD=VALUE"),
        (
            ["whatif", "--snapshot", "/nope", "--set", "topologyManagerPolicy=none"],
            "tmnb: error: --snapshot: unknown source '/nope'",
        ),
        (
            ["whatif", "--node-root", ".", "--set", "topologyManagerPolicy=restricted"],
            "tmnb: error: --node-root needs --pods",
        ),
        (["snapshot", "--source", "elsewhere", "--out", "x.json"], "tmnb: error: source: unknown source 'elsewhere'"),
        (
            ["run", "missing.ipynb"],
            "tmnb: error: missing.ipynb: notebook not found: expected a .ipynb file or one of the notebooks "
            "(01-inventory, 02-numa-occupancy, 03-readiness, 04-rollout, 05-compare, 06-postmortem)",
        ),
        (["run", "5-compare"], "tmnb: error: 5-compare: notebook not found"),
        (["run", "elsewhere/05-compare"], "tmnb: error: elsewhere/05-compare: notebook not found"),
        (["whatif", "--snapshot", "sample", "--set", "topologyManagerPolcy=x"], "tmnb: error: --set."),
        (
            ["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=strict"],
            "tmnb: error: --set.topologyManagerPolicy: 'strict' is not one of none, best-effort, restricted, "
            "single-numa-node; did you mean restricted?",
        ),
        (
            ["whatif", "--snapshot", "sample", "--set", "memoryManagerPolicy=static"],
            "tmnb: error: --set.memoryManagerPolicy: 'static' is not one of None, Static; did you mean Static?",
        ),
        (
            ["whatif", "--node-root", "no-such-dir", "--pods", "p.json", "--set", "topologyManagerPolicy=restricted"],
            "tmnb: error: no-such-dir: --node-root: not a directory",
        ),
        (["sandbox", "up", "--from", "gone.json.gz", "--kubeconfig", "k"], "tmnb: error: gone.json.gz: cannot read"),
        (
            ["rollout", "plan", "--change-id", "c", "--source", "gone.json", "--set", "topologyManagerPolicy=x"],
            "tmnb: error: gone.json: cannot read snapshot",
        ),
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


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["run", "notebooks/01-inventory.ipynb", "--timeout", "-1"], "seconds above 0"),
        (["run", "notebooks/01-inventory.ipynb", "--timeout", "nan"], "seconds"),
        (["sandbox", "up", "--port", "99999", "--kubeconfig", "k"], "65535"),
        (["rollout", "execute", "--change-id", "c", "--set", "a=b", "--pause", "-5"], "0 or more"),
    ],
)
def test_bad_numbers_are_refused_before_anything_runs(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_snapshot_out_is_never_overwritten_without_force(tmp_path, capsys):
    out = tmp_path / "s.json"
    out.write_text("evidence")
    assert main(["snapshot", "--out", str(out)]) == 2
    assert "pass --force" in capsys.readouterr().err and out.read_text() == "evidence"
    assert main(["snapshot", "--out", str(out), "--force"]) == 0
    assert out.read_text() != "evidence"


def test_a_closed_pipe_ends_quietly(snap_file):
    import subprocess
    import sys

    cmd = f"{sys.executable} -m tmnb.cli whatif --snapshot {snap_file} --set topologyManagerPolicy=restricted | head -1"
    done = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], capture_output=True, text=True, timeout=120)
    assert done.stdout.count("\n") == 1
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr


def test_whatif_table_cells_read_as_text(capsys):
    """No Python reprs or pandas placeholders in the table a person reads."""
    main(["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=single-numa-node"])
    out = capsys.readouterr().out
    for junk in ("<NA>", "None", "NaN", "{'", "True", "False"):
        assert junk not in out, junk
    assert " yes " in out and "any" in out


def test_whatif_upgrade_names_the_pods_the_new_minor_pins_differently(tmp_path, capsys):
    """A 1.33 node pins a pod with pod-level resources by its containers (CPUs 1,9); 1.34 skips it, so the
    pod after it takes core 1 instead of core 2 (tests/analysis/test_upgrade.py works the same case)."""
    from tmnb.snapshot import PodResources

    static = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))
    res = {"cpu": "2", "memory": "1Gi"}
    pods = [
        pod("plr", "w1", resources=PodResources(requests=res, limits=res)),
        pod("plain", "w1", created="2026-11-30T10:01:00Z"),
    ]
    path = tmp_path / "snap.json"
    save(snapshot([node("w1", version="v1.33.4", kubelet=static)], pods), path)
    assert (
        main(["whatif", "--snapshot", str(path), "--kubelet-version", "1.34", "--set", "cpuManagerPolicy=static"]) == 0
    )
    out = capsys.readouterr().out
    tail = out.split("Pods admitted or pinned differently than as today's kubelet minor:")[1]
    assert "plr" in tail and "plain" in tail and "main: CPUs 2,10" in tail
    assert main(["whatif", "--snapshot", str(path), "--set", "cpuManagerPolicy=static"]) == 0
    assert "pinned differently" not in capsys.readouterr().out


def _parsers():  # type: ignore[no-untyped-def]
    """Every parser of the command, subcommands and their verbs included, by its prog."""
    import argparse

    from tmnb.cli.main import _parser

    todo, seen = [_parser()], {}
    while todo:
        parser = todo.pop()
        seen[parser.prog] = parser
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo.extend(action.choices.values())
    return seen


def test_every_flag_and_argument_is_described():
    import argparse

    bare = [
        f"{prog}: {'/'.join(action.option_strings) or action.dest}"
        for prog, parser in _parsers().items()
        for action in parser._actions
        if not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and not (action.help or "").strip()
    ]
    assert not bare, bare


def test_top_help_is_plain_text_listing_every_exit_code(capsys):
    from tmnb.cli import exits

    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    assert "``" not in text and ":func:" not in text and "bench/" not in text, text
    codes = {v for k, v in vars(exits).items() if k.startswith("EXIT_")}
    listed = {int(m) for m in re.findall(r"^\s+(\d+)\s{2,}\S", text, re.MULTILINE)}
    assert listed == codes, (sorted(listed), sorted(codes))


def test_whatif_node_name_with_a_snapshot_is_refused_not_ignored(capsys):
    assert (
        main(["whatif", "--snapshot", "sample", "--node-name", "lat-icx-01", "--set", "topologyManagerScope=pod"]) == 2
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("tmnb: error: --node-name: ") and "--node-root" in err[0]
