"""Step 5, scheduling and admission: pods in creation order, fit by requests onto the least-allocated
node (topology-unaware like kube-scheduler), admitted by the node's kubelet model. Rejected
controller-owned pods are replaced and rescheduled, which reproduces the TopologyAffinityError flapping.
The loop keeps its state, so ``rollout`` can continue it in time (drain, restart, re-admission)."""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from tmnb.kubelet.node import PodResult
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.snapshot import Pod
from tmnb.twin.sample.common import name_suffix, random_stream
from tmnb.twin.sample.nodes import BuiltNode
from tmnb.twin.sample.pods import Intent, Template, make_pod, pod_template

#: Rejections kept per replica: a real controller keeps replacing the pod for as long as it fails.
MAX_REJECTIONS = 3


class _Scheduler:
    """Topology-unaware like kube-scheduler: within the workload's pools (whose taints it tolerates), the
    nodes not drained or cordoned that fit its requests, then the least-allocated (name breaks ties)."""

    def __init__(self, nodes: Sequence[BuiltNode]) -> None:
        self._nodes = {n.name: n for n in nodes}
        self._heaps: dict[str, list[tuple[float, str, int]]] = {}
        for n in nodes:
            self._heaps.setdefault(n.spec.pool, []).append((-n.score(), n.name, n.version))
        for heap in self._heaps.values():
            heapq.heapify(heap)

    def node(self, name: str) -> BuiltNode:
        return self._nodes[name]

    def pick(self, pool: str, request: Mapping[str, int], at: datetime) -> BuiltNode | None:
        heap = self._heaps.get(pool, [])
        skipped = []
        chosen = None
        while heap:
            entry = heapq.heappop(heap)
            node = self._nodes[entry[1]]
            if entry[2] != node.version:
                continue
            skipped.append(entry)
            if node.schedulable(at) and node.fits(request):
                chosen = node
                break
        for entry in skipped:
            heapq.heappush(heap, entry)
        return chosen

    def replace(self, node: BuiltNode) -> None:
        """A node's record replaced (a restarted kubelet): the scheduler sees the new one."""
        self._nodes[node.name] = node
        heapq.heappush(self._heaps[node.spec.pool], (-node.score(), node.name, node.version))

    def bind(self, node: BuiltNode, request: Mapping[str, int]) -> None:
        node.add(request)
        heapq.heappush(self._heaps[node.spec.pool], (-node.score(), node.name, node.version))


@dataclass
class Outcome:
    pods: list[Pod] = field(default_factory=list)
    rejected: list[tuple[Pod, Intent]] = field(default_factory=list)
    intents: dict[str, Intent] = field(default_factory=dict)  # pod uid -> what created it


def _replacement(intent: Intent, failed: datetime, seed: int) -> Intent | None:
    """The new pod a ReplicaSet or Job creates beside the failed one. StatefulSet and DaemonSet
    controllers delete the failed pod and recreate it under its name: the snapshot shows it Failed."""
    if intent.attempt + 1 >= MAX_REJECTIONS or intent.workload.kind in ("StatefulSet", "DaemonSet"):
        return None
    rng = random_stream(seed, "replacement", intent.name, intent.attempt)
    name = f"{intent.owner.name}-{name_suffix(rng, 5)}"
    created = failed + timedelta(seconds=rng.randint(2, 9))
    return replace(intent, created=created, name=name, attempt=intent.attempt + 1)


class Admission:
    """The cluster's control loop over time: controllers create pods, the scheduler binds them, each
    node's kubelet model admits them; the rollout continues the same loop (drain, restart)."""

    def __init__(self, nodes: Sequence[BuiltNode], seed: int) -> None:
        self.scheduler = _Scheduler(nodes)
        self.seed = seed
        self.outcome = Outcome()
        self._templates: dict[tuple[str, str], Template] = {}

    def template(self, intent: Intent) -> Template:
        w = intent.workload
        if (w.namespace, w.name) not in self._templates:
            self._templates[(w.namespace, w.name)] = pod_template(w)
        return self._templates[(w.namespace, w.name)]

    def model(self, pod: Pod) -> ModelPod:
        """The kubelet's view of a pod this loop created."""
        return replace(self.template(self.outcome.intents[pod.uid]).model, uid=pod.uid, name=pod.name)

    def run(self, intents: Sequence[Intent]) -> None:
        """Create, schedule and admit pods in creation order; rejected pods are replaced by their controller."""
        queue = [(*it.order, it) for it in intents]
        heapq.heapify(queue)
        while queue:
            intent = heapq.heappop(queue)[3]
            template = self.template(intent)
            node = _bind_target(self.scheduler, intent, template.request)
            if node is None or intent.workload.completed:
                phase = "Pending" if node is None else "Succeeded"
                self._record(make_pod(intent, template, node.name if node else None, phase, self.seed), intent)
                continue
            pod = self._record(make_pod(intent, template, node.name, "Running", self.seed), intent)
            result = node.sim.admit(self.model(pod))
            if result.admitted:
                self.scheduler.bind(node, template.request)
                node.admitted.append((pod, result, template.request))
                continue
            self.reject(pod, result)
            again = _replacement(intent, intent.created + timedelta(seconds=2), self.seed)
            if again is not None:
                heapq.heappush(queue, (*again.order, again))

    def reject(self, pod: Pod, result: PodResult) -> None:
        """The pod as its kubelet's rejection leaves it: Failed, with the reason and message."""
        failed = replace(pod, phase="Failed", reason=result.reason, message=result.pod_status_message)
        pods = self.outcome.pods
        at = len(pods) - 1 if pods[-1].uid == pod.uid else next(i for i, p in enumerate(pods) if p.uid == pod.uid)
        pods[at] = failed
        self.outcome.rejected.append((failed, self.outcome.intents[pod.uid]))

    def _record(self, pod: Pod, intent: Intent) -> Pod:
        self.outcome.pods.append(pod)
        self.outcome.intents[pod.uid] = intent
        return pod


def _bind_target(scheduler: _Scheduler, intent: Intent, request: Mapping[str, int]) -> BuiltNode | None:
    if intent.node is not None:
        return scheduler.node(intent.node)
    pools = intent.workload.pools or ()
    return next((n for p in pools if (n := scheduler.pick(p, request, intent.created)) is not None), None)


def run_admission(nodes: Sequence[BuiltNode], intents: Sequence[Intent], seed: int) -> Admission:
    """The fleet as its controllers, scheduler and kubelets leave it after ``intents``."""
    admission = Admission(nodes, seed)
    admission.run(intents)
    return admission
