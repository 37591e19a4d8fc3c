"""A real OpenSSH server on 127.0.0.1 for the ssh transport and executor tests (a fixture module
imported by the test modules, as tests/twin/sandbox/sandbox_fixtures.py is)."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import require_tool


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(name="sshd")
def sshd_fixture(tmp_path: Path) -> Iterator[tuple[int, tuple[str, ...]]]:
    """A real sshd on 127.0.0.1 accepting one generated key for the current user: (port, ssh options)."""
    sshd_bin = require_tool("sshd")
    keygen = require_tool("ssh-keygen")
    require_tool("ssh")
    d = tmp_path / "ssh"
    d.mkdir()
    for name in ("host", "client"):
        subprocess.run([keygen, "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    (d / "authorized_keys").write_text((d / "client.pub").read_text())
    port = free_port()
    (d / "sshd_config").write_text(
        f"ListenAddress 127.0.0.1\nPort {port}\nHostKey {d / 'host'}\nAuthorizedKeysFile {d / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin prohibit-password\n"
        f"StrictModes no\nUsePAM no\nPidFile {d / 'sshd.pid'}\n"
    )
    subprocess.run(["mkdir", "-p", "/run/sshd"], check=True)
    proc = subprocess.Popen([sshd_bin, "-D", "-e", "-f", str(d / "sshd_config")], stderr=subprocess.PIPE)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.05)
    control = Path(tempfile.mkdtemp(prefix="tmnb-ssh-"))
    options = ("-F", "/dev/null", "-i", str(d / "client"), "-o", "IdentitiesOnly=yes",
               "-o", "StrictHostKeyChecking=no", "-o", f"UserKnownHostsFile={d / 'known_hosts'}",
               # one connection for the test's dozens of commands, as an ssh config with
               # ControlMaster gives them: a key exchange each took most of the test's time (the
               # socket in a short directory: tmp_path is longer than a socket's path may be)
               "-o", "ControlMaster=auto", "-o", f"ControlPath={control / 'c'}", "-o", "ControlPersist=60")  # fmt: skip
    yield port, options
    subprocess.run(["ssh", *options, "-O", "exit", "-p", str(port), "127.0.0.1"], capture_output=True, check=False)
    shutil.rmtree(control, ignore_errors=True)
    proc.terminate()
    proc.wait(timeout=10)
