"""The node operations a rollout needs, and the one place their POSIX commands are built.

Every step talks to a node through :class:`NodeOps`, whatever the executor (dry-run, local, ssh,
node pod, sandbox), so the code that changes a kubelet is the same code that rehearsed it. Each
file operation is a *constant* ``sh -c`` script whose paths and mode arrive as positional
arguments (``"$1"``, ``"$2"``) and whose data arrives on stdin: nothing a caller passes is ever
parsed by a shell, so a hostile path cannot inject a command.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Literal, Protocol

from tmnb.errors import RolloutError

KubeletAction = Literal["stop", "start", "restart"]
Op = Literal["read", "write", "move_aside", "remove", "checksum", "kubelet", "journal"]
KUBELET_ACTIONS: tuple[KubeletAction, ...] = ("stop", "start", "restart")
#: Exit status of the file scripts when the file does not exist (not an error: "absent" is a state).
ABSENT = 100
#: The journal is cut to its last bytes: enough for a restart's lines, never a day of logs.
JOURNAL_CAP = 2 << 20
#: $0 of every script: what ``ps`` and error messages show.
ARG0 = "tmnb"

_DNS1123_LABEL = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")

_EXISTS = '[ -e "$1" ] || [ -L "$1" ] || exit 100\n'
_READ = _EXISTS + 'exec cat -- "$1"\n'
_CHECKSUM = _EXISTS + 'exec sha256sum < "$1"\n'  # stdin: the output never carries (escaped) file names
_REMOVE = 'exec rm -f -- "$1"\n'
_MOVE_ASIDE = (
    _EXISTS
    + 'if [ -e "$2" ] || [ -L "$2" ]; then echo "tmnb: $2 exists already; not overwriting it" >&2; exit 1; fi\n'
    + 'exec mv -- "$1" "$2"\n'
)
# Atomic replace: the temporary file lives beside the target (same file system, so mv is a
# rename), is synced before the rename, and is removed on any failure or catchable signal (the
# traps are set before it exists). A SIGKILL can leave "$1.tmnb.XXXXXX", never a partial "$1".
_WRITE = """set -eu
tmp=
trap '[ -z "$tmp" ] || rm -f -- "$tmp"' EXIT
trap 'exit 1' HUP INT TERM
if [ -d "$1" ] && [ ! -L "$1" ]; then echo "tmnb: $1 is a directory" >&2; exit 1; fi
dir=$(dirname -- "$1")
umask 022
mkdir -p -- "$dir"
tmp=$(mktemp -- "$1.tmnb.XXXXXX")
cat > "$tmp"
chmod -- "$2" "$tmp"
sync -- "$tmp" 2>/dev/null || sync
mv -f -- "$tmp" "$1"
tmp=
sync -- "$dir" 2>/dev/null || true
"""
# journalctl's own exit status survives the pipe into tail (no pipefail in POSIX sh).
_JOURNAL = """n=$1
shift
exec 3>&1
rc=$( { { "$@"; echo $? >&4; } | tail -c "$n" >&3; } 4>&1 )
exit "$rc"
"""


class NodeOps(Protocol):
    """What a rollout step may do to one node; paths are absolute paths on the node."""

    node: str
    kind: str

    def read(self, path: str) -> bytes | None:
        """The file's bytes; None when it does not exist."""
        ...

    def write(self, path: str, data: bytes, mode: int) -> None:
        """Replace the file atomically with ``data`` and ``mode``, creating parent directories."""
        ...

    def move_aside(self, path: str, suffix: str) -> str | None:
        """Rename ``path`` to ``path + suffix`` (never over an existing file); None when absent."""
        ...

    def remove(self, path: str) -> None:
        """Delete the file; no error when it is absent (restoring "the file did not exist")."""
        ...

    def checksum(self, path: str) -> str | None:
        """sha256 hex of the file; None when absent."""
        ...

    def kubelet(self, action: KubeletAction) -> None:
        """``systemctl ACTION kubelet``: returns once systemd has done it, not once the node is Ready."""
        ...

    def journal_since(self, since: datetime) -> str:
        """The kubelet's journal since ``since``, its last :data:`JOURNAL_CAP` bytes at most."""
        ...

    @property
    def commands(self) -> list[list[str]]:
        """Every command run on the node (in dry-run: that would be run), as argv lists, in order."""
        ...


