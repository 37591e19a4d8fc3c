"""Lint rules on the cluster as it is, whatever the target: kubelets outside the version skew the API
server supports, Guaranteed pods that never get exclusive CPUs, and pools of mixed hardware."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from tmnb.analysis.inventory import is_integer_cpu, shape_of, skew_note
from tmnb.analysis.occupancy import pool_of
from tmnb.analysis.rules import FleetContext, Hit, LintContext, Rule
from tmnb.kubelet.profiles import KUBELET_VERSION


def _non_integer_guaranteed(c: LintContext) -> Iterator[Hit]:
    for pod in c.pods:
        fractional = [k.name for k in pod.containers if not is_integer_cpu(k.requests.get("cpu"))]
        if pod.qos_class == "Guaranteed" and fractional:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                "whole-number CPU requests",
                ", ".join(fractional),
                "Guaranteed pods with fractional CPU requests never get exclusive CPUs; they stay in the shared pool.",
            )


GUARANTEED_FRACTIONAL_CPU = Rule[LintContext](
    "guaranteed-fractional-cpu",
    "workloads",
    "info",
    "Round the CPU request to a whole number if this workload needs pinning.",
    _non_integer_guaranteed,
    summary="a Guaranteed pod with a fractional CPU request never gets exclusive CPUs",
)


def _version_skew(c: LintContext) -> Iterator[Hit]:
    """Today's kubelet against the API server, where the plan keeps its minor (``upgrade.*`` speak of the
    kubelet a plan upgrades)."""
    if c.plan.changes(KUBELET_VERSION):
        return
    severity, note = skew_note(c.server, c.plan.version)
    if severity != "ok":
        yield Hit(
            "kubelet version",
            f"API server {c.server}",
            str(c.plan.version or "unknown"),
            note,
            severity="blocker" if severity == "blocker" else "warning",
        )


VERSION_SKEW = Rule[LintContext](
    "version-skew",
    "versions",
    "blocker",
    "Upgrade the kubelet (drain first) before changing Topology Manager settings, so the plan is validated "
    "against the version that will run it.",
    _version_skew,
    manual=True,
    summary="the kubelet lags the API server (warning) or is outside the supported skew (blocker)",
)


def _mixed_hardware(c: FleetContext) -> Iterator[Hit]:
    pools: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for node in c.snapshot.nodes:
        pools[pool_of(node, c.pool_label)][shape_of(node).label].append(node.name)
    for pool, shapes in sorted(pools.items()):
        if len(shapes) > 1:
            detail = "; ".join(f"{len(v)}x {k}" for k, v in sorted(shapes.items()))
            yield Hit(
                "node pool",
                "one hardware shape per pool",
                detail,
                "A canary on one shape says little about the others: NUMA sizes decide what fits.",
                where=pool,
            )


MIXED_HARDWARE_POOL = Rule[FleetContext](
    "mixed-hardware-pool",
    "fleet",
    "warning",
    "Pick a canary per shape, or split the pool by hardware.",
    _mixed_hardware,
    summary="one pool holds several hardware shapes",
)
