"""The shipped RBAC grants the collector what it calls and nothing that writes."""

from __future__ import annotations

import yaml

from conftest import ROOT

#: (API group, resource, verb) of every call tmnb.sources.cluster makes.
COLLECTOR_CALLS = {
    ("", "nodes", "list"),
    ("", "pods", "list"),
    ("", "events", "list"),
    ("", "nodes/configz", "get"),
    ("apps", "replicasets", "list"),
    ("batch", "jobs", "list"),
    ("policy", "poddisruptionbudgets", "list"),
    ("topology.node.k8s.io", "noderesourcetopologies", "list"),
}


def rules(path: str, kind: str) -> set[tuple[str, str, str]]:
    docs = [d for d in yaml.safe_load_all((ROOT / "deploy" / path).read_text()) if d and d["kind"] == kind]
    return {(g, r, v) for d in docs for rule in d["rules"] for g in rule["apiGroups"] for r in rule["resources"]
            for v in rule["verbs"]}  # fmt: skip


def test_collector_role_is_read_only_and_sufficient():
    granted = rules("collector-rbac.yaml", "ClusterRole")
    assert {v for _, _, v in granted} <= {"get", "list", "watch"}
    assert granted >= COLLECTOR_CALLS
    assert not any(r == "nodes/proxy" for _, r, _ in granted)  # only as a commented fallback
    assert "nodes/proxy" in (ROOT / "deploy" / "collector-rbac.yaml").read_text()


def test_node_pod_role_is_namespaced_and_minimal():
    granted = rules("node-pod-collector-rbac.yaml", "Role")
    assert granted == {("", "pods", "create"), ("", "pods", "get"), ("", "pods", "delete"),
                       ("", "pods/status", "get"), ("", "pods/log", "get")}  # fmt: skip
