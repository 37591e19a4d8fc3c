"""Bundles are read as streams (issue 25, item 6): a member of 8 GiB of zeros (38 MB on disk) is
verified, refused by ``open`` and by 06-postmortem's check in bounded memory, measured in a child
process as its peak resident set (``VmHWM``). The bundle is assembled from gzip members, as the
format allows, rather than compressing 8 GiB."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
import tarfile
import textwrap
from pathlib import Path

import pytest

MIB = 1 << 20
MEMBER = 8 << 30
#: the child's peak resident set, with the interpreter and tmnb's imports
LIMIT_KIB = 100 * 1024
#: the sha256 of 8 GiB of zeros, as ``head -c 8G /dev/zero | sha256sum`` prints it (hashing them here
#: took 4 s of the module's 12)
ZEROS_SHA256 = "ebfb4ef19ae410f190327b5ebd312711263bc7579970e87d9c1e2d84e06b3c25"


def _gz(data: bytes) -> bytes:
    """One gzip member (level 1: its zeros inflate three times faster than level 9's)."""
    return gzip.compress(data, compresslevel=1, mtime=0)


@pytest.fixture(scope="module")
def huge_bundle(tmp_path_factory) -> Path:
    """The tar stream tarfile writes for the member and a manifest (the member's size needs a pax
    header: ustar's field ends at 8 GiB - 1), as gzip members read as one stream (RFC 1952 2.2): the
    header, one compressed MiB of zeros 8,192 times, then the manifest and the end of the archive.
    Only the verify reads all 8 GiB: the manifest's digest is ``ZEROS_SHA256``."""
    zeros = bytes(MIB)
    member = tarfile.TarInfo("runs/r/zeros.bin")
    member.size = MEMBER
    head = member.tobuf()
    manifest = json.dumps({"schema": "tmnb.evidence/v1", "files": {member.name: ZEROS_SHA256}}).encode()
    info = tarfile.TarInfo("MANIFEST.json")  # last: a stream reader meets it after the member
    info.size = len(manifest)
    tail = info.tobuf() + manifest + bytes(-len(manifest) % tarfile.BLOCKSIZE) + bytes(2 * tarfile.BLOCKSIZE)
    tail += bytes(-(len(head) + MEMBER + len(tail)) % tarfile.RECORDSIZE)  # as TarFile.close pads it
    path = tmp_path_factory.mktemp("huge") / "zeros.tar.gz"
    with path.open("wb") as out:
        out.write(_gz(head))
        out.writelines([_gz(zeros)] * (MEMBER // MIB))
        out.write(_gz(tail))
    assert path.stat().st_size < 100 << 20
    return path


def _peak(argv: list[str]) -> tuple[int, int, str]:
    """Exit status, peak RSS (KiB) and stderr of ``tmnb argv`` in a child."""
    code = textwrap.dedent(f"""
        import re, sys
        from tmnb.cli.main import main
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
