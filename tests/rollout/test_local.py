"""Node operations through the local executor on a node root: hostile paths, atomic writes,
failures as RolloutError, and a dry run that records exactly what the local run executes."""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import time
from datetime import UTC, datetime
from pathlib import Path

import pytest

from tmnb.errors import RolloutError
from tmnb.rollout.executors import make_executor
from tmnb.rollout.executors.command import DryRunExecutor
from tmnb.rollout.executors.shell import LocalExecutor
from tmnb.rollout.ops import JOURNAL_CAP, command_for, validate_node_name

HOSTILE = [
    "/etc/kubernetes/with space.yaml",
    '/etc/it\'s "quoted".yaml',
    "/etc/$(touch PWNED)`touch PWNED2`;touch PWNED3",
    "/etc/new\nline -rf *",
    "/var/lib/kubelet/-dash/--leading",
]
#: any fixed time: these tests are about the journal's command and output, not its time bound
SINCE = datetime(2026, 12, 2, 10, 0, tzinfo=UTC)


def tree(root: Path) -> dict[str, tuple[int, bytes]]:
    """Every file under root with its mode and bytes."""
    return {
        str(p.relative_to(root)): (p.lstat().st_mode, p.read_bytes() if p.is_file() else b"")
        for p in sorted(root.rglob("*"))
    }


@pytest.mark.parametrize("path", HOSTILE)
def test_hostile_paths_round_trip(tmp_path: Path, path: str) -> None:
    root = tmp_path / "node"
    ex = LocalExecutor("w1", root=root)
    data = b"kind: KubeletConfiguration\n$(not run)\n\x00binary\xff"
    assert ex.read(path) is None and ex.checksum(path) is None
    ex.write(path, data, 0o640)
    on_disk = Path(str(root) + path)
    assert on_disk.read_bytes() == data and stat.S_IMODE(on_disk.stat().st_mode) == 0o640
    assert ex.read(path) == data
    assert ex.checksum(path) == hashlib.sha256(data).hexdigest()
    assert ex.move_aside(path, ".tmnb-c1") == path + ".tmnb-c1"
    assert ex.read(path) is None and ex.read(path + ".tmnb-c1") == data
    assert ex.move_aside(path, ".tmnb-c1") is None  # absent now
    ex.remove(path + ".tmnb-c1")
    ex.remove(path + ".tmnb-c1")  # absent: no error
    assert [p for p in root.rglob("*") if p.is_file()] == []
    assert not list(tmp_path.rglob("PWNED*")) and not list(Path.cwd().glob("PWNED*"))
    for argv in ex.commands:  # the paths are arguments, the scripts are constants
        if argv[:2] == ["sh", "-c"]:
            assert str(root) not in argv[2] and argv[3] == "tmnb"


def test_write_replaces_atomically_and_keeps_no_temp_file(tmp_path: Path) -> None:
    ex = LocalExecutor("w1", root=tmp_path)
    ex.write("/var/lib/kubelet/config.yaml", b"old\n", 0o644)
    target = tmp_path / "var/lib/kubelet/config.yaml"
    inode = target.stat().st_ino
    ex.write("/var/lib/kubelet/config.yaml", b"new\n", 0o600)
    assert target.read_bytes() == b"new\n" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert target.stat().st_ino != inode  # renamed into place, not rewritten in place
    assert sorted(p.name for p in target.parent.iterdir()) == ["config.yaml"]


def test_failed_write_is_a_rollout_error_and_leaves_no_temp_file(tmp_path: Path) -> None:
    ex = LocalExecutor("w1", root=tmp_path)
    (tmp_path / "etc/kubernetes/config.yaml").mkdir(parents=True)  # a directory where the file goes
    with pytest.raises(
        RolloutError,
        match=r"^node w1: write /etc/kubernetes/config.yaml failed \(local, root .*exit 1\): tmnb: .* is a directory",
    ):
        ex.write("/etc/kubernetes/config.yaml", b"x", 0o644)
    assert sorted(p.name for p in (tmp_path / "etc/kubernetes").iterdir()) == ["config.yaml"]
    with pytest.raises(RolloutError, match=r"move aside /etc/kubernetes/a failed.*exists already"):
        ex.write("/etc/kubernetes/a", b"1", 0o644)
        ex.write("/etc/kubernetes/a.bak", b"2", 0o644)
        ex.move_aside("/etc/kubernetes/a", ".bak")
    assert (tmp_path / "etc/kubernetes/a.bak").read_bytes() == b"2"  # never overwritten


