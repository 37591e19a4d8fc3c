"""The ssh executor: the remote command quoted once, and the node operations over a real OpenSSH
server on 127.0.0.1 working on a node root (the "node" is this host with a root prefix)."""

from __future__ import annotations

import getpass
import hashlib
import shlex
from pathlib import Path

import pytest

from conftest import require_tool
from sshd_server import free_port, sshd_fixture  # noqa: F401  (fixture)
from tmnb.errors import RolloutError
from tmnb.rollout.executors import make_executor
from tmnb.rollout.executors.shell import LocalExecutor, SshExecutor
from tmnb.rollout.ops import command_for

from .test_local import HOSTILE, tree


def test_remote_command_is_one_quoted_word() -> None:
    ex = SshExecutor("w1", "node-1.example", user="ops", port=2222, options=("-J", "bastion"), root="/srv/n")
    argv = ex.argv(command_for("write", "/srv/n/etc/it's $(x)", mode=0o644))
    assert argv[:-1] == [
        "ssh", "-T", "-o", "BatchMode=yes", "-p", "2222", "-l", "ops", "-J", "bastion", "--", "node-1.example"
    ]  # fmt: skip
    assert shlex.split(argv[-1]) == ["sudo", "-n", *command_for("write", "/srv/n/etc/it's $(x)", mode=0o644)]
    hostile = SshExecutor("w1", "-oProxyCommand=touch /tmp/x", sudo=False).argv(["true"])
    assert hostile.index("--") < hostile.index("-oProxyCommand=touch /tmp/x")  # a host, never an option
    assert shlex.split(hostile[-1]) == ["true"]


def test_operations_over_real_ssh(sshd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port, options = sshd
    root = tmp_path / "node"
    (root / "var/lib/kubelet").mkdir(parents=True)
    (root / "var/lib/kubelet/cpu_manager_state").write_bytes(b'{"policyName":"static","checksum":1}')
    ex = make_executor(
        "ssh", "w1", host="127.0.0.1", user=getpass.getuser(), port=port, sudo=False, options=options, root=root
    )
    config = "/var/lib/kubelet/config.yaml"
    data = b"apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"
    assert ex.read(config) is None and ex.checksum(config) is None
    ex.write(config, data, 0o600)
    assert (root / "var/lib/kubelet/config.yaml").read_bytes() == data
    assert ((root / "var/lib/kubelet/config.yaml").stat().st_mode & 0o7777) == 0o600
    assert ex.read(config) == data and ex.checksum(config) == hashlib.sha256(data).hexdigest()
    state = "/var/lib/kubelet/cpu_manager_state"
    assert ex.move_aside(state, ".tmnb-c1") == state + ".tmnb-c1"
    assert ex.read(state) is None and ex.move_aside(state, ".tmnb-c1") is None
    ex.remove(state + ".tmnb-c1")
    for path in HOSTILE:  # the remote shell sees each path as one word
        ex.write(path, path.encode(), 0o644)
        assert ex.read(path) == path.encode()
        ex.remove(path)
    assert not list(tmp_path.rglob("PWNED*"))
    # the same operations on the same root, run locally: the same node-side argv
    local = LocalExecutor("w1", root=root)
    before = tree(root)
    local.read(config)
    local.checksum(config)
    assert local.commands == [command_for("read", str(root) + config), command_for("checksum", str(root) + config)]
    assert ex.commands[3:5] == local.commands
    assert tree(root) == before


def test_remote_failure_names_the_node_and_operation(sshd, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port, options = sshd
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc/kubelet.conf").mkdir()
    ex = SshExecutor("w1", "127.0.0.1", user=getpass.getuser(), port=port, sudo=False, options=options, root=tmp_path)
    with pytest.raises(
        RolloutError, match=r"^node w1: write /etc/kubelet.conf failed \(ssh 127.0.0.1, exit 1\): tmnb: "
    ):
        ex.write("/etc/kubelet.conf", b"x", 0o644)


def test_unreachable_node(tmp_path: Path) -> None:
    require_tool("ssh")
    ex = SshExecutor("w1", "127.0.0.1", port=free_port(), options=("-F", "/dev/null", "-o", "ConnectTimeout=3"))
    with pytest.raises(RolloutError, match=r"^node w1: read: cannot reach the node \(ssh 127.0.0.1\): .*refused"):
        ex.read("/var/lib/kubelet/config.yaml")
