"""The REST API: maps Kubernetes URLs and verbs onto the cluster, and answers as the API server does.

Also a small ``/sandbox/v1`` API for what has no Kubernetes URL: stopping, starting and restarting a node's kubelet,
reading its journal, switching faults and ticking the controllers.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from tmnb.errors import TmnbError
from tmnb.twin.sandbox import discovery, tables
from tmnb.twin.sandbox.cluster import CPUSET_ANNOTATION, OWNER_RESOURCES, Cluster, namespaces
from tmnb.twin.sandbox.errors import ApiError, not_found
from tmnb.twin.sandbox.faults import Faults
from tmnb.twin.sandbox.selectors import paginate, select
from tmnb.versions import KubeVersion

Obj = dict[str, Any]
_STORED = ("nodes", "pods", "events", "poddisruptionbudgets", *OWNER_RESOURCES.values())


@dataclass
class Request:
    method: str
    path: str
    query: Mapping[str, str]
    headers: Mapping[str, str]
    body: bytes = b""

    def json(self) -> Obj:
        try:
            doc = json.loads(self.body or b"{}")
        except json.JSONDecodeError as exc:
            raise ApiError(400, "BadRequest", f"the body of the request was in an unknown format: {exc.msg}") from None
        if not isinstance(doc, dict):
            raise ApiError(400, "BadRequest", "the body of the request must be a JSON object")
        return doc


@dataclass
class Response:
    code: int
    body: Any
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)

    def encoded(self) -> bytes:
        return self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()


def status_success(code: int) -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": code}


def version_info(server_version: str) -> Obj:
    """``/version`` of the twinned cluster's API server."""
    v = KubeVersion.parse(server_version)
    return {
        "major": str(v.major),
        "minor": str(v.minor),
        "gitVersion": server_version,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-11-01T00:00:00Z",
        "goVersion": "go1.25.3",
        "compiler": "gc",
        "platform": "linux/amd64",
    }


