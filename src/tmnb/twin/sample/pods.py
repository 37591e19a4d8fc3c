"""Step 4, workloads into pods: the intents every controller creates up front (owner, name, labels,
creation time), and the pod template each workload stamps out with its QoS class and scheduling request."""

from __future__ import annotations

import math
import random
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal

from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.kubelet.pod import QosClass, compute_qos, pod_level_request
from tmnb.snapshot import Container, OwnerRef, Pod
from tmnb.twin.sample.catalogue import WORKLOADS, ContainerSpec, Workload
from tmnb.twin.sample.common import CAPTURED_AT, name_suffix, new_uid, random_stream, rfc3339
from tmnb.twin.sample.specs import NodeSpec


@dataclass(frozen=True)
class Intent:
    """A pod a controller is about to create, with everything but its node and fate."""

    created: datetime
    workload: Workload
    replica: int
    owner: OwnerRef
    name: str
    labels: Mapping[str, str]
    node: str | None = None  # DaemonSet pods are bound by their controller
    attempt: int = 0
    generation: int = 0  # pods recreated after an eviction (a StatefulSet's keep their name)

    @property
    def order(self) -> tuple[datetime, str, str]:
        """Creation order as a snapshot lists pods: a replay in this order re-admits identically."""
        return (self.created, self.workload.namespace, self.name)


def _replicas(workload: Workload, counts: Mapping[str, int]) -> int:
    nodes = sum(counts.get(p, 0) for p in workload.pools or ())
    return max(workload.minimum, round(workload.per_node * nodes)) if nodes else 0


def _owner(workload: Workload, rng: random.Random) -> tuple[OwnerRef, dict[str, str]]:
    """The pod's controller reference and the labels its controller stamps on it."""
    labels = {"app.kubernetes.io/name": workload.name}
    if workload.kind == "Deployment":
        rs_hash = name_suffix(rng, 10)
        labels["pod-template-hash"] = rs_hash
        return OwnerRef("ReplicaSet", f"{workload.name}-{rs_hash}", new_uid(rng), "Deployment", workload.name), labels
    if workload.kind in ("DaemonSet", "StatefulSet"):
        labels["controller-revision-hash"] = name_suffix(rng, 10)
        return OwnerRef(workload.kind, workload.name, new_uid(rng)), labels
    scheduled = int((CAPTURED_AT - workload.age).timestamp()) // 60  # CronJobs name jobs by scheduled minute
    job = f"{workload.name}-{scheduled}" if workload.cronjob else workload.name
    labels["batch.kubernetes.io/job-name"] = job
    kind = "CronJob" if workload.cronjob else None
    return OwnerRef("Job", job, new_uid(rng), kind, workload.cronjob), labels


def _pod_name(workload: Workload, owner: OwnerRef, replica: int, rng: random.Random) -> str:
    if workload.kind == "StatefulSet":
        return f"{workload.name}-{replica}"
    if workload.kind == "DaemonSet":
        return f"{workload.name}-{name_suffix(rng, 5)}"
    return f"{owner.name}-{name_suffix(rng, 5)}"


def pod_intents(specs: Sequence[NodeSpec], seed: int) -> list[Intent]:
    """Every pod every controller creates up front, with creation times inside the workload's window."""
    counts = Counter(s.pool for s in specs)
    intents = []
    used: set[tuple[str, str]] = set()
    for w in WORKLOADS:
        rng = random_stream(seed, "workload", w.namespace, w.name)
        owner, labels = _owner(w, rng)
        if w.kind == "DaemonSet":
            targets: list[str | None] = [s.name for s in specs if w.pools is None or s.pool in w.pools]
        else:
            targets = [None] * _replicas(w, counts)
        start = CAPTURED_AT - w.age
        for i, node in enumerate(targets):
            created = start + w.spread * (i + rng.random()) / max(len(targets), 1)
            created = created.replace(microsecond=0)
            name = _pod_name(w, owner, i, rng)
            while (w.namespace, name) in used:  # five random characters repeat in fleets of thousands
                name = _pod_name(w, owner, i, rng)
            used.add((w.namespace, name))
            intents.append(Intent(created, w, i, owner, name, labels, node))
    return sorted(intents, key=lambda it: it.order)


def _container(spec: ContainerSpec) -> Container:
    return Container(
        name=spec.name,
        requests=dict(spec.requests),
        limits=dict(spec.limits),
        restart_policy="Always" if spec.sidecar else None,
        image=spec.image,
    )


def _model_container(c: Container) -> ModelContainer:
    return ModelContainer(c.name, c.requests, c.limits, c.restart_policy)


def _scheduling_request(pod: ModelPod) -> dict[str, int]:
    """What the scheduler reserves, in thousandths: per resource the pod-level amount (init and
    sidecar rules), a missing request defaulting to the limit as the API defaults it; plus a pod slot."""
    names = sorted({r for c in pod.all_containers() for r in (*c.requests, *c.limits)})
    request = {"pods": 1000}
    for name in names:

        def thousandths(c: ModelContainer, r: str = name) -> int:
            amount: Decimal | int = c.requests.get(r, c.limits.get(r, 0))  # parsed: Decimals
            return math.ceil(amount * 1000)

        request[name] = pod_level_request(pod, thousandths)
    return request


@dataclass(frozen=True)
class Template:
    """The pod spec a workload stamps out: shared immutable containers, QoS class and scheduling request."""

    containers: tuple[Container, ...]
    init_containers: tuple[Container, ...]
    model: ModelPod  # the kubelet's view, uid and name filled in per pod
    qos_class: QosClass
    request: Mapping[str, int]


def pod_template(w: Workload) -> Template:
    containers = tuple(_container(c) for c in w.containers)
    inits = tuple(_container(c) for c in w.init_containers)
    model = ModelPod(
        uid="",
        name=w.name,
        namespace=w.namespace,
        containers=tuple(_model_container(c) for c in containers),
        init_containers=tuple(_model_container(c) for c in inits),
    )
    qos_class = compute_qos(model)
    model = replace(model, qos_class=qos_class)
    return Template(containers, inits, model, qos_class, _scheduling_request(model))


def make_pod(intent: Intent, template: Template, node: str | None, phase: str, seed: int) -> Pod:
    w = intent.workload
    recreated = (intent.generation,) if intent.generation else ()  # the first generation's streams as they were
    rng = random_stream(seed, "pod", w.namespace, intent.name, intent.attempt, *recreated)
    return Pod(
        namespace=w.namespace,
        name=intent.name,
        uid=new_uid(rng),
        node=node,
        qos_class=template.qos_class,
        phase=phase,
        created=rfc3339(intent.created),
        owner=intent.owner,
        labels=_pod_labels(intent),
        containers=list(template.containers),
        init_containers=list(template.init_containers),
        priority_class=w.priority_class,
        volumes_emptydir=w.emptydir,
        tolerations=list(w.tolerations),
    )


def _pod_labels(intent: Intent) -> dict[str, str]:
    if intent.workload.kind != "StatefulSet":
        return dict(intent.labels)
    return {**intent.labels, "apps.kubernetes.io/pod-index": str(intent.replica),
            "statefulset.kubernetes.io/pod-name": intent.name}  # fmt: skip
