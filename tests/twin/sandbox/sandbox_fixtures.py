"""A two-node twin every sandbox test can reason about, served on a free loopback port (fixtures
imported by the test modules: a conftest here would shadow tests/conftest.py as module "conftest").

w1 and w2: 2 NUMA nodes x 4 cores x 2 threads (CPUs 0-3,8-11 on NUMA 0), static CPU manager with
CPUs 0,8 reserved, single-numa-node topology policy. On w1: two replicas of app/web (Guaranteed,
2 CPUs) under a PDB with maxUnavailable 1, a cache pod with an emptyDir, and one DaemonSet pod per node.
"""

from __future__ import annotations

import json
import ssl
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml

from conftest import require_tool
from factories import node, pod, settings, snapshot
from tmnb.snapshot import DisruptionBudget, KubeletInfo, OwnerRef, Snapshot
from tmnb.twin.sandbox import Sandbox

STATIC = {"cpuManagerPolicy": "static", "reservedSystemCPUs": "0,8", "topologyManagerPolicy": "single-numa-node"}


def twin() -> Snapshot:
    nodes = [node(n, kubelet=KubeletInfo(settings=settings(**STATIC))) for n in ("w1", "w2")]
    web = OwnerRef(
        kind="ReplicaSet", name="web-5d9c7", uid="rs-web", controller_kind="Deployment", controller_name="web"
    )
    cache = OwnerRef(kind="ReplicaSet", name="cache-7f6b8", uid="rs-cache")
    pods = [
        pod("web-5d9c7-aaaaa", "w1", owner=web, labels={"app": "web"}),
        pod("web-5d9c7-bbbbb", "w1", owner=web, labels={"app": "web"}),
        pod("cache-7f6b8-ccccc", "w1", cpu="1", owner=cache, labels={"app": "cache"}, volumes_emptydir=True),
    ]
    for n in ("w1", "w2"):
        ds = OwnerRef(kind="DaemonSet", name="node-exporter", uid="ds-ne")
        pods.append(
            pod(
                f"node-exporter-{n}",
                n,
                cpu="100m",
                qos="Burstable",
                namespace="monitoring",
                owner=ds,
                labels={"app": "ne"},
            )
        )
    pdb = DisruptionBudget(namespace="app", name="web-pdb", selector={"app": "web"}, max_unavailable="1")
    return snapshot(nodes, pods, disruption_budgets=[pdb])


@pytest.fixture(name="sandbox")
def sandbox_fixture(tmp_path: Path) -> Iterator[Sandbox]:
    with Sandbox(twin(), tmp_path / "run", controller_interval=0.1) as box:
        yield box


@pytest.fixture(name="kubeconfig")
def kubeconfig_fixture(sandbox: Sandbox, tmp_path: Path) -> Path:
    return sandbox.write_kubeconfig(tmp_path / "kubeconfig")


@pytest.fixture(name="kubectl")
def kubectl_fixture(kubeconfig: Path):  # type: ignore[no-untyped-def]
    """Run the real kubectl against the sandbox; returns the CompletedProcess."""
    binary = require_tool("kubectl")

    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [binary, "--kubeconfig", str(kubeconfig), *args],
            capture_output=True,
            text=True,
            input=stdin,
            timeout=60,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
        return done

    return run


def call(sandbox: Sandbox, kubeconfig: Path, method: str, path: str, body: object = None) -> tuple[int, bytes]:
    """One HTTPS request with the kubeconfig's token and CA; returns (status, body)."""
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(
        sandbox.url + path, data=data, method=method, headers={"Authorization": f"Bearer {token}"}
    )
    context = ssl.create_default_context(cafile=str(sandbox.cert))
    try:
        with urllib.request.urlopen(req, context=context, timeout=10) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as err:
        return err.code, err.read()
