"""PodDisruptionBudget arithmetic, as the disruption controller and the eviction subresource do it.

Healthy = Running with condition Ready=True. ``expected`` is the owners' replica count when every
selected pod has a scalable owner (needed for percentages and maxUnavailable), else the number of
selected pods. The 429 and 500 texts are the API server's (node-artifacts §10).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from tmnb.twin.sandbox.errors import ApiError
from tmnb.twin.sandbox.selectors import label_matcher

Obj = dict[str, Any]


def is_healthy(pod: Obj) -> bool:
    status = pod.get("status") or {}
    ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in status.get("conditions") or [])
    return status.get("phase") == "Running" and ready and not pod["metadata"].get("deletionTimestamp")


def selects(pdb: Obj, pod: Obj) -> bool:
    if pdb["metadata"]["namespace"] != pod["metadata"]["namespace"]:
        return False
    labels = (pdb["spec"].get("selector") or {}).get("matchLabels") or {}
    if not labels:
        return False
    expr = ",".join(f"{k}={v}" for k, v in labels.items())
    return label_matcher(expr)(pod["metadata"].get("labels") or {})


def _scaled(value: int | str, expected: int, round_up: bool) -> int:
    if isinstance(value, int) or str(value).isdigit():
        return int(value)
    pct = int(str(value).rstrip("%")) * expected / 100
    return math.ceil(pct) if round_up else math.floor(pct)


@dataclass(frozen=True)
class Budget:
    expected: int
    desired_healthy: int
    current_healthy: int

    @property
    def disruptions_allowed(self) -> int:
        return max(0, self.current_healthy - self.desired_healthy)

    def status(self) -> Obj:
        return {
            "currentHealthy": self.current_healthy,
            "desiredHealthy": self.desired_healthy,
            "disruptionsAllowed": self.disruptions_allowed,
            "expectedPods": self.expected,
            "observedGeneration": 1,
        }


def budget(pdb: Obj, pods: Sequence[Obj], replicas_of: Callable[[Obj], int | None]) -> Budget:
    """The budget's state over ``pods``; ``replicas_of(pod)`` is its owner's scale, None if unscalable."""
    selected = [p for p in pods if selects(pdb, p) and p["status"].get("phase") not in ("Succeeded", "Failed")]
    owners: dict[str, int | None] = {}
    for p in selected:
        ref = next(iter(p["metadata"].get("ownerReferences") or []), None)
        owners[ref["uid"] if ref else p["metadata"]["uid"]] = replicas_of(p) if ref else None
    expected = sum(v for v in owners.values() if v is not None) if None not in owners.values() else len(selected)
    spec = pdb["spec"]
    if "maxUnavailable" in spec:
        desired = max(0, expected - _scaled(spec["maxUnavailable"], expected, round_up=True))
    else:
        desired = _scaled(spec.get("minAvailable", 1), expected, round_up=True)
    return Budget(expected, desired, sum(is_healthy(p) for p in selected))


def check_eviction(
    pod: Obj, pdbs: Sequence[Obj], pods: Sequence[Obj], replicas_of: Callable[[Obj], int | None]
) -> None:
    """Raise the API server's refusal when evicting ``pod`` would break its budget."""
    if pod["status"].get("phase") in ("Succeeded", "Failed"):
        return
    matching = [b for b in pdbs if selects(b, pod)]
    if len(matching) > 1:
        raise ApiError(
            500,
            "InternalError",
            "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
        )
    if not matching:
        return
    pdb = matching[0]
    state = budget(pdb, pods, replicas_of)
    if not is_healthy(pod) and state.current_healthy >= state.desired_healthy:
        return
    if is_healthy(pod) and state.disruptions_allowed > 0:
        return
    name = pdb["metadata"]["name"]
    raise ApiError(
        429,
        "TooManyRequests",
        "Cannot evict pod as it would violate the pod's disruption budget.",
        {
            "causes": [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {name} needs {state.desired_healthy} healthy pods "
                    f"and has {state.current_healthy} currently",
                }
            ]
        },
    )
