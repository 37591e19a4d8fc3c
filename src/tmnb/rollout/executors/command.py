"""The executors' common part: every node operation on top of one primitive, ``_exec(argv, stdin)``
(run a node-side argv), and ``dry-run``, which records the commands and changes nothing.

Every failure is a :class:`RolloutError` naming the node, the operation and the command's last
stderr line, never a traceback and never a credential.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import TypedDict, Unpack

from tmnb.errors import RolloutError
from tmnb.rollout.ops import (
    ABSENT,
    JOURNAL_CAP,
    KubeletAction,
    NodeOps,
    Op,
    command_for,
    parse_checksum,
    rooted,
    validate_node_name,
)

DEFAULT_TIMEOUT = 120.0


class ExecutorOptions(TypedDict, total=False):
    """The keyword options of every executor that runs commands (``CommandExecutor``), but ``root``."""

    systemctl: Sequence[str]
    journalctl: Sequence[str]
    timeout: float


class RootedOptions(ExecutorOptions, total=False):
    """``ExecutorOptions`` and where the node's files are (``CommandExecutor``'s ``root``)."""

    root: str | Path


def last_line(stderr: bytes) -> str:
    lines = stderr.decode("utf-8", "replace").strip().splitlines()
    return lines[-1].strip() if lines else "(no message)"


class CommandExecutor:
    """The operations on top of one primitive, ``_exec(argv, stdin)``: run a node-side argv.

    ``root`` is joined onto every node path (a copy of a node's files, a sandbox node, or "/");
    ``commands`` records the node-side argv, so dry-run and a real run can be compared.
    """

    kind = "command"

    def __init__(
        self,
        node: str,
        root: str | Path = "/",
        systemctl: Sequence[str] = ("systemctl",),
        journalctl: Sequence[str] = ("journalctl",),
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        self.node = validate_node_name(node)
        self.root = str(root)
        self.systemctl = tuple(systemctl)
        self.journalctl = tuple(journalctl)
        self.timeout = timeout
        self._commands: list[list[str]] = []

    @property
    def commands(self) -> list[list[str]]:
        return self._commands

    def where(self) -> str:
        """How the node is reached, for error messages."""
        return self.kind

    def _exec(self, argv: list[str], stdin: bytes, op: str) -> tuple[int, bytes, bytes]:
        raise NotImplementedError

    def _path(self, path: str) -> str:
        return rooted(self.root, path, node=self.node)

    def _command(
        self,
        op: Op,
        path: str | None = None,
        *,
        mode: int | None = None,
        suffix: str = "",
        action: KubeletAction | None = None,
        since: datetime | None = None,
    ) -> list[str]:
        try:
            where = "" if path is None else self._path(path)
            return command_for(
                op,
                where,
                mode=mode,
                suffix=suffix,
                action=action,
                since=since,
                systemctl=self.systemctl,
                journalctl=self.journalctl,
            )
        except RolloutError as exc:
            if exc.node:
                raise
            raise RolloutError(str(exc), node=self.node) from None

    def _run(self, op: str, what: str, argv: list[str], stdin: bytes = b"", absent_ok: bool = False) -> bytes | None:
        self._commands.append(argv)
        rc, out, err = self._exec(argv, stdin, op)
        if rc == 0:
            return out
        if absent_ok and rc == ABSENT:
            return None
        subject = f"{op} {what}" if what else op
        raise RolloutError(f"{subject} failed ({self.where()}, exit {rc}): {last_line(err)}", node=self.node)

    # ------------------------------------------------------------------ NodeOps
    def read(self, path: str) -> bytes | None:
        return self._run("read", path, self._command("read", path), absent_ok=True)

    def write(self, path: str, data: bytes, mode: int) -> None:
        self._run("write", path, self._command("write", path, mode=mode), stdin=data)

    def move_aside(self, path: str, suffix: str) -> str | None:
        moved = self._run("move aside", path, self._command("move_aside", path, suffix=suffix), absent_ok=True)
        return None if moved is None else path + suffix

    def remove(self, path: str) -> None:
        self._run("remove", path, self._command("remove", path))

    def checksum(self, path: str) -> str | None:
        out = self._run("checksum", path, self._command("checksum", path), absent_ok=True)
        return None if out is None else parse_checksum(out)

    def kubelet(self, action: KubeletAction) -> None:
        self._run(f"{action} kubelet", "", self._command("kubelet", action=action))

    def journal_since(self, since: datetime) -> str:
        out = self._run("read journal", "", self._command("journal", since=since)) or b""
        return out[-JOURNAL_CAP:].decode("utf-8", "replace")


class DryRunExecutor(CommandExecutor):
    """Records the argv :class:`LocalExecutor` (same ``root``) would run and changes nothing.

    Reads are safe, so with a ``reader`` they are answered by it (the plan sees the real files);
    without one a read finds nothing. Mutations only append to ``commands``.
    """

    kind = "dry-run"

    def __init__(self, node: str, reader: NodeOps | None = None, **options: Unpack[RootedOptions]) -> None:
        super().__init__(node, **options)
        self.reader = reader

    def _record(self, argv: list[str]) -> None:
        self._commands.append(argv)

    def read(self, path: str) -> bytes | None:
        self._record(self._command("read", path))
        return self.reader.read(path) if self.reader else None

    def checksum(self, path: str) -> str | None:
        self._record(self._command("checksum", path))
        return self.reader.checksum(path) if self.reader else None

    def journal_since(self, since: datetime) -> str:
        self._record(self._command("journal", since=since))
        return self.reader.journal_since(since) if self.reader else ""

    def write(self, path: str, data: bytes, mode: int) -> None:
        self._record(self._command("write", path, mode=mode))

    def move_aside(self, path: str, suffix: str) -> str | None:
        self._record(self._command("move_aside", path, suffix=suffix))
        if self.reader is not None and self.reader.checksum(path) is None:
            return None
        return path + suffix

    def remove(self, path: str) -> None:
        self._record(self._command("remove", path))

    def kubelet(self, action: KubeletAction) -> None:
        self._record(self._command("kubelet", action=action))
