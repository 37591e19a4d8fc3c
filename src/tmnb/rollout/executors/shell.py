"""Executors that run commands through a local process: ``local`` (this host is the node, or holds a
copy of its files under ``root``) and ``ssh`` (the same argv on the node as one quoted remote command)."""

from __future__ import annotations

import shlex
import subprocess
from collections.abc import Sequence
from typing import Unpack

from tmnb.errors import RolloutError
from tmnb.rollout.executors.command import CommandExecutor, RootedOptions, last_line
from tmnb.sources.transports import SshTransport


class SshOptions(RootedOptions, total=False):
    """The ``ssh`` executor's options besides its host (``SshExecutor``)."""

    user: str | None
    port: int | None
    sudo: bool
    options: Sequence[str]
    ssh: str


def _subprocess(
    argv: list[str], stdin: bytes, timeout: float, where: str, op: str, node: str
) -> tuple[int, bytes, bytes]:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        raise RolloutError(f"{op} did not finish within {timeout:g}s ({where})", node=node) from None
    except OSError as exc:
        raise RolloutError(f"{op}: cannot start {argv[0]} ({where}): {exc.strerror or exc}", node=node) from None
    return done.returncode, done.stdout, done.stderr


class LocalExecutor(CommandExecutor):
    """This host is the node (or ``root`` holds a copy of its files)."""

    kind = "local"

    def where(self) -> str:
        return "local" if self.root == "/" else f"local, root {self.root}"

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        return _subprocess(argv, stdin, self.timeout, self.where(), op, self.node)


class SshExecutor(CommandExecutor):
    """OpenSSH with the collector's conventions (BatchMode, the user's ssh config, ``--`` before
    the host): the node-side argv travels as ONE ``shlex.join``-quoted remote command, data on stdin."""

    kind = "ssh"

    def __init__(
        self,
        node: str,
        host: str,
        user: str | None = None,
        port: int | None = None,
        sudo: bool = True,
        options: Sequence[str] = (),
        *,
        ssh: str = "ssh",
        **common: Unpack[RootedOptions],
    ) -> None:
        super().__init__(node, **common)
        self.host = host
        self.sudo = sudo
        # The collector's transport builds the ssh part; its last word is its own remote command.
        self._ssh = SshTransport(host, user=user, port=port, sudo=False, options=tuple(options), ssh=ssh).argv([])[:-1]

    def where(self) -> str:
        return f"ssh {self.host}"

    def argv(self, remote: list[str]) -> list[str]:
        """The local ssh argv that runs ``remote`` on the node."""
        return [*self._ssh, shlex.join([*(("sudo", "-n") if self.sudo else ()), *remote])]

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        rc, out, err = _subprocess(self.argv(argv), stdin, self.timeout, self.where(), op, self.node)
        if rc == 255:  # ssh's own failure: the remote command never ran
            raise RolloutError(f"{op}: cannot reach the node ({self.where()}): {last_line(err)}", node=self.node)
        return rc, out, err
