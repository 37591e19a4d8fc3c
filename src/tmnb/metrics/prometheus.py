"""Range queries against the Prometheus HTTP API (``/api/v1/query_range``) with httpx.

Every failure becomes a tmnb error with a sentence an SRE can act on: an unreachable server or
a server error is a :class:`CollectError`, PromQL that Prometheus rejects is an
:class:`InputError` naming the query. The URL is only ever shown redacted: userinfo and
secret-looking query parameters never reach a message, a report or a log. A bearer token can
come from ``TMNB_PROMETHEUS_TOKEN`` so that it is never a notebook parameter.
"""

from __future__ import annotations

import os
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx
import pandas as pd

from tmnb.errors import CollectError, InputError
from tmnb.metrics.frame import from_series
from tmnb.redact import PLACEHOLDER, is_secret_name

TOKEN_ENV = "TMNB_PROMETHEUS_TOKEN"
#: Prometheus refuses range queries with more points than this per series.
MAX_POINTS = 11_000


def redact_url(url: str) -> str:
    """The URL without userinfo and with secret-looking query values replaced."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{PLACEHOLDER}@{netloc.rpartition('@')[2]}"
    query = urlencode(
        [(k, PLACEHOLDER if is_secret_name(k) else v) for k, v in parse_qsl(parts.query, keep_blank_values=True)],
        safe="<>",
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def resolve_url(value: str) -> str:
    """``env:NAME`` reads the URL from the environment, so a URL with credentials is never a parameter."""
    if not value.startswith("env:"):
        return value.strip()
    name = value.removeprefix("env:").strip()
    url = os.environ.get(name, "").strip()
    if not url:
        raise InputError(f"environment variable {name} is not set or empty", where="prometheus_url")
    return url


class Prometheus:
    """A Prometheus server; ``transport`` lets tests substitute ``httpx.MockTransport``."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float = 30.0,
        token: str | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        url = resolve_url(url)
        parts = urlsplit(url)
        if parts.scheme not in {"http", "https"} or not parts.hostname:
            raise InputError(
                f"expected an http(s) URL of the Prometheus server, got {redact_url(url)!r}", where="prometheus_url"
            )
        self.url = url
        self.shown = redact_url(self.url)
        self.timeout = timeout
        token = token if token is not None else os.environ.get(TOKEN_ENV)
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._client = httpx.Client(timeout=timeout, headers=headers, transport=transport)

    def __enter__(self) -> Prometheus:
        return self

    def __exit__(self, *exc: object) -> None:
        self._client.close()

    def _scrub(self, text: str) -> str:
        """Replace the URL and its credentials wherever a server or library message repeats them."""
        parts = urlsplit(self.url)
        text = text.replace(self.url, self.shown)
        for secret in (parts.netloc.rpartition("@")[0], parts.password):
            if secret and len(secret) >= 4:  # shorter strings would mangle ordinary words
                text = text.replace(secret, PLACEHOLDER)
        return text

    def _post(self, path: str, data: dict[str, str]) -> httpx.Response:
        endpoint = f"{self.url.split('?', 1)[0].rstrip('/')}{path}"
        try:
            return self._client.post(endpoint, data=data)
        except httpx.TimeoutException:
            raise CollectError(f"Prometheus at {self.shown} did not answer within {self.timeout:g}s") from None
        except httpx.HTTPError as exc:
            reason = self._scrub(str(exc)) or type(exc).__name__
            raise CollectError(f"Prometheus at {self.shown} is unreachable: {reason}") from None

    def _payload(self, response: httpx.Response, name: str) -> dict[str, Any]:
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or "status" not in body:
            raise CollectError(
                f"{self.shown} answered HTTP {response.status_code} without Prometheus API JSON: "
                "is this the URL of the Prometheus server (or its path prefix)?"
            )
        if body["status"] == "success":
            return body
        error = self._scrub(str(body.get("error", "")))
        if body.get("errorType") == "bad_data" or response.status_code == 400:
            raise InputError(f"Prometheus rejected the query: {error}", where=f"query {name}")
        if response.status_code in {401, 403}:
            raise CollectError(
                f"Prometheus at {self.shown} refused access (HTTP {response.status_code}): set {TOKEN_ENV}"
            )
        kind = body.get("errorType", f"HTTP {response.status_code}")
        raise CollectError(f"Prometheus at {self.shown} failed on query {name} ({kind}): {error}")

    def query_range(
        self, name: str, promql: str, start: pd.Timestamp, end: pd.Timestamp, step: float
    ) -> tuple[pd.DataFrame, list[str]]:
        """Samples of ``promql`` in the long format, and the warnings Prometheus attached."""
        points = (end - start).total_seconds() / step + 1
        if points > MAX_POINTS:
            wider = (end - start).total_seconds() / (MAX_POINTS - 1)
            raise InputError(
                f"{points:.0f} points per series exceed Prometheus' limit of {MAX_POINTS}: use a step of "
                f"at least {wider:.0f}s",
                where="step",
            )
        data = {
            "query": promql,
            "start": f"{start.timestamp():.3f}",
            "end": f"{end.timestamp():.3f}",
            "step": f"{step:g}",
        }
        body = self._payload(self._post("/api/v1/query_range", data), name)
        result = body.get("data", {})
        if result.get("resultType") != "matrix":
            raise InputError(
                f"expected a range vector (matrix) result, got {result.get('resultType')!r}", where=f"query {name}"
            )
        series = [
            (
                item.get("metric", {}),
                [float(t) for t, _ in item.get("values", [])],
                [float(v) for _, v in item.get("values", [])],
            )
            for item in result.get("result", [])
        ]
        return from_series(name, series), [self._scrub(str(w)) for w in body.get("warnings", [])]
