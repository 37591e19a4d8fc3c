"""``tmnb rollout status`` and ``list``: a change found wherever it was run (the default state folder,
the demo's folder, a run folder of 04), told in one line with the one next command, and that command
run as printed: held -> resume -> done; failed -> rollback -> rolled back.

Every line printed fits 120 columns and ends without blanks, as a terminal shows it; a command too
long for one line is continued with backslashes, as pasted into a shell.
"""

from __future__ import annotations

import json
import os
import random
import re
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import ROOT
from printed_commands import explained
from tmnb.analysis.readiness import assess
from tmnb.cli.main import main
from tmnb.rollout.journal import Journal
from tmnb.rollout.plan import RolloutPlan, build_plan, plan_json
from tmnb.rollout.run import Rollout
from tmnb.twin.sandbox import Faults, Sandbox

from .test_rollout_sandbox import NODES, box_fixture, config, kubeconfig_fixture, rollout  # noqa: F401  (fixtures)

CONFIG = "/var/lib/kubelet/config.yaml"
#: a time as the status line shows it: the journal's UTC time to the minute
AT = r"\d{4}-\d\d-\d\d \d\d:\d\d UTC"


def printed(capsys: pytest.CaptureFixture[str]) -> str:
    """What the command printed, checked as a terminal shows it: every line at most 120 columns, no
    trailing blanks."""
    out = capsys.readouterr().out
    for line in out.splitlines():
        assert len(line) <= 120 and line == line.rstrip(), line
    return out


def next_command(out: str, label: str) -> list[str]:
    """The words of the command printed after ``label``, its continuation lines joined as the shell
    joins them (a backslash-newline is removed, inside a word too); checked as every printed command
    is (``printed_commands``: the real parser, notebook names, typed parameters, absolute paths)."""
    joined = out.replace("\\\n", "")
    found = re.search(rf"^  {re.escape(label)}:\s+(.+)$", joined, re.M)
    assert found, out
    assert not explained([found[1]]), explained([found[1]])
    return shlex.split(found[1])


def at(record: dict) -> str:  # type: ignore[type-arg]
    """A journal record's time as the line shows it."""
    return f"{record['time'][:10]} {record['time'][11:16]} UTC"


def held_change(folder: Path, change_id: str = "h1") -> Journal:
    """A change of the sandbox fleet (canary w2, then wave-1: w1 and w3) whose canary is done and that
    root@vm held at wave-1, as a run and the Abort button journal it."""
    from .test_rollout_sandbox import fleet

    snap = fleet()
    plan = build_plan(snap, assess(snap, {"topologyManagerPolicy": "best-effort"}), change_id=change_id, canary="w2",
                      waves=2)  # fmt: skip
    folder.mkdir(parents=True)
    (folder / "plan.json").write_text(plan_json(plan))
    journal = Journal(folder / "journal.jsonl", change_id, operator="root@vm")
    journal.record(None, "gate", "info", gate="canary", result="running", nodes=["w2"])
    for step in ("preflight", "cordon", "backup"):
        journal.record("w2", step, "done", result="ok")
    journal.record("w2", "apply", "done", result=f"wrote {CONFIG}", files={CONFIG: {"before": "a", "after": "b"}})
    journal.record("w2", "start", "done", result="kubelet restart issued", action="restart")
    journal.record("w2", "verify", "done", result="configz shows the target")
    journal.record("w2", "uncordon", "done", result="uncordoned")
    journal.record("w2", "node", "done", result="done", gate="canary", summary="w2 has the change")
    Rollout(plan, journal=journal, run_dir=folder).abort("wave-1")
    return journal


