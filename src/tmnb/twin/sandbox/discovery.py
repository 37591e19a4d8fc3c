"""Legacy API discovery: what kubectl and client-go read to map kinds to URLs.

Aggregated discovery (``as=APIGroupDiscoveryList``) is answered with the legacy documents and
``Content-Type: application/json``; client-go then falls back to per-group-version lists.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Resource:
    name: str
    kind: str
    namespaced: bool
    verbs: tuple[str, ...]
    short_names: tuple[str, ...] = ()
    singular: str = ""
    extra: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "verbs": list(self.verbs),
        }
        if self.short_names:
            out["shortNames"] = list(self.short_names)
        return {**out, **self.extra}


READ = ("get", "list")
GROUPS: dict[str, tuple[Resource, ...]] = {
    "v1": (
        Resource("nodes", "Node", False, (*READ, "patch"), ("no",), "node"),
        Resource("nodes/proxy", "NodeProxyOptions", False, ("get",)),
        Resource("pods", "Pod", True, ("create", "delete", *READ), ("po",), "pod"),
        Resource("pods/eviction", "Eviction", True, ("create",), extra={"group": "policy", "version": "v1"}),
        Resource("pods/log", "Pod", True, ("get",)),
        Resource("events", "Event", True, ("create", *READ), ("ev",), "event"),
        Resource("namespaces", "Namespace", False, READ, ("ns",), "namespace"),
    ),
    "apps/v1": (
        Resource("daemonsets", "DaemonSet", True, READ, ("ds",), "daemonset"),
        Resource("replicasets", "ReplicaSet", True, READ, ("rs",), "replicaset"),
        Resource("statefulsets", "StatefulSet", True, READ, ("sts",), "statefulset"),
    ),
    "batch/v1": (Resource("jobs", "Job", True, READ, (), "job"),),
    "policy/v1": (
        Resource("poddisruptionbudgets", "PodDisruptionBudget", True, READ, ("pdb",), "poddisruptionbudget"),
    ),
    "topology.node.k8s.io/v1alpha2": (
        Resource(
            "noderesourcetopologies", "NodeResourceTopology", False, READ, ("node-res-topo",), "noderesourcetopology"
        ),
    ),
}


def resource(group_version: str, name: str) -> Resource | None:
    return next((r for r in GROUPS.get(group_version, ()) if r.name == name), None)


def api_versions(server_address: str) -> dict[str, Any]:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }


def api_group_list() -> dict[str, Any]:
    groups = []
    for gv in GROUPS:
        if "/" not in gv:
            continue
        group, version = gv.split("/")
        entry = {"groupVersion": gv, "version": version}
        groups.append({"name": group, "versions": [entry], "preferredVersion": entry})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(group: str) -> dict[str, Any] | None:
    listed = [g for g in api_group_list()["groups"] if g["name"] == group]
    return {"kind": "APIGroup", "apiVersion": "v1", **listed[0]} if listed else None


def resource_list(group_version: str) -> dict[str, Any] | None:
    if group_version not in GROUPS:
        return None
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": [r.to_json() for r in GROUPS[group_version]],
    }
