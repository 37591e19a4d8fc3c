"""Bundles are read as streams (issue 25, item 6): a member of 8 GiB of zeros (a few MB on disk)
is verified, refused by ``open`` and by 06-postmortem's check in bounded memory, measured in a
child process as its peak resident set (``VmHWM``). The bundle itself is written by a streaming generator."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

GIB = 1 << 30
MEMBER = 8 * GIB
#: the child's peak resident set, with the interpreter and tmnb's imports
LIMIT_KIB = 100 * 1024


class Zeros(io.RawIOBase):
    """``size`` zero bytes, read a MiB at a time and hashed on the way."""

    def __init__(self, size: int) -> None:
        self.left, self.sha = size, hashlib.sha256()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int:  # type: ignore[no-untyped-def]
        n = min(len(buffer), self.left, 1 << 20)
        buffer[:n] = bytes(n)
        self.sha.update(memoryview(buffer)[:n])
        self.left -= n
        return n


@pytest.fixture(scope="module")
def huge_bundle(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("huge") / "zeros.tar.gz"
    zeros = Zeros(MEMBER)
    with tarfile.open(path, "w:gz", compresslevel=1) as tar:
        info = tarfile.TarInfo("runs/r/zeros.bin")
        info.size = MEMBER
        tar.addfile(info, io.BufferedReader(zeros, 1 << 20))
        manifest = {"schema": "tmnb.evidence/v1", "files": {"runs/r/zeros.bin": zeros.sha.hexdigest()}}
        data = json.dumps(manifest).encode()
        info = tarfile.TarInfo("MANIFEST.json")  # last: a stream reader meets it after the member
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    assert path.stat().st_size < 100 << 20
    return path


def _peak(argv: list[str]) -> tuple[int, int, str]:
    """Exit status, peak RSS (KiB) and stderr of ``tmnb argv`` in a child."""
    code = textwrap.dedent(f"""
        import re, sys
        from tmnb.cli import main
        status = main({argv!r})
        # VmHWM: this process's own peak (getrusage's ru_maxrss keeps the forking pytest worker's peak
        # across exec, so under xdist it measured the worker, not tmnb)
        print(re.search(r"VmHWM:\\s+(\\d+) kB", open("/proc/self/status").read()).group(1), file=sys.stderr)
        sys.exit(status)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=1800, check=False)
    *lines, peak = done.stderr.splitlines()
    return done.returncode, int(peak), "\n".join(lines)


def test_an_8_gib_member_verifies_in_bounded_memory(huge_bundle):
    status, peak, err = _peak(["evidence", "verify", str(huge_bundle)])
    assert status == 0, err
    assert peak < LIMIT_KIB, f"peak RSS {peak} KiB"


def test_06_refuses_an_8_gib_bundle_before_a_kernel_in_bounded_memory(huge_bundle, tmp_path):
    out = tmp_path / "run"
    status, peak, err = _peak(["run", "06", "--out", str(out), "-p", "evidence", str(huge_bundle)])
    assert status == 2, err
    assert "unpacks to more than 4 GiB: not a tmnb bundle" in err
    assert peak < LIMIT_KIB, f"peak RSS {peak} KiB"
    assert not out.exists()


def test_open_refuses_an_8_gib_bundle_in_bounded_memory_and_writes_nothing(huge_bundle, tmp_path):
    target = tmp_path / "opened"
    status, peak, err = _peak(["evidence", "open", str(huge_bundle), "--to", str(target)])
    assert status == 2, err
    assert "unpacks to more than 4 GiB" in err
    assert peak < LIMIT_KIB, f"peak RSS {peak} KiB"
    assert not target.exists() and list(tmp_path.iterdir()) == []