def test_a_held_change_is_one_line_with_who_when_and_the_resume(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s"
    hold = held_change(state).records()[-1]
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    assert out.splitlines()[0] == f"h1: held at wave-1 by root@vm at {at(hold)}; 1 of 3 nodes done"
    assert next_command(out, "resume with") == [
        "tmnb", "rollout", "execute", "--change-id", "h1", "--state-dir", str(state), "--approve", "canary",
        "--approve", "resume", "--approve", "wave-1",
    ]  # fmt: skip
    assert "preflight" not in out and "uncordon" not in out  # no journal lines: they are behind -v
    assert main(["rollout", "status", "--state-dir", str(state), "-v"]) == 0
    verbose = printed(capsys)
    assert verbose.startswith(out.rstrip("\n"))
    assert re.search(r"^    \S+Z  w2 +preflight +done +ok$", verbose, re.M)
    assert "w2 has the change: it wrote /var/lib/kubelet/config.yaml and restarted the kubelet" in verbose


def test_a_long_command_is_continued_within_120_columns(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    state = tmp_path / ("deep-" * 12) / "state"
    held_change(state, change_id="a-change-with-a-name-as-long-as-some-teams-make-them")
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    assert out.splitlines()[1] == "  resume with:" and out.splitlines()[2].endswith(" \\")
    assert next_command(out, "resume with")[5:7] == ["--state-dir", str(state)]


def test_a_run_that_holds_the_lock_is_running_and_a_killed_one_was_interrupted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The canary stopped after its apply: while a live process holds the change's lock it is running
    (and the next step is to look again); once the holder is gone, it was interrupted there."""
    from .test_rollout_sandbox import fleet

    snap = fleet()
    plan = build_plan(snap, assess(snap, {"topologyManagerPolicy": "best-effort"}), change_id="r1", canary="w2")
    state = tmp_path / "s"
    state.mkdir()
    (state / "plan.json").write_text(plan_json(plan))
    journal = Journal(state / "journal.jsonl", "r1", operator="root@vm")
    for step in ("preflight", "cordon", "backup"):
        journal.record("w2", step, "done", result="ok")
    journal.record("w2", "apply", "intent", intent="write the change")
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    for pid in (os.getpid(), int(gone.stdout)):
        holder = {"pid": pid, "host": socket.gethostname(), "change_id": "r1", "since": "2026-12-07T10:02:03.000000Z"}
        journal.lock_path.write_text(json.dumps(holder))
        assert main(["rollout", "status", "--state-dir", str(state)]) == 0
        out = printed(capsys)
        if pid == os.getpid():
            assert out.splitlines()[0] == (
                f"r1: running: apply on w2, pid {pid} on {socket.gethostname()} since 2026-12-07 10:02 UTC; "
                "0 of 3 nodes done"
            )
            assert next_command(out, "see it again with") == [
                "tmnb", "rollout", "status", "--change-id", "r1", "--state-dir", str(state)
            ]  # fmt: skip
        else:
            intent = journal.records()[-1]
            assert out.splitlines()[0] == f"r1: interrupted at apply on w2 at {at(intent)}; 0 of 3 nodes done"
            assert next_command(out, "resume with")[-2:] == ["--approve", "canary"]


def test_a_journal_without_its_plan_is_read_as_evidence(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A journal copied alone (05 names its folder): its last record and the nodes it names; what the
    plan would tell (the gates, the nodes to come) is not made up, and the evidence is the next read."""
    state = tmp_path / "state"
    record = Journal(state / "journal.jsonl", "tm-1", operator="root@vm").record("n1", "apply", "done", result="ok")
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    assert (
        out.splitlines()[0]
        == f"tm-1: journal only, no plan.json: last apply done on n1 at {at(record)}; 0 of 1 node it names done"
    )
    assert next_command(out, "read its evidence with") == ["tmnb", "run", "06-postmortem", "-p", "evidence", str(state)]


def test_a_command_continued_over_lines_is_the_same_command_to_bash() -> None:
    """Deep paths, with blanks and quotes, cut wherever a line must end: bash, given the printed lines,
    reads back every word of the command (printf prints one a line), and no line passes 120 columns."""
    from tmnb.cli.rollout_view import shell_lines
    from tmnb.report.commands import command
    from tmnb.rollout.standing import compare_command

    rng = random.Random(7)
    for case in range(40):
        path = Path("".join("/" + "".join(rng.choice("abcdefgh/-_. '") for _ in range(rng.randint(1, 70)))
                            for _ in range(rng.randint(1, 4))))  # fmt: skip
        chain = (
            compare_command(path, ["w1", "w2"])
            if case % 2
            else command("rollout", "execute", change_id="c" * rng.randint(1, 60), state_dir=path, approve=["canary"])
        )
        lines = shell_lines("  with:", chain)
        assert all(len(line) <= 120 and line == line.rstrip() for line in lines), lines
        pasted = "\n".join(lines[1:] if lines[0] == "  with:" else [lines[0].removeprefix("  with: ")])
        words = subprocess.run(["bash", "-c", "printf '%s\\n' " + pasted.replace(" && \\\n", " \\\n")],
                               capture_output=True, text=True, check=True).stdout  # fmt: skip
        assert words.splitlines() == [w for one in chain.split(" && ") for w in shlex.split(one)], lines


def test_list_and_status_find_changes_in_the_state_root_and_in_a_demo_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The default state root holds h1; the demo's folder holds its state folder and the run folder of
    04 with copies of the journal and plan, whose manifest names that state folder: each change is
    listed once. ``status`` finds the demo's change by its id, and lists nothing it cannot read."""
    reports = tmp_path / "reports"
    monkeypatch.setenv("TMNB_REPORTS", str(reports))
    monkeypatch.chdir(tmp_path)
    held_change(reports / "rollouts" / "h1")
    demo = reports / "20260102T030405Z-demo"
    held_change(demo / "rollout-state", change_id="demo-canary")
    (demo / "04-rollout").mkdir()
    for name in ("journal.jsonl", "plan.json"):
        (demo / "04-rollout" / name).write_bytes((demo / "rollout-state" / name).read_bytes())
    manifest = {"parameters": {"change_id": "demo-canary", "state_dir": str(demo / "rollout-state")}}
    (demo / "04-rollout" / "manifest.json").write_text(json.dumps(manifest))
    (reports / "20260102T030405Z-03-readiness").mkdir()  # a run folder that holds no change

    assert main(["rollout", "list"]) == 0
    table = printed(capsys).splitlines()
    assert table[0].split() == ["CHANGE", "NODES", "WHERE", "IT", "STANDS", "TARGET", "FOLDER"]
    assert [line.split() for line in table[1:]] == [
        ["h1", "1/3", "held", "at", "wave-1", "topologyManagerPolicy=best-effort", "reports/rollouts/h1"],
        ["demo-canary", "1/3", "held", "at", "wave-1", "topologyManagerPolicy=best-effort",
         "reports/20260102T030405Z-demo/rollout-state"],
    ]  # fmt: skip
    assert main(["rollout", "list", str(demo)]) == 0  # the state root and the demo's folder
    assert len(printed(capsys).splitlines()) == 3
    assert main(["rollout", "status", "--change-id", "demo-canary"]) == 0
    out = printed(capsys)
    assert out.startswith("demo-canary: held at wave-1 by root@vm")
    assert next_command(out, "resume with")[5:7] == ["--state-dir", str(demo / "rollout-state")]
    assert main(["rollout", "status", str(demo / "04-rollout")]) == 0  # a run folder stands for its state folder
    assert printed(capsys) == out
    assert main(["rollout", "status", "--change-id", "nope"]) == 2
    assert "no change nope found in" in capsys.readouterr().err
    # a run folder whose state folder is gone (evidence opened elsewhere) stands for itself, read as evidence
    manifest["parameters"]["state_dir"] = str(tmp_path / "gone")
    (demo / "04-rollout" / "manifest.json").write_text(json.dumps(manifest))
    assert main(["rollout", "status", str(demo / "04-rollout")]) == 0
    kept = demo / "04-rollout"
    assert next_command(printed(capsys), "read its evidence with") == [
        "tmnb",
        "run",
        "06-postmortem",
        "-p",
        "evidence",
        str(kept),
    ]


def _abort(state: Path, change_id: str, gate: str) -> None:
    """Hold the change as the notebook's Abort button does."""
    plan = RolloutPlan.from_json(json.loads((state / "plan.json").read_text()))
    Rollout(plan, journal=Journal(state / "journal.jsonl", change_id), run_dir=state).abort(gate)


def pasted(out: str, label: str, kubeconfig: Path) -> int:
    """The command printed after ``label``, its lines pasted into bash as they are, from the repository
    root, with tmnb on PATH and the sandbox's kubeconfig as the user's; its exit status."""
    lines = out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith(f"  {label}:"))
    lines[first] = lines[first].removeprefix(f"  {label}:")
    start = first if lines[first] else first + 1  # the command on the label's line, or below it
    block = [lines[start]]
    while block[-1].endswith("\\"):
        block.append(lines[start + len(block)])
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "KUBECONFIG": str(kubeconfig),
    }
    return subprocess.run(["bash", "-c", "\n".join(block)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL).returncode


def test_held_then_resumed_as_printed_then_done(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "s"
    change = ("--change-id", "st-1", "--set", "topologyManagerPolicy=best-effort", "--canary", "w2")
    assert rollout(kubeconfig, state, *change, "--approve", "canary") == 5
    capsys.readouterr()
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    assert out.splitlines()[0] == "st-1: waiting at wave-1 for its approval; 1 of 3 nodes done"
    assert next_command(out, "approve wave-1 with")[-4:] == ["--approve", "canary", "--approve", "wave-1"]
    _abort(state, "st-1", "wave-1")
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    hold = Journal(state / "journal.jsonl", "st-1").records()[-1]
    assert out.splitlines()[0] == f"st-1: held at wave-1 by {hold['operator']} at {at(hold)}; 1 of 3 nodes done"
    assert pasted(out, "resume with", kubeconfig) == 0
    assert [config(box, n)["topologyManagerPolicy"] for n in NODES] == ["best-effort"] * 3
    capsys.readouterr()
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    last = Journal(state / "journal.jsonl", "st-1").records()[-1]
    assert out.splitlines()[0] == f"st-1: done: 3 of 3 nodes done, each verified; the last step at {at(last)}"
    compare = next_command(out, "compare before and after with")
    assert compare[:3] == ["tmnb", "run", "01-inventory"] and "05-compare" in compare


def test_failed_then_rolled_back_as_printed(
    box: Sandbox, kubeconfig: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    box.api.set_faults(Faults(never_ready={"w1"}))
    state = tmp_path / "s"
    change = ("--change-id", "st-2", "--set", "topologyManagerPolicy=restricted", "--canary", "w1")
    assert rollout(kubeconfig, state, *change, "--approve", "canary", "--no-auto-rollback", "--ready-timeout", "1") == 3
    capsys.readouterr()
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    failed = next(r for r in Journal(state / "journal.jsonl", "st-2").records() if r["event"] == "failed")
    assert out.splitlines()[0] == (
        f"st-2: failed at wait-ready on w1 at {at(failed)}; the change is still on it; 0 of 3 nodes done"
    )
    assert out.splitlines()[1] == "  why: the node did not report Ready within 1s"
    back = next_command(out, "put it back with")
    assert back == [
        "tmnb", "rollout", "rollback", "--change-id", "st-2", "--node", "w1", "--approve", "rollback",
        "--state-dir", str(state.resolve()),
    ]  # fmt: skip
    assert pasted(out, "put it back with", kubeconfig) == 3
    assert config(box, "w1")["topologyManagerPolicy"] == "none"
    capsys.readouterr()
    assert main(["rollout", "status", "--state-dir", str(state)]) == 0
    out = printed(capsys)
    rollback = [r for r in Journal(state / "journal.jsonl", "st-2").records() if r["step"] == "rollback"][-1]
    assert (
        out.splitlines()[0] == f"st-2: rolled back on w1 at {at(rollback)} after wait-ready failed; 0 of 3 nodes done"
    )
    assert next_command(out, "find out why with") == ["tmnb", "run", "06-postmortem", "-p", "evidence", str(state)]
