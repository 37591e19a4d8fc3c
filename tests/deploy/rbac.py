"""Just enough of Kubernetes RBAC to ask, of the shipped manifests, "may this ServiceAccount make
this request?" and "which rules did a run use?". Requests come from the sandbox's access log."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from conftest import ROOT

VERBS = {"POST": "create", "PATCH": "patch", "PUT": "update", "DELETE": "delete"}


@dataclass(frozen=True)
class Call:
    group: str
    resource: str  # with its subresource: "nodes/proxy", "pods/eviction"
    verb: str
    namespace: str  # "" for cluster-scoped resources and all-namespace lists


@dataclass(frozen=True)
class Rule:
    role: str
    group: str
    resource: str
    verb: str
    namespace: str  # "" when granted cluster-wide (a ClusterRoleBinding)


def call(method: str, path: str) -> Call | None:
    """The RBAC attributes of one API request; None for non-resource URLs (/version) and the
    sandbox's own node API (/sandbox/...), which the executor uses instead of SSH."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    namespace = ""
    if rest[:1] == ["namespaces"] and len(rest) >= 3:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] + (f"/{rest[2]}" if len(rest) >= 3 else "")
    verb = ("list" if len(rest) == 1 else "get") if method == "GET" else VERBS[method]
    return Call(group, resource, verb, namespace)


def calls(access_log: Path, since: int = 0) -> set[Call]:
    """Distinct calls of the access log's lines from ``since`` on (time, method, path, code)."""
    out = set()
    for line in access_log.read_text().splitlines()[since:]:
        _, method, path, _code = line.split()
        if (c := call(method, path)) is not None:
            out.add(c)
    return out


def grants(subject: str, *files: str) -> set[Rule]:
    """Every (group, resource, verb) the ServiceAccount ``tmnb/<subject>`` holds through the files."""
    docs = [d for f in files for d in yaml.safe_load_all((ROOT / "deploy" / f).read_text()) if d]
    roles = {(d["kind"], d["metadata"].get("namespace", ""), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("Role", "ClusterRole")}  # fmt: skip
    out = set()
    for binding in (d for d in docs if d["kind"] in ("RoleBinding", "ClusterRoleBinding")):
        if not any(s["kind"] == "ServiceAccount" and s["name"] == subject and s["namespace"] == "tmnb"
                   for s in binding["subjects"]):  # fmt: skip
            continue
        ref = binding["roleRef"]
        scope = binding["metadata"].get("namespace", "") if binding["kind"] == "RoleBinding" else ""
        role = roles[(ref["kind"], scope if ref["kind"] == "Role" else "", ref["name"])]
        for rule in role["rules"]:
            out |= {Rule(ref["name"], g, r, v, scope) for g in rule["apiGroups"] for r in rule["resources"]
                    for v in rule["verbs"]}  # fmt: skip
    return out


def allowing(rules: set[Rule], c: Call) -> set[Rule]:
    """The rules that authorize the call (a namespaced grant covers only its own namespace)."""
    return {r for r in rules if (r.group, r.resource, r.verb) == (c.group, c.resource, c.verb)
            and r.namespace in ("", c.namespace)}  # fmt: skip