def test_terminated_write_leaves_the_old_file(tmp_path: Path) -> None:
    """A writer told to stop while the data is still arriving: the target is untouched (the
    half-written data is never renamed into place) and the temp file is gone."""
    target = tmp_path / "etc/config.yaml"
    target.parent.mkdir()
    target.write_bytes(b"old\n")
    proc = subprocess.Popen(command_for("write", str(target), mode=0o644), stdin=subprocess.PIPE)
    assert proc.stdin is not None
    proc.stdin.write(b"half of the new")
    proc.stdin.flush()
    deadline = time.monotonic() + 10
    while len(list(target.parent.iterdir())) < 2 and time.monotonic() < deadline:
        time.sleep(0.01)  # the temp file exists: its traps are set
    proc.terminate()
    proc.stdin.close()  # the shell acts on the signal once cat has its end of file
    assert proc.wait(timeout=10) != 0
    assert target.read_bytes() == b"old\n"
    assert [p.name for p in target.parent.iterdir()] == ["config.yaml"]


def test_paths_are_checked(tmp_path: Path) -> None:
    ex = LocalExecutor("w1", root=tmp_path)
    for bad in ("relative/config.yaml", "/etc/../../escape", "/var/lib/kubelet/..", "/etc/a\0b"):
        with pytest.raises(RolloutError, match="node w1"):
            ex.write(bad, b"x", 0o644)
    with pytest.raises(RolloutError, match=r"^node w1: invalid file mode"):
        ex.write("/etc/x", b"x", 0o17777)
    with pytest.raises(RolloutError, match=r"^node w1: invalid suffix"):
        ex.move_aside("/etc/x", "/../y")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    "name", ["W1", "-w1", "w1-", "w_1", "w1;reboot", "$(id)", "a..b", "", "a" * 254, "node 1", "w1\n"]
)
def test_bad_node_names_are_refused(name: str) -> None:
    with pytest.raises(RolloutError, match="invalid node name"):
        validate_node_name(name)
    for kind in ("dry-run", "local"):
        with pytest.raises(RolloutError, match="invalid node name"):
            make_executor(kind, name)


def test_good_node_names() -> None:
    for name in ("w1", "ip-10-0-0-1.eu-west-1.compute.internal", "a" * 63 + "." + "b" * 63):
        assert validate_node_name(name) == name


def test_make_executor_errors(tmp_path: Path) -> None:
    with pytest.raises(
        RolloutError, match=r"unknown executor 'rsh': expected one of dry-run, local, ssh, node-pod, sandbox"
    ):
        make_executor("rsh", "w1")
    with pytest.raises(RolloutError, match="ssh executor needs host="):
        make_executor("ssh", "w1")
    with pytest.raises(RolloutError, match="node-pod executor needs api_client="):
        make_executor("node-pod", "w1")
    with pytest.raises(RolloutError, match=r"executor 'local'.*colour"):
        make_executor("local", "w1", colour="red")
    assert make_executor("local", "w1", root=tmp_path).kind == "local"
    assert make_executor("dry-run", "w1").kind == "dry-run"


def _sequence(ex) -> list[object]:  # type: ignore[no-untyped-def]
    """The motions of an apply with state-file handling, and what each answered."""
    config = "/var/lib/kubelet/config.yaml"
    state = "/var/lib/kubelet/cpu_manager_state"
    return [
        ex.read(config),
        ex.checksum(config),
        ex.write("/var/lib/kubelet/tmnb-backup/c1/config.yaml", b"backup", 0o600),
        ex.write(config, b"kind: KubeletConfiguration\ncpuManagerPolicy: static\n", 0o644),
        ex.kubelet("stop"),
        ex.move_aside(state, ".tmnb-c1"),
        ex.kubelet("start"),
        ex.journal_since(SINCE),
        ex.remove("/var/lib/kubelet/stale file"),
        ex.checksum(config),
    ]


