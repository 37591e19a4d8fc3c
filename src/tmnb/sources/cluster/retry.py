"""Which API failures are worth retrying, and how long to wait.

API servers shed load with 429 (and say when to come back in ``Retry-After``); proxies and
overloaded aggregated APIs answer 5xx; networks drop connections. Those are retried with capped,
jittered exponential backoff. Everything else (401, 403, 404, 410, a bad request) is an answer.
"""

from __future__ import annotations

import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

import urllib3
from kubernetes.client.exceptions import ApiException

T = TypeVar("T")
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})


def status_of(exc: BaseException) -> int | None:
    """HTTP status of an API failure; None for transport failures and anything else."""
    return exc.status if isinstance(exc, ApiException) and exc.status else None


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, ApiException):
        return exc.status in RETRYABLE_STATUS
    return isinstance(exc, urllib3.exceptions.HTTPError | ConnectionError | TimeoutError)


def retry_after(exc: BaseException) -> float | None:
    """Seconds the server asked us to wait (``Retry-After: <seconds>``), if it did."""
    headers = getattr(exc, "headers", None) or {}
    value = headers.get("Retry-After") if hasattr(headers, "get") else None
    try:
        return max(float(value), 0.0) if value is not None else None
    except ValueError:
        return None


def describe(exc: BaseException) -> str:
    """One line for an issue or an error message: status, reason and the server's message."""
    if isinstance(exc, ApiException):
        message = _status_message(exc.body)
        text = f"HTTP {exc.status} {exc.reason or ''}".strip()
        return f"{text}: {message}" if message else text
    return f"{type(exc).__name__}: {exc}"


def _status_message(body: object) -> str | None:
    if isinstance(body, bytes):
        body = body.decode("utf-8", "replace")
    if not isinstance(body, str) or not body:
        return None
    try:
        doc = json.loads(body)
    except ValueError:
        return body.strip()[:300] or None
    return str(doc.get("message")) if isinstance(doc, dict) and doc.get("message") else None


@dataclass(frozen=True)
class Backoff:
    """Capped exponential backoff with full jitter; ``attempts`` counts the first try."""

    attempts: int = 5
    base: float = 0.25
    cap: float = 8.0
    sleep: Callable[[float], None] = time.sleep
    rng: random.Random = field(default_factory=random.Random)

    def delay(self, attempt: int, exc: BaseException) -> float:
        asked = retry_after(exc)
        if asked is not None:
            return min(asked, self.cap)
        return self.rng.uniform(0, min(self.cap, self.base * 2**attempt))

    def call(self, fn: Callable[[], T]) -> T:
        attempt = 0
        while True:
            try:
                return fn()
            except Exception as exc:
                attempt += 1
                if attempt >= self.attempts or not is_retryable(exc):
                    raise
                self.sleep(self.delay(attempt - 1, exc))
