"""Static properties of the shipped roles that no run can show: what must never be granted."""

from __future__ import annotations

from .rbac import grants


def test_collector_never_writes_and_keeps_nodes_proxy_in_a_role_of_its_own():
    granted = grants("tmnb-collector", "collector-rbac.yaml")
    assert {r.verb for r in granted} <= {"get", "list"}
    assert {r.role for r in granted if r.resource == "nodes/proxy"} == {"tmnb-collector-configz"}
    assert all(r.resource != "secrets" for r in granted)


def test_rollout_writes_only_cordons_evictions_and_its_test_pod():
    granted = grants("tmnb-rollout", "collector-rbac.yaml", "rollout-rbac.yaml")
    own = {r for r in granted if r.role.startswith("tmnb-rollout")}
    writes = {(r.resource, r.verb, r.namespace) for r in own if r.verb not in ("get", "list")}
    assert writes == {("nodes", "patch", ""), ("pods/eviction", "create", ""), ("pods", "create", "tmnb"),
                      ("pods", "delete", "tmnb")}  # fmt: skip


def test_node_pod_role_is_namespaced_and_minimal():
    granted = grants("tmnb-collector", "node-pod-collector-rbac.yaml")
    assert {(r.resource, r.verb, r.namespace) for r in granted} == {
        ("pods", "create", "tmnb-node-collector"), ("pods", "get", "tmnb-node-collector"),
        ("pods", "delete", "tmnb-node-collector"), ("pods/status", "get", "tmnb-node-collector"),
        ("pods/log", "get", "tmnb-node-collector")}  # fmt: skip