def validate_node_name(name: str) -> str:
    """A node name as Kubernetes allows it (DNS-1123 subdomain): it ends up in commands and pod specs."""
    if not isinstance(name, str) or len(name) > 253 or not _DNS1123_SUBDOMAIN.fullmatch(name):
        raise RolloutError(
            f"invalid node name {name!r}: expected a DNS-1123 subdomain "
            "(lower-case letters, digits, '-' and '.', at most 253 characters)"
        )
    return name


def node_path(path: str, *, node: str | None = None) -> str:
    """An absolute node path without ``..`` components or NUL bytes (so a root prefix cannot be escaped)."""
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        raise RolloutError(f"expected an absolute node path, got {path!r}", node=node)
    if ".." in path.split("/"):
        raise RolloutError(f"refusing the path {path!r}: '..' could leave the node's root", node=node)
    return path


def rooted(root: str, path: str, *, node: str | None = None) -> str:
    """Where the node path ``path`` is under ``root`` ("/" on the node itself)."""
    path = node_path(path, node=node)
    base = root.rstrip("/")
    return base + path if base else path


def journal_since_arg(since: datetime) -> str:
    """``--since`` in UTC, which journalctl accepts with the zone spelled out; naive times are UTC."""
    when = since.replace(tzinfo=UTC) if since.tzinfo is None else since.astimezone(UTC)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def command_for(
    op: Op,
    path: str = "",
    *,
    mode: int | None = None,
    suffix: str = "",
    action: KubeletAction | None = None,
    since: datetime | None = None,
    systemctl: Sequence[str] = ("systemctl",),
    journalctl: Sequence[str] = ("journalctl",),
    cap: int = JOURNAL_CAP,
) -> list[str]:
    """The argv that performs ``op`` on the node. ``path`` is the path as the command sees it
    (root prefix already applied); file data, when any, goes on the command's stdin."""
    if op == "kubelet":
        if action not in KUBELET_ACTIONS:
            raise RolloutError(f"unknown kubelet action {action!r}: expected one of {', '.join(KUBELET_ACTIONS)}")
        return [*systemctl, action, "kubelet"]
    if op == "journal":
        if since is None:
            raise RolloutError("reading the journal needs a start time")
        argv = [*journalctl, "-u", "kubelet", "--since", journal_since_arg(since), "--no-pager", "-o", "short-iso"]
        return ["sh", "-c", _JOURNAL, ARG0, str(cap), *argv]
    node_path(path)
    if op == "read":
        return ["sh", "-c", _READ, ARG0, path]
    if op == "checksum":
        return ["sh", "-c", _CHECKSUM, ARG0, path]
    if op == "remove":
        return ["sh", "-c", _REMOVE, ARG0, path]
    if op == "move_aside":
        if not suffix or "/" in suffix or "\0" in suffix:
            raise RolloutError(f"invalid suffix {suffix!r}: expected a non-empty file name suffix without '/'")
        return ["sh", "-c", _MOVE_ASIDE, ARG0, path, path + suffix]
    if op == "write":
        if not isinstance(mode, int) or not 0 <= mode <= 0o7777:
            raise RolloutError(f"invalid file mode {mode!r}: expected an integer from 0 to 0o7777")
        return ["sh", "-c", _WRITE, ARG0, path, f"{mode:04o}"]
    raise RolloutError(f"unknown node operation {op!r}")


def parse_checksum(output: bytes) -> str:
    """The digest from ``sha256sum`` output ("HEX  -")."""
    digest = output.decode("ascii", "replace").split(maxsplit=1)[:1]
    if not digest or not re.fullmatch(r"[0-9a-f]{64}", digest[0]):
        raise RolloutError(f"unexpected sha256sum output: {output[:80]!r}")
    return digest[0]
