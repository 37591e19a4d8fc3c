"""Reading input files with a size cap and strict UTF-8, so bad input ends in an ``InputError``.

Files copied off nodes are sometimes not what their name says: a device (``/dev/zero``), a
truncated copy, a file in Latin-1. Reading them whole with ``read_text()`` either never ends, runs
the machine out of memory, or raises ``UnicodeDecodeError`` far from the file's name. Every reader
here stops at a cap and names the file, the byte and what was expected instead.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from tmnb.errors import InputError

KIB = 1024
MIB = 1024 * KIB

#: sysfs attributes are at most one page (4 KiB, 64 KiB on POWER); a little more is allowed.
SYSFS_LIMIT = 256 * KIB
#: kubelet config, drop-ins, systemd units, env files, lscpu captures, PodLists of one node.
TEXT_LIMIT = 16 * MIB
#: checkpoint files: a few hundred bytes per container even on a dense node.
STATE_LIMIT = 64 * MIB

_CHUNK = 64 * KIB


def _size_text(n: int) -> str:
    return f"{n // MIB} MiB" if n >= MIB and n % MIB == 0 else f"{n // KIB} KiB" if n >= KIB else f"{n} bytes"


def read_capped(path: Path | str, *, limit: int, what: str, source: str | None = None) -> bytes:
    """At most ``limit`` bytes of ``path``; a longer file (or a device that never ends) is an error."""
    label = source or str(path)
    chunks: list[bytes] = []
    total = 0
    try:
        if stat.S_ISFIFO(os.stat(path).st_mode):  # opening a named pipe waits for a writer, forever
            raise InputError(f"is a named pipe; expected {what}", source=label)
        with open(path, "rb") as handle:
            while True:
                chunk = handle.read(min(_CHUNK, limit + 1 - total))
                if not chunk:
                    break
                chunks.append(chunk)
                total += len(chunk)
                if total > limit:
                    raise InputError(
                        f"larger than {_size_text(limit)}; expected {what} (is it a device or the wrong file?)",
                        source=label,
                    )
    except FileNotFoundError:
        raise InputError(f"file is missing; expected {what}", source=label) from None
    except IsADirectoryError:
        raise InputError(f"is a directory; expected {what}", source=label) from None
    except PermissionError:
        raise InputError(f"permission denied; expected {what}", source=label) from None
    except ValueError:  # the only one open() and stat() raise: a NUL byte in the name
        raise InputError(f"not a file name (it holds a NUL byte); expected {what}", source=repr(label)) from None
    except OSError as exc:  # a symlink loop, a dangling mount, an I/O error
        raise InputError(f"cannot read ({exc.strerror or exc}); expected {what}", source=label) from None
    return b"".join(chunks)


def decode_utf8(data: bytes, *, what: str, source: str | None = None) -> str:
    """Strict UTF-8; the error names the first bad byte, its offset and its line."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        line = data.count(b"\n", 0, err.start) + 1
        raise InputError(
            f"not UTF-8 text: byte 0x{data[err.start]:02x} at offset {err.start}; expected {what}",
            source=source,
            line=line,
        ) from None


def read_text(path: Path | str, *, limit: int = TEXT_LIMIT, what: str, source: str | None = None) -> str:
    """A capped, strictly UTF-8 text file."""
    label = source or str(path)
    return decode_utf8(read_capped(path, limit=limit, what=what, source=label), what=what, source=label)


def read_sysfs(path: Path | str, *, what: str, source: str | None = None) -> str:
    """One sysfs attribute (a short ASCII line)."""
    return read_text(path, limit=SYSFS_LIMIT, what=what, source=source)


def go_read_error(path: Path, shown: str) -> str | None:
    """Go's ``os.ReadFile`` error for ``path`` (named ``shown``, as on the node) when it cannot be
    read as a file, in Go's words; None when it can. A dangling symlink reads as missing, as in Go."""
    try:
        if path.is_dir():
            return f"read {shown}: is a directory"
        path.stat()
    except FileNotFoundError:
        return f"open {shown}: no such file or directory"
    except PermissionError:
        return f"open {shown}: permission denied"
    except OSError as err:
        if err.errno == errno.ELOOP:
            return f"open {shown}: too many levels of symbolic links"
        raise
    if not os.access(path, os.R_OK):
        return f"open {shown}: permission denied"
    return None
