"""Where the sandbox's scheduler may place a pod: the default scheduler's filters that a rollout
meets (unschedulable and taints, each unless tolerated, not ready, pod count, resource fit) and its
least-allocated CPU score.

Pure functions of API objects; the cluster passes each node's bound, active pods. Requests are
summed exactly, as the scheduler counts integer milli-CPUs and bytes: in floats three pods of
100m would not fit 300m.
"""

from __future__ import annotations

from collections.abc import Iterable
from decimal import Decimal

from tmnb.parse.quantity import parse_quantity
from tmnb.snapshot import Taint
from tmnb.snapshot.taints import CORDON_TAINT, tolerates, untolerated
from tmnb.sources.cluster.convert import taint_from_api
from tmnb.sources.kube_objects import tolerations_from_api
from tmnb.twin.sandbox.objects import Obj

_NONE = Decimal(0)


def is_ready(node: Obj) -> bool:
    return any(c["type"] == "Ready" and c["status"] == "True" for c in node["status"].get("conditions") or [])


def requests(pod: Obj) -> dict[str, Decimal]:
    """The pod's container requests summed per resource."""
    total: dict[str, Decimal] = {}
    for c in pod["spec"].get("containers") or []:
        for name, q in ((c.get("resources") or {}).get("requests") or {}).items():
            total[name] = total.get(name, _NONE) + parse_quantity(q)
    return total


def unfit(node: Obj, bound: Iterable[Obj], pod: Obj) -> str | None:
    """Why the scheduler cannot place ``pod`` on ``node`` beside its ``bound`` pods, in the words of
    its FailedScheduling message (None: it fits)."""
    tolerations = tolerations_from_api(pod["spec"])
    cordon = Taint(key=CORDON_TAINT, effect="NoSchedule")
    if node["spec"].get("unschedulable") and not any(tolerates(t, cordon) for t in tolerations):
        return "node(s) were unschedulable"
    taints = untolerated([taint_from_api(t) for t in node["spec"].get("taints") or []], tolerations)
    if taints:
        return f"node(s) had untolerated taint {{{taints[0].key}: {taints[0].value}}}"
    if not is_ready(node):
        return "node(s) had untolerated taint {node.kubernetes.io/unreachable: }"
    used: dict[str, Decimal] = {}
    count = 0
    for p in bound:
        count += 1
        for resource, amount in requests(p).items():
            used[resource] = used.get(resource, _NONE) + amount
    allocatable = node["status"].get("allocatable") or {}
    if count + 1 > int(allocatable.get("pods", "110")):
        return "Too many pods"
    for resource, want in requests(pod).items():
        if used.get(resource, _NONE) + want > parse_quantity(allocatable.get(resource, "0")):
            return f"Insufficient {resource}"
    return None


def cpu_load(node: Obj, bound: Iterable[Obj]) -> Decimal:
    """Requested share of the node's allocatable CPU: the least allocated node scores best, as
    NodeResourcesFit scores by default."""
    cpu = parse_quantity(node["status"].get("allocatable", {}).get("cpu", "1"))
    used = sum((requests(p).get("cpu", _NONE) for p in bound), _NONE)
    return used / cpu if cpu else Decimal(1)
