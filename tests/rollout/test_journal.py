"""The rollout journal: records on disk before record() returns, a killed writer's last line,
resumption queries, the lock against a second run, and takeover of a dead run's lock."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tmnb.errors import RolloutError
from tmnb.metrics.windows import read_journal
from tmnb.redact import PLACEHOLDER
from tmnb.rollout.journal import Journal

SRC = str(Path(__file__).resolve().parents[2] / "src")


def child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a separate Python process (with ``Journal`` imported)."""
    prelude = "import os, signal, sys\nfrom tmnb.rollout.journal import Journal\n"
    env = os.environ | {"PYTHONPATH": SRC}
    return subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code), *args],
        capture_output=True, text=True, timeout=60, env=env,
    )  # fmt: skip


def test_record_is_on_disk_when_record_returns(tmp_path: Path) -> None:
    path = tmp_path / "run" / "journal.jsonl"
    # the writer dies the instant record() returns: no close, no flush, no exit handlers
    done = child(
        """
        Journal(sys.argv[1], "c1").record("w1", "apply", "done", after="ab" * 32)
        os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(path),
    )
    assert done.returncode == -signal.SIGKILL
    (rec,) = Journal(path, "c1").records()
    assert rec["node"] == "w1" and rec["step"] == "apply" and rec["event"] == "done" and rec["after"] == "ab" * 32


def test_record_fields(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TMNB_OPERATOR", "alice")
    j = Journal(tmp_path / "journal.jsonl", "c1")
    rec = j.record(
        "w1",
        "backup",
        "intent",
        intent="back up /var/lib/kubelet/config.yaml",
        before={"/var/lib/kubelet/config.yaml": "00" * 32},
        commands=[["sh", "-c", "script", "tmnb", "/p"], ["curl", "--token=s3cr3t", "--bearer", "s3cr3t"]],
        api_token="s3cr3t",
    )
    line = (tmp_path / "journal.jsonl").read_text()
    assert json.loads(line) == rec
    assert list(rec)[:6] == ["time", "change_id", "node", "step", "event", "operator"]
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", rec["time"])
    assert (rec["change_id"], rec["operator"]) == ("c1", "alice")
    assert "s3cr3t" not in line
    assert rec["commands"][1] == ["curl", f"--token={PLACEHOLDER}", "--bearer", PLACEHOLDER]
    assert rec["api_token"] == PLACEHOLDER
    monkeypatch.delenv("TMNB_OPERATOR")
    monkeypatch.setenv("USER", "bob")
    assert Journal(tmp_path / "j2.jsonl", "c1").operator == f"bob@{socket.gethostname()}"
    monkeypatch.setenv("TMNB_OPERATOR", "https://bob:hunter2@example.invalid")
    assert Journal(tmp_path / "j2.jsonl", "c1").operator == PLACEHOLDER
    markers = read_journal(tmp_path / "journal.jsonl")  # 05-compare's journal parameter reads it
    assert list(markers["event"]) == ["intent"]


def test_bad_input(tmp_path: Path) -> None:
    j = Journal(tmp_path / "journal.jsonl", "c1")
    with pytest.raises(RolloutError, match="unknown journal event 'finished'"):
        j.record("w1", "apply", "finished")  # type: ignore[arg-type]
    with pytest.raises(RolloutError, match=r"fields \['time'\] are set by the journal"):
        j.record("w1", "apply", "done", time="yesterday")
    for bad in ("", "../x", "a b", "x" * 129):
        with pytest.raises(RolloutError, match="invalid change id"):
            Journal(tmp_path / "journal.jsonl", bad)


def test_truncated_last_line_is_ignored_then_dropped(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = Journal(path, "c1")
    j.record("w1", "cordon", "intent")
    j.record("w1", "cordon", "done")
    with path.open("ab") as f:
        f.write(b'{"time": "2026-12-02T10:00:00.000000Z", "change_id": "c1", "node": "w1", "st')
    assert [r["event"] for r in j.records()] == ["intent", "done"]
    assert j.truncated is not None and j.truncated.endswith('"st')
    assert j.completed("w1", "cordon") and j.last("w1")["event"] == "done"  # type: ignore[index]
    j.record("w1", "drain", "intent")  # the fragment is cut, said so, and the new record starts its own line
    records = j.records()
    assert [(r["step"], r["event"]) for r in records] == [
        ("cordon", "intent"), ("cordon", "done"), ("journal", "info"), ("drain", "intent")
    ]  # fmt: skip
    assert records[2]["fragment"].endswith('"st') and "interrupted writer" in records[2]["message"]
    assert j.truncated is None and path.read_text().count("\n") == 4
    with path.open("a") as f:
        f.write("not json\n")
    j.record("w1", "drain", "done")
    with pytest.raises(RolloutError, match=r"journal .*, line 5: not a JSON record"):
        j.records()  # a complete line that is not a record is damage, not a crash


def test_completed_and_last_are_per_change(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    old, new = Journal(path, "c0"), Journal(path, "c1")
    old.record("w1", "apply", "done")
    new.record("w1", "apply", "intent")
    assert old.completed("w1", "apply") and not new.completed("w1", "apply")
    new.record("w1", "apply", "failed", error="boom")
    assert not new.completed("w1", "apply")
    new.record("w1", "apply", "skipped", reason="already applied")
    new.record(None, "canary", "info", message="gate approved")
    assert new.completed("w1", "apply") and not new.completed("w2", "apply")
    assert new.last("w1")["event"] == "skipped" and new.last(None)["step"] == "canary"  # type: ignore[index]
    assert new.last("w2") is None and old.last("w1")["event"] == "done"  # type: ignore[index]
    assert len(new.records()) == 5  # records() is the whole file


def test_second_run_is_refused_while_the_first_is_alive(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    j = Journal(path, "c1")
    with j.lock():
        holder = json.loads(path.with_suffix(".lock").read_text())
        assert holder["pid"] == os.getpid() and holder["host"] == socket.gethostname()
        assert holder["change_id"] == "c1" and holder["since"].endswith("Z")
        done = child(
            """
            try:
                with Journal(sys.argv[1], "c1").lock():
                    print("acquired")
            except Exception as exc:
                print(type(exc).__name__, exc)
            """,
            str(path),
        )
        assert done.stdout.strip() == (
            f"RolloutError change c1 is already running: pid {os.getpid()} on {socket.gethostname()} "
            f"holds {path.with_suffix('.lock')} since {holder['since']}"
        )
        with pytest.raises(RolloutError, match=f"pid {os.getpid()}"), Journal(path, "c1").lock():
            pass  # a second lock in the same process is refused too
    assert not path.with_suffix(".lock").exists()
    with j.lock():  # released: it can be taken again
        pass
    assert [r for r in j.records() if r["step"] == "lock"] == []


def test_stale_lock_of_a_killed_run_is_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    done = child(
        """
        with Journal(sys.argv[1], "c1").lock():
            print(os.getpid(), flush=True)
            os.kill(os.getpid(), signal.SIGKILL)
        """,
        str(path),
    )
    dead = int(done.stdout)
    assert json.loads(path.with_suffix(".lock").read_text())["pid"] == dead  # left behind
    j = Journal(path, "c1")
    with j.lock():
        assert json.loads(path.with_suffix(".lock").read_text())["pid"] == os.getpid()
    (info,) = j.records()
    assert info["event"] == "info" and info["step"] == "lock" and info["node"] is None
    assert f"took over a stale lock of pid {dead} on {socket.gethostname()}" in info["message"]
    assert info["stale_lock"]["pid"] == dead
    assert not path.with_suffix(".lock").exists()


def test_lock_held_on_another_host_is_never_taken_over(tmp_path: Path) -> None:
    path = tmp_path / "journal.jsonl"
    lock = path.with_suffix(".lock")
    lock.write_text(json.dumps({"pid": 1, "host": "other-host", "change_id": "c1", "since": "2026-12-02T10:00:00Z"}))
    with (
        pytest.raises(
            RolloutError, match=rf"pid 1 on other-host .*; if that run is gone, remove {re.escape(str(lock))}"
        ),
        Journal(path, "c1").lock(),
    ):
        pass
    assert json.loads(lock.read_text())["host"] == "other-host"


def _steps(*steps: tuple[str, str, dict[str, object]]) -> list[dict[str, object]]:
    """Records of node w1 in change c1, as ``NodeRun`` writes them (node, step, event and fields)."""
    return [{"change_id": "c1", "node": "w1", "step": s, "event": e, **f} for s, e, f in steps]


APPLY = ("apply", "done", {"files": {"/c.yaml": {"before": "a", "after": "b", "how": "edit"}}})
CORDON = ("cordon", "done", {"result": "cordoned"})


@pytest.mark.parametrize(
    ("records", "expected"),
    [
        (  # the preflight refused: nothing cordoned, nothing written, no rollback tried
            _steps(
                ("preflight", "failed", {"error": "the node is not Ready"}), ("node", "failed", {"result": "failed"})
            ),
            "w1 failed before anything was written (preflight: the node is not Ready)",
        ),
        (  # the drain timed out and the uncordon failed too
            _steps(
                CORDON,
                ("drain", "failed", {"error": "timeout"}),
                ("uncordon", "failed", {"error": "API 500"}),
                ("node", "failed", {"result": "failed"}),
            ),
            "w1 failed before anything was written (drain: timeout); it is still cordoned",
        ),
        (  # the rollback itself failed
            _steps(
                CORDON,
                APPLY,
                ("start", "done", {"action": "restart"}),
                ("verify", "failed", {"error": "pinned"}),
                ("rollback", "intent", {}),
                ("rollback", "failed", {"error": "not Ready"}),
                ("node", "failed", {"result": "failed"}),
            ),
            "w1 failed (verify: pinned) after it wrote /c.yaml and restarted the kubelet; the rollback failed too "
            "(not Ready), so the node may still hold the change; it is still cordoned: `tmnb rollout rollback "
            "--change-id c1 --node w1 --approve rollback` retries it",
        ),
        (  # a manual rollback of a node that had the change, with its state file moved aside
            _steps(
                CORDON,
                ("stop", "done", {}),
                ("state-files", "done", {"moved": {"/s": "/s.x"}}),
                APPLY,
                ("start", "done", {"action": "start"}),
                ("uncordon", "done", {}),
                ("node", "done", {"result": "done"}),
                ("rollback", "intent", {}),
                ("rollback", "done", {"files": {"/c.yaml": {}, "/s": {}}}),
                ("node", "failed", {"result": "rolled back", "reason": "manual rollback"}),
            ),
            "w1 was rolled back (manual rollback): it stopped the kubelet, moved /s aside, wrote /c.yaml and started "
            "the kubelet; the rollback put back /c.yaml, /s byte for byte, restarted the kubelet and saw the old "
            "settings in configz; uncordoned",
        ),
    ],
)
def test_the_account_of_a_node_says_what_was_applied_and_restored(
    records: list[dict[str, object]], expected: str
) -> None:
    from tmnb.rollout.journal import account

    assert account(records, "w1") == expected


def test_the_rollback_command_names_a_state_folder_that_is_not_the_default(tmp_path: Path) -> None:
    """A change kept under --state-dir is found again only with it; the default folder needs none."""
    from tmnb.report.places import change_folder
    from tmnb.rollout.journal import rollback_command

    plain = "`tmnb rollout rollback --change-id c1 --node w1 --approve rollback`"
    assert rollback_command("c1", "w1", None) == plain
    assert rollback_command("c1", "w1", change_folder("c1")) == plain
    assert rollback_command("c1", "w1", tmp_path / "state") == f"{plain[:-1]} --state-dir {tmp_path / 'state'}`"
