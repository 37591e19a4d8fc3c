"""Taints and tolerations as Kubernetes matches them, over snapshot records.

One reading for every room that asks "would the scheduler place this pod there?": the readiness
canary, the rollout's waves, the diagnosis's "another node" and the sandbox's scheduler. The rules
are ``Toleration.ToleratesTaint`` (k8s.io/api core/v1) and the scheduler's NodeUnschedulable and
TaintToleration filters: an empty toleration effect matches every effect, an empty key with
``Exists`` every taint, ``Equal`` (or no operator) compares values; ``Lt``/``Gt`` exist only behind
an alpha feature gate, off by default, so they match nothing here as they match nothing there.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

from tmnb.snapshot.model import Node, Taint, TaintEffect, Toleration

#: The taint a cordon puts beside ``spec.unschedulable`` (the node lifecycle controller adds it).
CORDON_TAINT: Final = "node.kubernetes.io/unschedulable"
#: The effects that keep a pod off a node; PreferNoSchedule only lowers the node's score.
BLOCKING: Final[tuple[TaintEffect, ...]] = ("NoSchedule", "NoExecute")


def taint_text(taint: Taint) -> str:
    """``key=value:Effect``, as ``kubectl describe node`` and ``kubectl taint`` write it."""
    return f"{taint.key}{'=' + taint.value if taint.value else ''}:{taint.effect}"


def tolerates(toleration: Toleration, taint: Taint) -> bool:
    if toleration.effect is not None and toleration.effect != taint.effect:
        return False
    if toleration.key and toleration.key != taint.key:
        return False
    if toleration.operator == "Exists":
        return True
    return toleration.operator in ("", "Equal") and toleration.value == taint.value


def untolerated(
    taints: Iterable[Taint], tolerations: Sequence[Toleration], effects: Sequence[TaintEffect] = BLOCKING
) -> list[Taint]:
    """The taints of ``effects`` that no toleration matches, in the node's order (the scheduler names the first)."""
    return [t for t in taints if t.effect in effects and not any(tolerates(o, t) for o in tolerations)]


def cordoned(node: Node) -> bool:
    """``kubectl cordon``: ``spec.unschedulable``, or its taint where a snapshot kept only that."""
    return node.unschedulable or any(t.key == CORDON_TAINT and t.effect == "NoSchedule" for t in node.taints)


def keeps_off(node: Node, tolerations: Sequence[Toleration]) -> str:
    """Why the scheduler would not place a pod with ``tolerations`` on ``node`` for its cordon or taints, in
    words ("" when neither stops it): its filters NodeUnschedulable, then TaintToleration."""
    cordon = Taint(key=CORDON_TAINT, effect="NoSchedule")
    if cordoned(node) and not any(tolerates(o, cordon) for o in tolerations):
        return "cordoned"
    other = untolerated([t for t in node.taints if t.key != CORDON_TAINT], tolerations)
    if other:
        return f"tainted {', '.join(map(taint_text, other))}, which the pod does not tolerate"
    return ""
