"""Stopping and starting a sandbox kubelet through the sandbox API, as ``systemctl stop kubelet``
and ``systemctl start kubelet`` do on a node."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sandbox_fixtures import call, kubeconfig_fixture, sandbox_fixture  # noqa: F401  (fixtures)

from tmnb.parse.klog import parse_kubelet_log
from tmnb.twin.sandbox import Sandbox


def _ready(sandbox: Sandbox, name: str) -> str:
    node = sandbox.cluster.get("nodes", "", name)
    return next(c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready")


@pytest.mark.clock
def test_stop_then_start(sandbox: Sandbox, kubeconfig: Path) -> None:
    status, body = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w1/stop")
    assert status == 200 and json.loads(body) == {"node": "w1", "ready": False, "error": None}
    assert _ready(sandbox, "w1") == "Unknown" and _ready(sandbox, "w2") == "True"
    status, body = call(sandbox, kubeconfig, "GET", "/api/v1/nodes/w1/proxy/configz")
    assert status == 503 and b"connection refused" in body
    pods = sandbox.cluster.items("pods", "app")
    assert {p["status"]["phase"] for p in pods if p["spec"]["nodeName"] == "w1"} == {"Running"}  # containers live on
    status, journal = call(sandbox, kubeconfig, "GET", "/sandbox/v1/nodes/w1/journal")
    assert (
        journal.decode()
        .splitlines()[-1]
        .endswith(" systemd[1]: Stopped kubelet.service - kubelet: The Kubernetes Node Agent.")
    )
    assert parse_kubelet_log(journal.decode()).records[-1].name == "kubelet_stop"

    status, body = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w1/start")
    assert status == 200 and json.loads(body) == {"node": "w1", "ready": True, "error": None}
    assert _ready(sandbox, "w1") == "True"
    status, body = call(sandbox, kubeconfig, "GET", "/api/v1/nodes/w1/proxy/configz")
    assert status == 200 and json.loads(body)["kubeletconfig"]["cpuManagerPolicy"] == "static"
    assert {p["status"]["phase"] for p in sandbox.cluster.items("pods", "app") if p["spec"]["nodeName"] == "w1"} == {
        "Running"
    }


def test_stop_of_an_unknown_node_is_not_found(sandbox: Sandbox, kubeconfig: Path) -> None:
    status, body = call(sandbox, kubeconfig, "POST", "/sandbox/v1/nodes/w9/stop")
    assert status == 404 and json.loads(body)["reason"] == "NotFound"
