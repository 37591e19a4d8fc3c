"""A loopback HTTP server speaking enough of the Kubernetes API for the collector: real sockets,
the real ``kubernetes`` client, pagination with limit/continue, and scripted faults per path."""

from __future__ import annotations

import json
import socket
import threading
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import yaml

TOKEN = "s3cr3t-t0ken-never-in-snapshots"


@dataclass
class FakeApi:
    """Resources by list path; ``faults[path]`` = statuses served (in order) before the real answer;
    ``fixed[path]`` = a status served every time."""

    lists: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    objects: dict[str, Any] = field(default_factory=dict)
    faults: dict[str, list[int]] = field(default_factory=lambda: defaultdict(list))
    fixed: dict[str, int] = field(default_factory=dict)
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    expire_continue_once: set[str] = field(default_factory=set)
    hook: Callable[[str, str, bytes], tuple[int, Any] | None] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def answer(self, method: str, url: str, auth: str | None, body: bytes = b"") -> tuple[int, Any, dict[str, str]]:
        parts = urlsplit(url)
        path, query = parts.path, parse_qs(parts.query)
        with self.lock:
            self.requests.append((method, url, auth))
            if auth != f"Bearer {TOKEN}":
                return 401, _status(401, "Unauthorized"), {}
        if self.hook is not None:
            hooked = self.hook(method, path, body)
            if hooked is not None:
                return hooked[0], hooked[1], {}
        with self.lock:
            if path in self.fixed:
                return self.fixed[path], _status(self.fixed[path], f"scripted {self.fixed[path]}"), {}
            if self.faults.get(path):
                code = self.faults[path].pop(0)
                return code, _status(code, f"scripted {code}"), {"Retry-After": "0"} if code == 429 else {}
        if path in self.objects:
            return 200, self.objects[path], {}
        if path not in self.lists:
            return 404, _status(404, f"the server could not find the requested resource ({path})"), {}
        items = self.lists[path]
        selector = query.get("fieldSelector", [""])[0]
        if selector:  # path=value, as the collector asks: reason=..., metadata.name=..., spec.nodeName=...
            path, _, value = selector.partition("=")
            items = [i for i in items if _field(i, path) == value]
        if "labelSelector" in query:  # key=value only: enough to see the selector reach the server
            key, _, value = query["labelSelector"][0].partition("=")
            items = [i for i in items if (i["metadata"].get("labels") or {}).get(key) == value]
        start = int(query.get("continue", ["0"])[0] or 0)
        if start and path in self.expire_continue_once:
            self.expire_continue_once.discard(path)
            return 410, _status(410, "The provided continue parameter is too old"), {}
        limit = int(query.get("limit", [str(len(items) or 1)])[0])
        page = items[start : start + limit]
        more = start + limit < len(items)
        return 200, {"kind": "List", "metadata": {"continue": str(start + limit) if more else ""}, "items": page}, {}


def _field(item: dict[str, Any], path: str) -> object:
    for key in path.split("."):
        item = item.get(key) if isinstance(item, dict) else None  # type: ignore[assignment]
    return item


def _status(code: int, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "code": code}


class _Handler(BaseHTTPRequestHandler):
    api: FakeApi
    #: TCP_NODELAY, as a real API server's connections have: headers and body are two writes, and
    #: with Nagle's algorithm the body waited 40 ms for the client's delayed ACK
    disable_nagle_algorithm = True

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = self.rfile.read(length) if length else b""
        code, body, headers = self.api.answer(self.command, self.path, self.headers.get("Authorization"), request)
        raw = isinstance(body, bytes)
        data = body if raw else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain" if raw else "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in headers.items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815 (http.server's names)

    def log_message(self, *args: Any) -> None:
        pass


class _Server(ThreadingHTTPServer):
    """A real API server's listen backlog (the kernel's maximum), as the sandbox has: with
    socketserver's 5 the kernel dropped the SYNs of a collection's parallel connections, which the
    client sends again a second later (a second of every test here)."""

    request_queue_size = socket.SOMAXCONN


class ApiServer:
    def __init__(self, api: FakeApi) -> None:
        handler = type("Handler", (_Handler,), {"api": api})
        self.api = api
        self.httpd = _Server(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        # shutdown() waits for the serving loop's next look at its flag: every 0.05 s, not 0.5
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)

    def __enter__(self) -> ApiServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def kubeconfig(self, path: Path, context: str = "prod-east") -> Path:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [{"name": "c", "cluster": {"server": self.url}}],
            "users": [{"name": "u", "user": {"token": TOKEN}}],
            "contexts": [{"name": context, "context": {"cluster": "c", "user": "u"}}],
            "current-context": context,
        }
        path.write_text(yaml.safe_dump(doc))
        return path
