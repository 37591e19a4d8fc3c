"""A user's shell for the rollout's notebook tests: one sandbox per test module, ``tmnb`` on PATH,
the sandbox's kubeconfig, the default reports folder moved out of the checkout, commands run from
the repository root (or where a test says), and what an executed notebook's cells show."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from conftest import ROOT
from tmnb.twin.sandbox import Sandbox

from .test_rollout_sandbox import fleet


@pytest.fixture(name="box", scope="module")
def box_fixture(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sandbox]:
    with Sandbox(fleet(), tmp_path_factory.mktemp("box") / "run", controller_interval=0.1) as sandbox:
        sandbox.cluster.ready_after = 0.2
        yield sandbox


@pytest.fixture(name="env", scope="module")
def env_fixture(box: Sandbox, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A user's shell: tmnb on PATH, this checkout's package, the sandbox's kubeconfig, and the
    default reports folder moved out of the checkout."""
    base = tmp_path_factory.mktemp("cmd-env")
    return {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "PYTHONPATH": os.pathsep.join(sys.path),
        "KUBECONFIG": str(box.write_kubeconfig(base / "kubeconfig")),
        "TMNB_REPORTS": str(base / "reports"),
    }


def start(command: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.Popen[bytes]:
    """``command`` as a user pastes it, from ``cwd`` (the repository root unless said; no JupyterLab
    around it)."""
    env = {k: v for k, v in env.items() if k != "JPY_SESSION_NAME"}
    return subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, stdout=subprocess.DEVNULL)


def shell(command: str, env: dict[str, str], cwd: Path = ROOT) -> int:
    return start(command, env, cwd).wait()


def command_04(out: Path, **params: str) -> str:
    """``tmnb run`` of 04-rollout on the sandbox, canary w2 and waves of 2 unless ``params`` say otherwise."""
    given = {"executor": "sandbox", "waves": "2", "canary": "w2", **params}
    return f"tmnb run notebooks/04-rollout.ipynb --out {out}" + "".join(f" -p {k} '{v}'" for k, v in given.items())


def run_04(env: dict[str, str], out: Path, **params: str) -> tuple[int, str]:
    """``tmnb run`` of 04-rollout; its exit status and every text its executed cells show."""
    code = shell(command_04(out, **params), env)
    return code, shown(out / "04-rollout.ipynb")


def shown(path: Path) -> str:
    """The texts of every output of every cell, hidden cells included."""
    texts = []
    for cell in nbformat.read(path, as_version=4).cells:
        for output in cell.get("outputs", []):
            texts.append(output.get("text", ""))
            data = output.get("data", {})
            texts.append(data.get("text/markdown") or data.get("text/plain", ""))
    return "\n".join(t for t in texts if t)


def state(env: dict[str, str], change_id: str) -> Path:
    """The default state folder of a change, as every entry point resolves it."""
    return Path(env["TMNB_REPORTS"]) / "rollouts" / change_id