def test_dry_run_records_exactly_what_the_local_executor_runs(tmp_path: Path) -> None:
    root = tmp_path / "node"
    (root / "var/lib/kubelet").mkdir(parents=True)
    (root / "var/lib/kubelet/config.yaml").write_bytes(b"kind: KubeletConfiguration\n")
    (root / "var/lib/kubelet/cpu_manager_state").write_bytes(b'{"policyName":"none"}')
    (root / "var/lib/kubelet/stale file").write_bytes(b"x")
    before = tree(root)
    fake = tmp_path / "bin"
    fake.mkdir()
    for tool in ("systemctl", "journalctl"):
        (fake / tool).write_text(f'#!/bin/sh\necho "{tool} $*"\n')
        (fake / tool).chmod(0o755)
    tools = {"systemctl": (str(fake / "systemctl"),), "journalctl": (str(fake / "journalctl"),)}

    reader = LocalExecutor("w1", root=root, **tools)
    dry = DryRunExecutor("w1", reader=reader, root=root, **tools)
    planned = _sequence(dry)
    assert tree(root) == before  # nothing changed
    assert planned[0] == b"kind: KubeletConfiguration\n"  # reads answered by the reader
    assert planned[5] == "/var/lib/kubelet/cpu_manager_state.tmnb-c1"
    config, state = (str(root) + "/var/lib/kubelet/" + f for f in ("config.yaml", "cpu_manager_state"))
    checksum = [command_for("checksum", p) for p in (config, state)]
    # what the dry run asked its reader: the reads, and whether the state file is there to move
    assert reader.commands == [command_for("read", config), checksum[0], checksum[1], dry.commands[7], checksum[0]]

    local = LocalExecutor("w1", root=root, **tools)
    done = _sequence(local)
    assert local.commands == dry.commands
    assert done[7] == "journalctl -u kubelet --since 2026-12-02 10:00:00 UTC --no-pager -o short-iso\n"
    assert tree(root) != before
    assert done[-1] == hashlib.sha256(b"kind: KubeletConfiguration\ncpuManagerPolicy: static\n").hexdigest()
    assert not (root / "var/lib/kubelet/cpu_manager_state").exists()
    assert (root / "var/lib/kubelet/cpu_manager_state.tmnb-c1").read_bytes() == b'{"policyName":"none"}'


def test_dry_run_without_a_reader_finds_nothing(tmp_path: Path) -> None:
    dry = DryRunExecutor("w1")
    assert dry.read("/etc/x") is None and dry.checksum("/etc/x") is None and dry.journal_since(SINCE) == ""
    dry.kubelet("restart")
    assert dry.commands[-1] == ["systemctl", "restart", "kubelet"]
    assert dry.commands[0] == command_for("read", "/etc/x")


def test_journal_is_capped_and_its_failure_reported(tmp_path: Path) -> None:
    big = LocalExecutor("w1", journalctl=("sh", "-c", 'yes "kubelet line" | head -n 400000; echo tail-line', "j"))
    out = big.journal_since(SINCE)
    assert len(out) == JOURNAL_CAP and out.endswith("kubelet line\ntail-line\n")
    broken = LocalExecutor(
        "w1", journalctl=("sh", "-c", "echo partial; echo 'No journal files were found.' >&2; exit 1", "j")
    )
    with pytest.raises(
        RolloutError, match=r"node w1: read journal failed \(local, exit 1\): No journal files were found\."
    ):
        broken.journal_since(SINCE)
    missing = LocalExecutor("w1", systemctl=(str(tmp_path / "no-such-systemctl"),))
    with pytest.raises(
        RolloutError, match=r"node w1: restart kubelet: cannot start .*no-such-systemctl \(local\): No such file"
    ):
        missing.kubelet("restart")
    with pytest.raises(RolloutError, match="unknown kubelet action"):
        missing.kubelet("reload")  # type: ignore[arg-type]


def test_timeout_is_a_rollout_error(tmp_path: Path) -> None:
    slow = LocalExecutor("w1", systemctl=("sh", "-c", "sleep 5", "systemctl"), timeout=0.2)
    with pytest.raises(RolloutError, match=r"node w1: stop kubelet did not finish within 0.2s"):
        slow.kubelet("stop")
    assert os.getcwd()  # still here: no traceback escaped
