"""The official kubernetes Python client against the sandbox, and what it must not see."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml
from kubernetes import client, config
from kubernetes.client.rest import ApiException
from sandbox_fixtures import kubeconfig_fixture, sandbox_fixture  # noqa: F401  (fixtures)

from tmnb.twin.sandbox import Sandbox


@pytest.fixture
def core(kubeconfig: Path) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(str(kubeconfig)))


def test_list_nodes(core: client.CoreV1Api) -> None:
    nodes = core.list_node().items
    assert [n.metadata.name for n in nodes] == ["w1", "w2"]
    assert all(c.status == "True" for n in nodes for c in n.status.conditions if c.type == "Ready")
    assert nodes[0].status.allocatable["cpu"] == "15"


def test_list_pods_paginated(core: client.CoreV1Api) -> None:
    names, token, pages = [], None, 0
    while True:
        page = core.list_pod_for_all_namespaces(limit=2, _continue=token)
        names += [(p.metadata.namespace, p.metadata.name) for p in page.items]
        pages += 1
        token = page.metadata._continue
        if not token:
            break
        assert page.metadata.remaining_item_count == 5 - len(names)
    assert pages == 3
    assert names == sorted(names) and len(set(names)) == 5
    on_w2 = core.list_pod_for_all_namespaces(field_selector="spec.nodeName=w2").items
    assert [p.metadata.name for p in on_w2] == ["node-exporter-w2"]


def test_configz_via_node_proxy(core: client.CoreV1Api) -> None:
    raw = core.connect_get_node_proxy_with_path("w2", "configz", _preload_content=False).data
    assert json.loads(raw)["kubeletconfig"]["topologyManagerPolicy"] == "single-numa-node"


def test_eviction_allowed_then_refused_with_the_api_servers_429(core: client.CoreV1Api, sandbox: Sandbox) -> None:
    sandbox.cluster.patch_node("w2", {"spec": {"unschedulable": True}})  # no room: replacements stay Pending
    sandbox.cluster.patch_node("w1", {"spec": {"unschedulable": True}})

    def evict(name: str) -> None:
        body = client.V1Eviction(metadata=client.V1ObjectMeta(name=name, namespace="app"))
        core.create_namespaced_pod_eviction(name, "app", body)

    evict("web-5d9c7-aaaaa")
    with pytest.raises(ApiException) as refused:
        evict("web-5d9c7-bbbbb")
    assert refused.value.status == 429
    assert json.loads(refused.value.body) == {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": "Cannot evict pod as it would violate the pod's disruption budget.",
        "reason": "TooManyRequests",
        "details": {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": "The disruption budget web-pdb needs 1 healthy pods and has 1 currently",
                }
            ]
        },
        "code": 429,
    }
    policy = client.PolicyV1Api(core.api_client)
    status = policy.read_namespaced_pod_disruption_budget("web-pdb", "app").status
    assert (status.current_healthy, status.desired_healthy, status.disruptions_allowed) == (1, 1, 0)
    with pytest.raises(ApiException) as gone:
        core.read_namespaced_pod("web-5d9c7-aaaaa", "app")
    assert gone.value.status == 404


def test_replacement_is_scheduled_and_admitted(core: client.CoreV1Api, sandbox: Sandbox) -> None:
    core.delete_namespaced_pod("web-5d9c7-aaaaa", "app")
    sandbox.cluster.reconcile()  # the background controller may already have made the replacement
    web = core.list_namespaced_pod("app", label_selector="app=web").items
    assert len(web) == 2
    new = next(p for p in web if p.metadata.name not in ("web-5d9c7-bbbbb",))
    assert new.metadata.name.startswith("web-5d9c7-") and new.metadata.owner_references[0].uid == "rs-web"
    assert (new.spec.node_name, new.status.phase) == ("w2", "Running")


def test_every_request_needs_the_token(sandbox: Sandbox, kubeconfig: Path) -> None:
    context = ssl.create_default_context(cafile=str(sandbox.cert))
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        req = urllib.request.Request(f"{sandbox.url}/api/v1/nodes", headers=headers)
        with pytest.raises(urllib.error.HTTPError) as denied:
            urllib.request.urlopen(req, context=context, timeout=5)
        assert denied.value.code == 401
        assert json.loads(denied.value.read())["reason"] == "Unauthorized"


def test_the_token_is_only_in_the_kubeconfig(core: client.CoreV1Api, sandbox: Sandbox, kubeconfig: Path) -> None:
    core.list_node()
    token = yaml.safe_load(kubeconfig.read_text())["users"][0]["user"]["token"]
    assert len(token) >= 32 and kubeconfig.stat().st_mode & 0o777 == 0o600
    for path in sandbox.run_dir.rglob("*"):
        if path.is_file():
            assert token not in path.read_text(errors="replace"), path
    assert "GET /api/v1/nodes 200" in (sandbox.run_dir / "access.log").read_text()


def test_server_binds_loopback_only(sandbox: Sandbox) -> None:
    assert sandbox.url.startswith("https://127.0.0.1:")
    assert sandbox._httpd is not None and sandbox._httpd.server_address[0] == "127.0.0.1"