class Api:
    """Dispatch one authenticated request; ``faults`` is consulted for Kubernetes paths only."""

    def __init__(self, cluster: Cluster, faults: Faults, server_address: str) -> None:
        self.cluster = cluster
        self.server_address = server_address
        self.set_faults(faults)

    def set_faults(self, faults: Faults) -> None:
        """Switch faults while serving; nodes listed never-ready stay down at their next restart, and a
        deviating node's kubelet deviates from its next restart with a changed configuration on."""
        self.faults = faults
        for name, kubelet in self.cluster.kubelets.items():
            kubelet.never_ready = name in faults.never_ready
            kubelet.reject_new_pods = name in faults.reject_pods
            kubelet.deviation = faults.deviate.get(name)

    def handle(self, req: Request) -> Response:
        try:
            if req.path.startswith("/sandbox/"):
                return self._sandbox(req)
            self.faults.apply(req.path)
            return self._kube(req)
        except ApiError as exc:
            retry = (exc.details or {}).get("retryAfterSeconds")
            headers = {"Retry-After": str(retry)} if retry is not None else {}
            return Response(exc.code, exc.status(), headers=headers)
        except TmnbError as exc:
            return Response(422, ApiError(422, "Invalid", str(exc)).status())

    # ------------------------------------------------------------------ routing
    def _kube(self, req: Request) -> Response:
        parts = [p for p in req.path.split("/") if p]
        if req.path in ("/readyz", "/livez", "/healthz"):
            return Response(200, b"ok", "text/plain")
        if req.path.rstrip("/") == "/version":
            return Response(200, version_info(self.cluster.server_version))
        if parts == ["api"]:
            return Response(200, discovery.api_versions(self.server_address))
        if parts == ["apis"]:
            return Response(200, discovery.api_group_list())
        if parts[:2] == ["api", "v1"]:
            gv, rest = "v1", parts[2:]
        elif parts[:1] == ["apis"] and len(parts) >= 2:
            if len(parts) == 2:
                group = discovery.api_group(parts[1])
                if group is None:
                    raise ApiError(404, "NotFound", "the server could not find the requested resource")
                return Response(200, group)
            gv, rest = f"{parts[1]}/{parts[2]}", parts[3:]
        else:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if not rest:
            listed = discovery.resource_list(gv)
            if listed is None:
                raise ApiError(404, "NotFound", "the server could not find the requested resource")
            return Response(200, listed)
        namespace = None
        if rest[0] == "namespaces" and len(rest) >= 3:
            namespace, rest = rest[1], rest[2:]
        resource, name, sub = rest[0], (rest[1] if len(rest) > 1 else None), rest[2:]
        if discovery.resource(gv, resource) is None:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return self._resource(req, gv, resource, namespace, name, sub)

    def _resource(
        self, req: Request, gv: str, resource: str, ns: str | None, name: str | None, sub: list[str]
    ) -> Response:
        c = self.cluster
        verb = req.method
        if resource == "nodes" and name and sub[:1] == ["proxy"]:
            return self._proxy(name, sub[1:])
        if resource == "pods" and name and sub == ["eviction"] and verb == "POST":
            body = req.json()
            if body.get("kind") not in (None, "Eviction"):
                raise ApiError(400, "BadRequest", f"expected an Eviction, got {body.get('kind')!r}")
            c.evict(ns or "default", name)
            return Response(201, status_success(201))
        if resource == "pods" and name and sub == ["log"] and verb == "GET":
            return Response(200, self._log(c.get("pods", ns or "default", name)), "text/plain")
        if sub:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        if verb == "GET" and req.query.get("watch") in ("true", "1"):
            raise ApiError(405, "MethodNotAllowed", "watch is not supported by the tmnb sandbox")
        if verb == "GET":
            if name is None:
                return self._list(req, gv, resource, ns)
            obj = self._get(resource, ns or "", name)
            if tables.wants_table(req.headers.get("Accept", "")):
                return Response(
                    200,
                    tables.table(resource, [obj], {"resourceVersion": str(c.rv)}, req.query.get("includeObject", "")),
                )
            return Response(200, obj)
        if verb == "PATCH" and resource == "nodes" and name:
            if "json-patch" in req.headers.get("Content-Type", ""):
                raise ApiError(
                    415, "UnsupportedMediaType", "the sandbox accepts merge and strategic merge patches only"
                )
            return Response(200, c.patch_node(name, req.json()))
        if verb == "POST" and resource == "pods" and name is None:
            return Response(201, c.create_pod(ns or "default", req.json()))
        if verb == "POST" and resource == "events" and name is None:
            return Response(201, c.create_event(ns or "default", req.json()))
        if verb == "DELETE" and resource == "pods" and name:
            return Response(200, c.delete_pod(ns or "default", name))
        raise ApiError(
            405,
            "MethodNotAllowed",
            f"the server does not allow this method on the requested resource ({verb} {resource})",
        )

    # ------------------------------------------------------------------ verbs
    def _all(self, resource: str, ns: str | None) -> list[Obj]:
        if resource in _STORED:
            return self.cluster.items(resource, ns)
        if resource == "noderesourcetopologies":
            return self.cluster.nrt_objects()
        return [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": n, "uid": n}, "status": {"phase": "Active"}}
            for n in namespaces(self.cluster)
        ]

    def _get(self, resource: str, ns: str, name: str) -> Obj:
        found = [o for o in self._all(resource, ns if resource in _STORED else None) if o["metadata"]["name"] == name]
        if not found:
            raise not_found(resource, name, "" if resource in _STORED else "topology.node.k8s.io")
        return found[0]

    def _list(self, req: Request, gv: str, resource: str, ns: str | None) -> Response:
        table = tables.wants_table(req.headers.get("Accept", ""))
        known = discovery.resource(gv, resource)
        if known is None:  # the router sends known resources only
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        kind = known.kind
        if resource in _STORED and not table:
            return Response(200, self.cluster.list_json(resource, ns, req.query, kind, gv))
        if resource in _STORED:
            page, meta = self.cluster.list_page(resource, ns, req.query)
        else:
            page, meta = paginate(select(self._all(resource, ns), req.query), req.query, self.cluster.rv)
        if table:
            return Response(200, tables.table(resource, page, meta, req.query.get("includeObject", "")))
        return Response(200, {"kind": f"{kind}List", "apiVersion": gv, "metadata": meta, "items": page})

    def _proxy(self, node: str, path: list[str]) -> Response:
        if path == ["configz"]:
            return Response(200, self.cluster.configz(node))
        if path == ["healthz"]:
            self.cluster.configz(node)  # raises 503 while the kubelet is down
            return Response(200, b"ok", "text/plain")
        raise ApiError(404, "NotFound", "the server could not find the requested resource")

    @staticmethod
    def _log(pod: Obj) -> bytes:
        m, status = pod["metadata"], pod["status"]
        if status.get("phase") != "Running":
            container = pod["spec"]["containers"][0]["name"]
            waiting = status.get("reason") or "ContainerCreating"
            message = f'container "{container}" in pod "{m["name"]}" is waiting to start: {waiting}'
            raise ApiError(400, "BadRequest", message)
        cpus = (m.get("annotations") or {}).get(CPUSET_ANNOTATION, "shared pool")
        where = pod["spec"].get("nodeName")
        return (
            f"{status.get('startTime', '')} started {m['namespace']}/{m['name']} on {where} (cpus: {cpus})\n".encode()
        )

    # ------------------------------------------------------------------ /sandbox/v1
    def _sandbox(self, req: Request) -> Response:
        parts = [p for p in req.path.split("/") if p][2:]
        routes: dict[tuple[str, ...], Callable[[], Response]] = {
            ("GET", "faults"): lambda: Response(200, self.faults.to_json()),
            ("PUT", "faults"): lambda: self._put_faults(req.json()),
            ("POST", "reconcile"): lambda: Response(200, {"created": self.cluster.reconcile()}),
        }
        if len(parts) == 3 and parts[0] == "nodes":
            node = parts[1]
            if node not in self.cluster.kubelets:
                raise not_found("nodes", node)
            if req.method == "POST" and parts[2] == "stop":
                self.cluster.stop_kubelet(node)
                return Response(200, {"node": node, "ready": False, "error": None})
            if req.method == "POST" and parts[2] in ("restart", "start"):
                error = self.cluster.restart_kubelet(node)
                return Response(200, {"node": node, "ready": error is None, "error": error})
            if req.method == "GET" and parts[2] == "journal":
                return Response(200, self.cluster.kubelets[node].journal().encode(), "text/plain")
            if req.method == "GET" and parts[2] == "root":
                return Response(200, {"node": node, "root": str(self.cluster.kubelets[node].root)})
        route = routes.get((req.method, *parts))
        if route is None:
            raise ApiError(404, "NotFound", "no such sandbox endpoint")
        return route()

    def _put_faults(self, doc: Obj) -> Response:
        self.set_faults(Faults.from_json(doc, seed=self.faults.seed))
        return Response(200, self.faults.to_json())
