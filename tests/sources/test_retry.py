"""Which failures are retried, how long the collector waits, and what it says when it gives up."""

from __future__ import annotations

import random

import pytest
import urllib3
from kubernetes.client.exceptions import ApiException

from tmnb.sources.cluster.retry import Backoff, describe, is_retryable, retry_after


def api_error(status: int, body: str = "", headers: dict[str, str] | None = None) -> ApiException:
    exc = ApiException(status=status, reason="Reason")
    exc.body, exc.headers = body, headers or {}
    return exc


@pytest.mark.parametrize(
    ("exc", "retry"),
    [
        (api_error(429), True),
        (api_error(500), True),
        (api_error(502), True),
        (api_error(503), True),
        (api_error(504), True),
        (api_error(400), False),
        (api_error(401), False),
        (api_error(403), False),
        (api_error(404), False),
        (api_error(410), False),
        (urllib3.exceptions.ProtocolError("connection reset"), True),
        (urllib3.exceptions.ReadTimeoutError(None, "/", "read timed out"), True),
        (ConnectionRefusedError(), True),
        (ValueError("not JSON"), False),
    ],
)
def test_classification(exc, retry):
    assert is_retryable(exc) is retry


class Clock:
    def __init__(self):
        self.slept: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.slept.append(seconds)


def flaky(failures: list[BaseException], result: str = "ok"):
    calls = []

    def fn():
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return result

    return fn, calls


def test_retries_until_success_honouring_retry_after():
    clock = Clock()
    fn, calls = flaky([api_error(429, headers={"Retry-After": "3"}), api_error(503)])
    backoff = Backoff(base=0.5, cap=8.0, sleep=clock, rng=random.Random(1))
    assert backoff.call(fn) == "ok" and len(calls) == 3
    assert clock.slept[0] == 3.0  # the server's word
    assert 0 <= clock.slept[1] <= 1.0  # jittered, second attempt: at most base * 2


def test_gives_up_after_the_attempts_and_never_retries_answers():
    clock = Clock()
    fn, calls = flaky([api_error(500)] * 10)
    with pytest.raises(ApiException):
        Backoff(attempts=4, sleep=clock).call(fn)
    assert len(calls) == 4 and len(clock.slept) == 3 and all(s <= 8.0 for s in clock.slept)
    fn, calls = flaky([api_error(403)])
    with pytest.raises(ApiException):
        Backoff(sleep=clock).call(fn)
    assert len(calls) == 1


def test_retry_after_is_capped_and_validated():
    assert Backoff(cap=2.0).delay(0, api_error(429, headers={"Retry-After": "120"})) == 2.0
    assert retry_after(api_error(429, headers={"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"})) is None


def test_describe_uses_the_status_message():
    body = (
        '{"kind":"Status","message":"nodes \\"w1\\" is forbidden: User \\"x\\" cannot get resource \\"nodes/proxy\\""}'
    )
    assert describe(api_error(403, body)) == (
        'HTTP 403 Reason: nodes "w1" is forbidden: User "x" cannot get resource "nodes/proxy"'
    )
    assert describe(api_error(502, "<html>bad gateway</html>")) == "HTTP 502 Reason: <html>bad gateway</html>"
    assert describe(TimeoutError("slow")) == "TimeoutError: slow"
