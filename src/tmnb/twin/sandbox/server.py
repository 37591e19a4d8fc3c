"""The sandbox process: a threaded HTTPS server on 127.0.0.1, its kubeconfig and the controller tick.

HTTPS because kubectl only sends a bearer token over TLS; the self-signed certificate is made
with the ``openssl`` CLI at start and trusted through the kubeconfig's certificate-authority-data.
The token is random per start, lives only in memory and in the kubeconfig (mode 0600) and is
never logged; when the sandbox stops, its kubeconfigs and private key go with it, so a run
directory kept as evidence holds no secret.
"""

from __future__ import annotations

import base64
import hmac
import os
import secrets
import shutil
import socket
import ssl
import subprocess
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

import yaml

from tmnb.errors import TmnbError
from tmnb.snapshot import Snapshot
from tmnb.twin.sandbox.api import Api, Request, Response
from tmnb.twin.sandbox.cluster import Cluster
from tmnb.twin.sandbox.errors import ApiError
from tmnb.twin.sandbox.faults import Faults

LOOPBACK = "127.0.0.1"
CONTEXT = "tmnb-sandbox"


def make_certificate(directory: Path) -> tuple[Path, Path]:
    """A self-signed P-256 certificate for 127.0.0.1 and localhost, valid for a week."""
    openssl = shutil.which("openssl")
    if openssl is None:
        raise TmnbError("tmnb sandbox needs the openssl command to make its TLS certificate")
    cert, key = directory / "server.crt", directory / "server.key"
    cmd = [
        openssl, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
        "-keyout", str(key), "-out", str(cert), "-days", "7", "-subj", "/CN=tmnb-sandbox",
        "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
    ]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise TmnbError(f"openssl could not make the sandbox certificate: {done.stderr.strip()}")
    key.chmod(0o600)
    return cert, key


def _handler(api: Api, token: str, access_log: Path) -> type[BaseHTTPRequestHandler]:
    expected = f"Bearer {token}".encode()
    log_lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "tmnb-sandbox"
        #: TCP_NODELAY, as Go sets on every connection of a real API server: the headers and the body
        #: are two writes, and with Nagle's algorithm the body waited for the client's delayed ACK,
        #: 40 ms on every request
        disable_nagle_algorithm = True

        def _serve(self) -> None:
            url = urlsplit(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            if not hmac.compare_digest(self.headers.get("Authorization", "").encode(), expected):
                response = Response(401, ApiError(401, "Unauthorized", "Unauthorized").status())
            else:
                req = Request(self.command, url.path, dict(parse_qsl(url.query)), dict(self.headers.items()), body)
                try:
                    response = api.handle(req)
                except Exception as exc:  # a sandbox bug must not drop the connection: report it as the API would
                    traceback.print_exc()
                    error = ApiError(500, "InternalError", f"Internal error occurred: {type(exc).__name__}: {exc}")
                    response = Response(500, error.status())
            data = response.encoded()
            self.send_response(response.code)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(data)))
            for k, v in response.headers.items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            with log_lock, access_log.open("a") as f:  # method, path and code only: never headers
                f.write(f"{time.strftime('%H:%M:%S')} {self.command} {url.path} {response.code}\n")

        do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _serve  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:
            """Silenced: the access log above is the only log, and it carries no headers."""

    return Handler


class _Server(ThreadingHTTPServer):
    """The listen backlog of a real API server (Go's listeners take the kernel's maximum): with
    socketserver's 5, a collector opening a dozen connections at once overflowed it, and the
    kernel dropped the SYNs of the rest, which a client sends again only a second later."""

    request_queue_size = socket.SOMAXCONN


class Sandbox:
    """A simulated cluster served on 127.0.0.1; use as a context manager or ``start()``/``stop()``."""

    def __init__(
        self,
        snapshot: Snapshot,
        run_dir: str | Path,
        *,
        port: int = 0,
        faults: Faults | None = None,
        controller_interval: float = 0.5,
        node_files: bool = True,
    ) -> None:
        self.run_dir = Path(run_dir).resolve()  # node roots are handed to executors, which need absolute paths
        self.run_dir.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(self.run_dir / "nodes", ignore_errors=True)  # node files of an earlier run
        self.cluster = Cluster(snapshot, self.run_dir / "nodes" if node_files else None)
        self.api = Api(self.cluster, faults or Faults(), f"{LOOPBACK}:{port}")
        self._port = port
        self._token = secrets.token_urlsafe(32)
        self._interval = controller_interval
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._httpd: ThreadingHTTPServer | None = None
        self.cert: Path | None = None
        self._kubeconfigs: list[Path] = []

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise TmnbError("the sandbox is not started")
        return int(self._httpd.server_address[1])

    @property
    def url(self) -> str:
        return f"https://{LOOPBACK}:{self.port}"

    def start(self) -> Sandbox:
        self.cert, key = make_certificate(self.run_dir)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.cert, key)
        try:
            httpd = _Server((LOOPBACK, self._port), _handler(self.api, self._token, self.run_dir / "access.log"))
        except OSError as exc:
            raise TmnbError(f"cannot listen on {LOOPBACK}:{self._port}: {exc.strerror}") from None
        httpd.daemon_threads = True
        httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
        self._httpd = httpd
        self.api.server_address = f"{LOOPBACK}:{self.port}"
        self._threads = [
            threading.Thread(target=httpd.serve_forever, args=(0.05,), name="sandbox-http", daemon=True),
            threading.Thread(target=self._controllers, name="sandbox-controllers", daemon=True),
        ]
        for t in self._threads:
            t.start()
        return self

    def _controllers(self) -> None:
        while not self._stop.wait(self._interval):
            self.cluster.reconcile()

    def stop(self) -> None:
        """Stop serving; the private key and the kubeconfigs written go too (the run directory may be
        kept as evidence). A kubeconfig since rewritten without this token is someone else's: kept."""
        self._stop.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        for t in self._threads:
            t.join(timeout=5)
        (self.run_dir / "server.key").unlink(missing_ok=True)
        for kubeconfig in self._kubeconfigs:
            try:
                if self._token in kubeconfig.read_text():
                    kubeconfig.unlink()
            except OSError:
                pass  # already gone, or not ours to read
        self._kubeconfigs.clear()

    def __enter__(self) -> Sandbox:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def write_kubeconfig(self, path: str | Path) -> Path:
        """A kubeconfig for this sandbox only (mode 0600): the one place the token is written."""
        if self.cert is None:
            raise TmnbError("the sandbox is not started")
        path = Path(path)
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": CONTEXT,
                    "cluster": {
                        "server": self.url,
                        "certificate-authority-data": base64.b64encode(self.cert.read_bytes()).decode(),
                    },
                }
            ],
            "users": [{"name": CONTEXT, "user": {"token": self._token}}],
            "contexts": [{"name": CONTEXT, "context": {"cluster": CONTEXT, "user": CONTEXT}}],
            "current-context": CONTEXT,
        }
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            yaml.safe_dump(doc, f, sort_keys=False)
        path.chmod(0o600)
        self._kubeconfigs.append(path)
        return path
