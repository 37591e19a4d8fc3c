"""Fault injection: the misbehaviour a rollout must survive, switchable while the sandbox runs.

Latency on every API request; per-path-prefix error rates (HTTP 500); a rate of API-priority
throttling answers (HTTP 429 with Retry-After, which client-go retries: 1 s as the API server's
in-flight limit says, or what a test sets); nodes whose kubelet never comes back Ready after a
restart that changed its kubelet configuration; nodes whose kubelet rejects every new pod (a
kubelet that disagrees with the model, for rollout verification); nodes whose kubelet, once restarted
with a changed configuration, deviates from the model in one of the ways ``DEVIATIONS`` names (what
a rollout's verification must catch on the canary).
Seeded, so a test sees the same sequence every time.
"""

from __future__ import annotations

import random
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from tmnb.errors import InputError
from tmnb.twin.sandbox.errors import ApiError

#: How a kubelet restarted with a changed configuration can deviate from ``tmnb.kubelet``, which the
#: rollout's prediction uses: each is a way the real kubelet may disagree with the model.
DEVIATIONS: dict[str, str] = {
    "cpuset": "pins a new pod on other CPUs than the model picks",
    "reject": "rejects a new pod that the model admits (TopologyAffinityError)",
    "repin": "re-pins a running pod on other CPUs as it re-admits it at the restart",
}


@dataclass
class Faults:
    latency: float = 0.0
    error_rates: dict[str, float] = field(default_factory=dict)
    throttle_rate: float = 0.0
    never_ready: set[str] = field(default_factory=set)
    #: nodes whose kubelet rejects every newly created pod, disagreeing with tmnb.kubelet
    reject_pods: set[str] = field(default_factory=set)
    #: node -> a ``DEVIATIONS`` kind, after a restart with a changed kubelet configuration
    deviate: dict[str, str] = field(default_factory=dict)
    seed: int = 0
    #: the Retry-After seconds of a throttling answer (the API server's 1; 0 asks for an immediate retry)
    retry_after: int = 1

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)
        self._lock = threading.Lock()
        for rate in (self.throttle_rate, *self.error_rates.values()):
            if not 0.0 <= rate <= 1.0:
                raise InputError(f"a fault rate must be between 0 and 1, got {rate}")
        if self.latency < 0:
            raise InputError(f"latency must be >= 0 seconds, got {self.latency}")
        if self.retry_after < 0:
            raise InputError(f"retry_after must be >= 0 seconds, got {self.retry_after}")
        for node, kind in self.deviate.items():
            if kind not in DEVIATIONS:
                raise InputError(f"node {node}: unknown deviation {kind!r}: expected {', '.join(DEVIATIONS)}")

    def apply(self, path: str) -> None:
        """Sleep the latency, then maybe raise the injected failure for ``path``."""
        if self.latency:
            time.sleep(self.latency)
        with self._lock:
            throttle = self._rng.random() < self.throttle_rate
            rate = max((r for p, r in self.error_rates.items() if path.startswith(p)), default=0.0)
            fail = self._rng.random() < rate
        if throttle:
            raise ApiError(
                429,
                "TooManyRequests",
                "Too many requests, please try again later.",
                {"retryAfterSeconds": self.retry_after},
            )
        if fail:
            raise ApiError(500, "InternalError", f"Internal error occurred: injected fault on {path}")

    def to_json(self) -> dict[str, Any]:
        return {
            "latency": self.latency,
            "errorRates": dict(self.error_rates),
            "throttleRate": self.throttle_rate,
            "retryAfter": self.retry_after,
            "neverReady": sorted(self.never_ready),
            "rejectPods": sorted(self.reject_pods),
            "deviate": dict(sorted(self.deviate.items())),
        }

    @classmethod
    def from_json(cls, doc: dict[str, Any], seed: int = 0) -> Faults:
        try:
            return cls(
                latency=float(doc.get("latency", 0.0)),
                error_rates={str(k): float(v) for k, v in (doc.get("errorRates") or {}).items()},
                throttle_rate=float(doc.get("throttleRate", 0.0)),
                retry_after=int(doc.get("retryAfter", 1)),
                never_ready=set(doc.get("neverReady") or ()),
                reject_pods=set(doc.get("rejectPods") or ()),
                deviate={str(k): str(v) for k, v in (doc.get("deviate") or {}).items()},
                seed=seed,
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise InputError(f"invalid fault settings: {exc}") from None
