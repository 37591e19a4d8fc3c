"""The embedded sample after a change: ``single-numa-node`` rolled out to one wave of nodes.

The same control loop that built the sample (``scheduling.Admission``) goes on in time, one node
at a time as the guided rollout does it: cordon and drain (controllers recreate the evicted pods,
the topology-unaware scheduler binds them elsewhere, those kubelets admit them), the kubelet
restarted on the new policy with its state files removed (it re-admits the DaemonSet pods still
bound to it), uncordon; then the scheduler retries what stayed Pending and controllers replace
replicas whose every pod was rejected, which lands them on the emptied node. Nothing is
hand-placed: every cpuset and rejection is the kubelet model's answer. What comes out: pods moved
to other nodes, one container newly aligned, llm-serving short of a replica (its vllm needs CPUs,
memory and a GPU on one NUMA zone, and no zone has them), telco pods rejected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from tmnb.kubelet.names import SINGLE_NUMA_NODE
from tmnb.kubelet.node import NodeSimulator
from tmnb.replay import node_model
from tmnb.snapshot import Pod, Setting
from tmnb.snapshot.model import SettingSource
from tmnb.twin.sample.common import CAPTURED_AT, name_suffix, random_stream, rfc3339
from tmnb.twin.sample.nodes import BuiltNode
from tmnb.twin.sample.pods import Intent
from tmnb.twin.sample.scheduling import Admission

#: The change (the demo's, and the readiness report's default target).
CHANGE = {"topologyManagerPolicy": SINGLE_NUMA_NODE}
#: The nodes converted, in rollout order: a GPU, a telco and a general node not yet on the policy.
WAVE = ("gpu-h100-02", "tel-epyc-03", "gen-icx-01")
ROLLOUT_START = CAPTURED_AT + timedelta(minutes=30)
#: Drain, restart and uncordon of one node, and the pause before the next.
PER_NODE = timedelta(minutes=8)
#: When the after snapshot is taken: two hours after the last node, for a full metrics window.
AFTER_CAPTURED_AT = ROLLOUT_START + PER_NODE * len(WAVE) + timedelta(hours=2, minutes=20)
DROPIN_NAME = "99-tmnb.conf"


@dataclass(frozen=True)
class Step:
    """One journal record of the sample rollout."""

    time: datetime
    event: str
    node: str


def journal(wave: Sequence[str] = WAVE) -> list[Step]:
    """The rollout's records, as the guided rollout journals them (drain, restart, uncordon per node)."""
    steps = []
    for i, name in enumerate(wave):
        start = ROLLOUT_START + PER_NODE * i
        steps += [
            Step(start, "drain", name),
            Step(start + timedelta(minutes=3), "kubelet restarted", name),
            Step(start + timedelta(minutes=5), "uncordon", name),
        ]
    return steps


def _evicted(node: BuiltNode) -> list[tuple[Pod, Mapping[str, int]]]:
    """What a drain evicts: every pod but the DaemonSet's (kubectl drain --ignore-daemonsets)."""
    return [(pod, request) for pod, _, request in node.admitted if not (pod.owner and pod.owner.kind == "DaemonSet")]


def _recreated(intent: Intent, at: datetime, seed: int) -> Intent:
    """The pod the controller creates for an evicted one; a StatefulSet's keeps its name."""
    name = intent.name
    if intent.workload.kind != "StatefulSet":
        name = f"{intent.owner.name}-{name_suffix(random_stream(seed, 'recreated', intent.name), 5)}"
    return replace(intent, created=at, name=name, attempt=0, generation=intent.generation + 1)


def _converted(node: BuiltNode, change: Mapping[str, str]) -> BuiltNode:
    """The node's record with the change as a drop-in (how the rollout applies it) and a fresh kubelet."""
    kubelet = node.base.kubelet
    where = f"{kubelet.config_dir}/{DROPIN_NAME}" if kubelet.config_dir else kubelet.config_file
    source: SettingSource = "dropin" if kubelet.config_dir else "file"
    settings = dict(kubelet.settings)
    settings.update({k: Setting(value=v, source=source, detail=where) for k, v in change.items()})
    base = replace(node.base, kubelet=replace(kubelet, settings=settings))
    return replace(node, base=base, sim=NodeSimulator(node_model(base, {})), admitted=[])


def roll_out(
    admission: Admission,
    nodes: list[BuiltNode],
    seed: int,
    *,
    wave: Sequence[str] = WAVE,
    change: Mapping[str, str] = CHANGE,
) -> list[BuiltNode]:
    """Continue ``admission`` through the rollout; returns the nodes as they end (converted ones replaced)."""
    index = {n.name: i for i, n in enumerate(nodes)}
    for step in (s for s in journal(wave) if s.event == "drain"):
        node = nodes[index[step.node]]
        node.accepting = False
        evicted = _evicted(node)
        gone = {pod.uid for pod, _ in evicted}
        for pod, request in evicted:
            node.sim.remove_pod(admission.model(pod))
            node.add(request, sign=-1)
        node.admitted = [entry for entry in node.admitted if entry[0].uid not in gone]
        admission.outcome.pods = [p for p in admission.outcome.pods if p.uid not in gone]
        intents = admission.outcome.intents
        admission.run(
            [_recreated(intents[p.uid], step.time + timedelta(seconds=5 + i), seed) for i, (p, _) in enumerate(evicted)]
        )
        fresh = _converted(node, change)
        for pod, _, request in node.admitted:  # the DaemonSet pods, re-admitted by the restarted kubelet
            result = fresh.sim.admit(admission.model(pod))
            if result.admitted:
                fresh.admitted.append((pod, result, request))
            else:
                fresh.add(request, sign=-1)
                admission.reject(pod, result)
        fresh.accepting = True
        fresh.version += 1
        nodes[index[step.node]] = fresh
        admission.scheduler.replace(fresh)
        admission.run(_retried(admission, step.time, step.time + timedelta(minutes=5, seconds=10), seed))
    return nodes


def _retried(admission: Admission, since: datetime, at: datetime, seed: int) -> list[Intent]:
    """What the uncordoned node gets first: pods left Pending during the drain (the scheduler retries
    them) and one more pod for each replica whose replacements were all rejected (the controller is
    still short of it; the sample caps each burst of rejections at ``MAX_REJECTIONS``)."""
    outcome, retried = admission.outcome, []
    pending = [p for p in outcome.pods if p.phase == "Pending" and p.created >= rfc3339(since)]
    outcome.pods = [p for p in outcome.pods if p not in pending]
    retried += [outcome.intents[p.uid] for p in pending]
    failed = {}
    for pod, intent in outcome.rejected:
        if pod.created >= rfc3339(since):
            failed[(intent.workload.namespace, intent.workload.name, intent.replica)] = intent
    running = {(i.workload.namespace, i.workload.name, i.replica) for p in outcome.pods if p.phase == "Running"
               for i in [outcome.intents[p.uid]]}  # fmt: skip
    for key, intent in sorted(failed.items()):
        if key not in running:
            retried.append(_recreated(intent, at, seed))
    # A StatefulSet's controller deletes its failed pod before it creates the next under the same name:
    # a namespace never holds two pods of one name.
    reused = {(r.workload.namespace, r.name) for r in retried if r.workload.kind == "StatefulSet"}
    outcome.pods = [p for p in outcome.pods if p.phase != "Failed" or (p.namespace, p.name) not in reused]
    return retried
