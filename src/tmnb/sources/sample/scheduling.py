"""Step 5, scheduling and admission: pods in creation order, fit by requests onto the least-allocated
node (topology-unaware like kube-scheduler), admitted by the node's kubelet model. Rejected
controller-owned pods are replaced and rescheduled, which reproduces the TopologyAffinityError flapping."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from tmnb.snapshot import Pod
from tmnb.sources.sample.common import name_suffix, random_stream
from tmnb.sources.sample.nodes import BuiltNode
from tmnb.sources.sample.pods import Intent, Template, make_pod, pod_template

#: Rejections kept per replica: a real controller keeps replacing the pod for as long as it fails.
MAX_REJECTIONS = 3


class _Scheduler:
    """Topology-unaware like kube-scheduler: fit by requests, then the least-allocated node (name breaks ties)."""

    def __init__(self, nodes: Sequence[BuiltNode]) -> None:
        self._nodes = {n.name: n for n in nodes}
        self._heaps: dict[str, list[tuple[float, str, int]]] = {}
        for n in nodes:
            self._heaps.setdefault(n.spec.pool, []).append((-n.score(), n.name, n.version))
        for heap in self._heaps.values():
            heapq.heapify(heap)

    def node(self, name: str) -> BuiltNode:
        return self._nodes[name]

    def pick(self, pool: str, request: Mapping[str, int]) -> BuiltNode | None:
        heap = self._heaps.get(pool, [])
        skipped = []
        chosen = None
        while heap:
            entry = heapq.heappop(heap)
            node = self._nodes[entry[1]]
            if entry[2] != node.version:
                continue
            skipped.append(entry)
            if node.fits(request):
                chosen = node
                break
        for entry in skipped:
            heapq.heappush(heap, entry)
        return chosen

    def bind(self, node: BuiltNode, request: Mapping[str, int]) -> None:
        node.add(request)
        heapq.heappush(self._heaps[node.spec.pool], (-node.score(), node.name, node.version))


@dataclass
class Outcome:
    pods: list[Pod] = field(default_factory=list)
    rejected: list[tuple[Pod, Intent]] = field(default_factory=list)


def _replacement(intent: Intent, failed: datetime, seed: int) -> Intent | None:
    """The new pod a ReplicaSet or Job creates beside the failed one. StatefulSet and DaemonSet
    controllers delete the failed pod and recreate it under its name: the snapshot shows it Failed."""
    if intent.attempt + 1 >= MAX_REJECTIONS or intent.workload.kind in ("StatefulSet", "DaemonSet"):
        return None
    rng = random_stream(seed, "replacement", intent.name, intent.attempt)
    name = f"{intent.owner.name}-{name_suffix(rng, 5)}"
    created = failed + timedelta(seconds=rng.randint(2, 9))
    return Intent(created, intent.workload, intent.replica, intent.owner, name, intent.labels,
                   intent.node, intent.attempt + 1)  # fmt: skip


def _bind_target(scheduler: _Scheduler, intent: Intent, request: Mapping[str, int]) -> BuiltNode | None:
    if intent.node is not None:
        return scheduler.node(intent.node)
    return next((n for p in intent.workload.pools or () if (n := scheduler.pick(p, request)) is not None), None)


def run_admission(nodes: Sequence[BuiltNode], intents: Sequence[Intent], seed: int) -> Outcome:
    """Create, schedule and admit pods in creation order; rejected pods are replaced by their controller."""
    scheduler = _Scheduler(nodes)
    templates: dict[tuple[str, str], Template] = {}
    queue = [(*it.order, it) for it in intents]
    heapq.heapify(queue)
    outcome = Outcome()
    while queue:
        intent = heapq.heappop(queue)[3]
        w = intent.workload
        if (w.namespace, w.name) not in templates:
            templates[(w.namespace, w.name)] = pod_template(w)
        template = templates[(w.namespace, w.name)]
        node = _bind_target(scheduler, intent, template.request)
        if node is None or w.completed:
            phase = "Pending" if node is None else "Succeeded"
            outcome.pods.append(make_pod(intent, template, node and node.name, phase, seed))
            continue
        pod = make_pod(intent, template, node.name, "Running", seed)
        result = node.sim.admit(replace(template.model, uid=pod.uid, name=pod.name))
        if result.admitted:
            scheduler.bind(node, template.request)
            node.admitted.append((pod, result, template.request))
            outcome.pods.append(pod)
            continue
        failed = replace(pod, phase="Failed", reason=result.reason, message=result.pod_status_message)
        outcome.pods.append(failed)
        outcome.rejected.append((failed, intent))
        again = _replacement(intent, intent.created + timedelta(seconds=2), seed)
        if again is not None:
            heapq.heappush(queue, (*again.order, again))
    return outcome
