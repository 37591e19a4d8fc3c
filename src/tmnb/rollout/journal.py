"""The rollout journal: what was about to be done, and what was done, on which node, by whom.

Append-only JSONL with one fsync per record, so a record is on disk before the step it describes
goes on: after a crash the journal says exactly where to resume, and 05-compare reads ``time`` and
``event`` to mark the change on its plots. A lock file beside it keeps a second run of the same
change out while the first is alive.
"""

from __future__ import annotations

import contextlib
import fcntl
import getpass
import json
import os
import re
import secrets
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from tmnb.errors import RolloutError
from tmnb.parse.jsonable import JsonDict
from tmnb.redact import PLACEHOLDER, redact_argv, redact_value, secret_in
from tmnb.report.commands import command

Event = Literal["intent", "done", "failed", "skipped", "info"]
EVENTS: tuple[Event, ...] = ("intent", "done", "failed", "skipped", "info")
RESERVED = ("time", "change_id", "node", "step", "event", "operator")
_CHANGE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def now_rfc3339() -> str:
    """UTC with microseconds: records written in the same second still sort."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def default_operator() -> str:
    """Who runs the change: $TMNB_OPERATOR, else user@host; never anything that looks like a credential."""
    who = os.environ.get("TMNB_OPERATOR") or f"{os.environ.get('USER') or getpass.getuser()}@{socket.gethostname()}"
    return PLACEHOLDER if secret_in("operator", who) else who


def _clean(key: str, value: Any) -> Any:
    """``value`` (any JSON value, its shape kept) with whatever looks like a credential masked."""
    if key == "commands" and isinstance(value, list):
        return [redact_argv(argv) if isinstance(argv, list) else argv for argv in value]
    return PLACEHOLDER if secret_in(key, value) else redact_value(value, key)


def _append(fd: int, rec: JsonDict) -> None:
    """One record, one line, written whole and fsynced before the caller goes on."""
    data = memoryview((json.dumps(rec, default=str, ensure_ascii=False) + "\n").encode())
    while data:
        data = data[os.write(fd, data) :]
    os.fsync(fd)


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    """The journal of change ``change_id`` at ``path`` (created on the first record)."""

    def __init__(self, path: str | Path, change_id: str, operator: str | None = None) -> None:
        if not isinstance(change_id, str) or not _CHANGE_ID.fullmatch(change_id):
            raise RolloutError(
                f"invalid change id {change_id!r}: expected letters, digits, '.', '_' or '-' (at most 128)"
            )
        self.path = Path(path)
        self.change_id = change_id
        self.operator = default_operator() if operator is None else _clean("operator", operator)
        #: the unfinished last line of a killed writer, if the last ``records()`` found one
        self.truncated: str | None = None

    # ------------------------------------------------------------------ writing
    def record(self, node: str | None, step: str, event: Event, **fields: object) -> JsonDict:
        """Append one record and fsync it; returns the record as written."""
        if event not in EVENTS:
            raise RolloutError(f"unknown journal event {event!r}: expected one of {', '.join(EVENTS)}")
        clash = sorted(set(fields) & set(RESERVED))
        if clash:
            raise RolloutError(f"journal fields {clash} are set by the journal itself")
        rec = self._record(node, step, event, fields)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        new = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # writers in several processes never interleave
            fragment = self._drop_fragment(fd)
            if fragment is not None:
                message = "dropped the unfinished last line of an interrupted writer"
                _append(fd, self._record(None, "journal", "info", {"message": message, "fragment": fragment[:500]}))
            _append(fd, rec)
        finally:
            os.close(fd)
        if new:
            _fsync_dir(self.path.parent)
        return rec

    def _record(self, node: str | None, step: str, event: Event, fields: dict[str, object]) -> JsonDict:
        rec: JsonDict = {
            "time": now_rfc3339(),
            "change_id": self.change_id,
            "node": node,
            "step": step,
            "event": event,
            "operator": self.operator,
        }
        return rec | {k: _clean(k, v) for k, v in fields.items()}

    def _drop_fragment(self, fd: int) -> str | None:
        """Cut an unfinished last line (a writer killed mid-write) so the next record starts a
        line of its own; the cut text, or None when the file ends with a newline."""
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return None
        data = os.pread(fd, size, 0)
        cut = data.rfind(b"\n") + 1
        os.ftruncate(fd, cut)
        return data[cut:].decode("utf-8", "replace")

    # ------------------------------------------------------------------ reading
    def records(self) -> list[JsonDict]:
        """Every record, of every change id, in file order. An unfinished last line is skipped
        and kept in ``truncated``; any other unreadable line is an error."""
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise RolloutError(f"cannot read the journal {self.path}: {exc.strerror or exc}") from None
        lines = text.split("\n")
        last = lines.pop()  # "" when the file ends with a newline
        self.truncated = None
        out = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise RolloutError(f"journal {self.path}, line {number}: not a JSON record: {exc.msg}") from None
            if not isinstance(rec, dict):
                raise RolloutError(f"journal {self.path}, line {number}: not a JSON object")
            out.append(rec)
        if last.strip():
            try:
                rec = json.loads(last)
            except json.JSONDecodeError:
                rec = None
            if isinstance(rec, dict):
                out.append(rec)
            else:
                self.truncated = last
        return out

    def _mine(self) -> list[JsonDict]:
        return [r for r in self.records() if r.get("change_id") == self.change_id]

    def completed(self, node: str | None, step: str) -> bool:
        """A "done" or "skipped" record exists for this step on this node, in this change."""
        return any(r.get("node") == node and r.get("step") == step and r.get("event") in ("done", "skipped")
                   for r in self._mine())  # fmt: skip

    def last(self, node: str | None) -> JsonDict | None:
        """The latest record of this change for ``node``."""
        mine = [r for r in self._mine() if r.get("node") == node]
        return mine[-1] if mine else None

    # ------------------------------------------------------------------ lock
    @property
    def lock_path(self) -> Path:
        return self.path.with_suffix(".lock")

    @contextlib.contextmanager
    def lock(self) -> Iterator[None]:
        """Hold the change's lock file for the ``with`` block.

        The file is created exclusively and holds the holder's pid, host, change id and start
        time; the holder also keeps an flock on it, which the kernel drops when the process
        dies. So on this host a lock whose flock is free is stale (its pid is not alive, and a
        reused pid cannot fool the check) and is taken over, with an "info" record saying so. A
        lock held on another host is never taken over.
        """
        fd, stale = self._acquire()
        try:
            if stale is not None:
                self.record(
                    None,
                    "lock",
                    "info",
                    message=(
                        f"took over a stale lock of pid {stale.get('pid')} on {stale.get('host')} "
                        f"(since {stale.get('since')}): that process is gone"
                    ),
                    stale_lock=stale,
                )
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                self.lock_path.unlink()
            os.close(fd)

    def _holder_info(self) -> JsonDict:
        return {"pid": os.getpid(), "host": socket.gethostname(), "change_id": self.change_id, "since": now_rfc3339()}

    def _write_holder(self, fd: int) -> None:
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(self._holder_info()) + "\n").encode(), 0)
        os.fsync(fd)

    def _acquire(self) -> tuple[int, JsonDict | None]:
        path = self.lock_path
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written and flocked under a private name, then linked into place (exclusive, like
        # O_EXCL): nobody ever sees a lock file without its holder.
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            self._write_holder(fd)
            for _ in range(10):  # a holder releasing as we look: look again
                try:
                    os.link(tmp, path)
                    return fd, None
                except FileExistsError:
                    taken = self._take_stale(path)
                if taken is not None:
                    os.close(fd)
                    return taken
            raise RolloutError(f"could not take the lock {path}: it keeps changing hands")
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise
        finally:
            tmp.unlink(missing_ok=True)

    def _take_stale(self, path: Path) -> tuple[int, JsonDict] | None:
        """Take over ``path`` if its holder is gone; None when it vanished meanwhile; refuse otherwise."""
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            return None
        try:
            holder = self._read_holder(fd)
            if holder and holder.get("host") != socket.gethostname():
                raise self._refusal(holder, elsewhere=True)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise self._refusal(holder) from None
            if os.fstat(fd).st_ino != _inode(path):  # released (and perhaps re-created) meanwhile
                os.close(fd)
                return None
            self._write_holder(fd)
            return fd, holder or {"pid": None, "host": None}
        except BaseException:
            with contextlib.suppress(OSError):
                os.close(fd)
            raise

    @staticmethod
    def _read_holder(fd: int) -> JsonDict:
        raw = os.pread(fd, 4096, 0)
        try:
            doc = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            return {}
        return doc if isinstance(doc, dict) else {}

    def _refusal(self, holder: JsonDict, *, elsewhere: bool = False) -> RolloutError:
        hint = f"; if that run is gone, remove {self.lock_path}" if elsewhere else ""
        return RolloutError(
            f"change {self.change_id} is already running: pid {holder.get('pid')} on {holder.get('host')} "
            f"holds {self.lock_path} since {holder.get('since')}{hint}"
        )


def _inode(path: Path) -> int | None:
    try:
        return path.stat().st_ino
    except FileNotFoundError:
        return None


# ---------------------------------------------------------------------- what the records say
#: The step that closes a node's run (``rollout.run``) and the steps that change a node, with what
#: each did in words: an account of a node is built from these records alone.
NODE_STEP = "node"
_KUBELET = {"stop": "stopped", "start": "started", "restart": "restarted"}


def _paths(value: object) -> str:
    return ", ".join(str(p) for p in value) if isinstance(value, dict) and value else "its files"


def _did(rec: JsonDict) -> str:
    """What one ``done`` record of a writing step did on the node."""
    step = rec.get("step")
    if step == "stop":
        return "stopped the kubelet"
    if step == "state-files":
        return f"moved {_paths(rec.get('moved'))} aside"
    if step == "apply":
        files = rec.get("files")
        files = files if isinstance(files, dict) else {}
        fresh = {p: f for p, f in files.items() if not (isinstance(f, dict) and f.get("result") == "already applied")}
        return f"wrote {_paths(fresh)}" if fresh or not files else f"found {_paths(files)} already written"
    return f"{_KUBELET.get(str(rec.get('action')), 'restarted')} the kubelet"


def _and(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"


#: The steps that change a node; the rest (preflight, cordon, drain, backup) only read or are undone.
WRITING_STEPS = ("stop", "state-files", "apply", "start")


#: The uncordon step's word, and the account's, for a node someone else had cordoned.
LEFT_CORDONED = "left cordoned: it was cordoned before the change"


def _cordoned(mine: list[JsonDict]) -> bool:
    """Cordoned by this change and not uncordoned since."""
    state = False
    for r in mine:
        if r.get("event") == "done" and r.get("step") in ("cordon", "uncordon"):
            state = r.get("step") == "cordon"
    return state


def left_cordoned(records: list[JsonDict], node: str) -> bool:
    """The change found ``node`` cordoned (its cordon step skipped) and so leaves it cordoned."""
    return any(r.get("node") == node and r.get("step") == "cordon" and r.get("event") == "skipped" for r in records)


def rollback_command(change_id: object, node: str, folder: Path | None) -> str:
    """The CLI's rollback of ``node``, with ``--state-dir`` when the change's state ``folder`` is not
    the default one (``tmnb rollout`` would otherwise look for another journal)."""
    from tmnb.report.places import change_folder

    elsewhere = folder is not None and folder.resolve() != change_folder(str(change_id)).resolve()
    rollback = command(
        "rollout",
        "rollback",
        change_id=str(change_id),
        node=node,
        approve="rollback",
        state_dir=folder if elsewhere else None,
    )
    return f"`{rollback}`"


def account(records: list[JsonDict], node: str, folder: Path | None = None) -> str:
    """What the journal's ``records`` (of one change, kept in state ``folder``) say was applied on
    ``node`` and what was restored, in every outcome: done, rolled back, failed and left as it is,
    interrupted, resumed."""
    mine = [r for r in records if r.get("node") == node]
    if not mine:
        return f"{node}: nothing done yet"
    applied = [_did(r) for r in mine if r.get("event") == "done" and r.get("step") in WRITING_STEPS]
    wrote = f"it {_and(list(dict.fromkeys(applied)))}" if applied else ""
    closed = [r for r in mine if r.get("step") == NODE_STEP]
    failed = [r for r in mine if r.get("event") == "failed" and r.get("step") not in (NODE_STEP, "rollback")]
    reason = closed[-1].get("reason") if closed else None  # a manual rollback's
    why = f"{failed[0].get('step')}: {failed[0].get('error', '')}" if failed else str(reason or "failed")
    cordon = "; it is still cordoned" if _cordoned(mine) else f"; {LEFT_CORDONED}" if left_cordoned(mine, node) else ""
    back = rollback_command(mine[0].get("change_id"), node, folder)
    tried = [i for i, r in enumerate(mine) if r.get("step") == "rollback" and r.get("event") == "intent"]
    rollback = [r for r in mine[tried[0] if tried else len(mine) :] if r.get("step") == "rollback"]
    off = any(r.get("step") == "rollback" and r.get("event") == "info" for r in mine)
    last = next((r for r in reversed(rollback) if r.get("event") in ("done", "failed")), {})
    if last.get("event") == "done":
        return (
            f"{node} was rolled back ({reason or why}): {wrote or 'nothing had been written'}; the rollback put back "
            f"{_paths(last.get('files'))} byte for byte, restarted the kubelet and saw the old settings in "
            f"configz{cordon or '; uncordoned'}"
        )
    if last.get("event") == "failed":
        return (
            f"{node} failed ({why}) after {wrote or 'nothing was written'}; the rollback failed too "
            f"({last.get('error', '')}), so the node may still hold the change{cordon}: {back} retries it"
        )
    if closed and closed[-1].get("result") == "done":
        kept = cordon.removeprefix("; ") or "uncordoned"
        resumed = "; resumed after an interrupted run" if resumed_node(records, node) else ""
        return f"{node} has the change: {wrote or 'nothing needed writing'}, was verified and {kept}{resumed}"
    if not closed:
        step = mine[-1].get("step")
        if not applied:
            return f"{node} was interrupted at {step} before anything was written{cordon}: run again to resume"
        return (
            f"{node} was interrupted at {step} after {wrote}; nothing was verified or restored{cordon}: run "
            f"again to resume, or {back} puts it back"
        )
    if not applied:
        return f"{node} failed before anything was written ({why}){cordon}"
    off_note = "automatic rollback is off, so " if off else ""
    return (
        f"{node} failed after {wrote} ({why}); {off_note}nothing was restored: the node keeps what was written"
        f"{cordon}; {back} puts it back"
    )


def resumed_node(records: list[JsonDict], node: str) -> bool:
    """The node's steps span two runs of its gate: a run stopped (killed, say) and another went on."""
    runs, seen = 0, set()
    for r in records:
        if r.get("step") == "gate" and node in (r.get("nodes") or []):
            runs += 1
        elif r.get("node") == node and r.get("step") != NODE_STEP and r.get("event") != "skipped":
            seen.add(runs)
    return len(seen) > 1
