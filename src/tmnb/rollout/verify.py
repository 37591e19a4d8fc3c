"""The verification pod: sized from the node's shape, predicted by tmnb.kubelet, checked on the node.

After the change the node is collected again and its kubelet model (restart mode: today's
checkpointed assignments) admits one Guaranteed pod of one whole physical core. The real pod is
then created on the node; the kubelet's decision, the cpuset it wrote into ``cpu_manager_state``
and the NUMA nodes of that cpuset must be exactly the prediction. Before that, ``restart_drift``
holds every pod that ran through the restart to the checkpoint entry it had before it.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet.node import NodeSimulator
from tmnb.kubelet.pod import Container as ModelContainer
from tmnb.kubelet.pod import Pod as ModelPod
from tmnb.parse.jsonable import JsonDict
from tmnb.parse.state_files import CpuManagerState, parse_cpu_manager_state
from tmnb.replay import model_for, plan_for
from tmnb.rollout.plan import CPU_STATE
from tmnb.snapshot import Node, Snapshot

if TYPE_CHECKING:
    from tmnb.rollout.ops import NodeOps

CONTAINER = "verify"
MEMORY = "128Mi"
LABEL = "tmnb.dev/rollout-verify"


@dataclass(frozen=True)
class VerifyPodPrediction:
    cpu: int
    admitted: bool
    reason: str
    cpuset: str
    numa: list[int]

    def as_dict(self) -> JsonDict:
        return {"admitted": self.admitted, "reason": self.reason, "cpuset": self.cpuset, "numa": self.numa}


def whole_core(node: Node) -> int:
    """CPUs of one physical core: a size full-pcpus-only accepts and every static policy pins."""
    per_core = Counter((c.socket, c.core) for c in node.cpus if c.online)
    return max(min(per_core.values(), default=1), 1)


def numa_of(cpuset: str, node: Node) -> list[int]:
    cpus = set(CPUSet.parse(cpuset)) if cpuset else set()
    return sorted({c.numa for c in node.cpus if c.cpu in cpus})


def predict_verify_pod(snapshot: Snapshot, name: str) -> VerifyPodPrediction:
    node = snapshot.node(name)
    if not node.cpus or not node.numa:
        raise InputError(f"node {name}: no CPU/NUMA topology collected, so the test pod cannot be predicted")
    cpu = whole_core(node)
    resources = {"cpu": str(cpu), "memory": MEMORY}
    pod = ModelPod(
        uid="tmnb-verify",
        name="tmnb-verify",
        namespace="default",
        containers=(ModelContainer(CONTAINER, resources, resources),),
        qos_class="Guaranteed",
    )
    result = NodeSimulator(model_for(plan_for(node, {}), mode="running")).admit(pod)
    cpuset = next((str(c.cpuset) for c in result.containers if c.name == CONTAINER and c.cpuset), "")
    reason = "" if result.admitted else result.reason
    return VerifyPodPrediction(cpu, result.admitted, reason, cpuset, numa_of(cpuset, node) if result.admitted else [])


def verify_pod_manifest(prediction: VerifyPodPrediction, node: str, change_id: str, image: str) -> JsonDict:
    resources = {"cpu": str(prediction.cpu), "memory": MEMORY}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"generateName": "tmnb-verify-", "labels": {LABEL: change_id}},
        "spec": {
            "nodeName": node,
            "restartPolicy": "Never",
            "automountServiceAccountToken": False,
            "tolerations": [{"operator": "Exists"}],
            "containers": [
                {
                    "name": CONTAINER,
                    "image": image,
                    "command": ["sleep", "3600"],
                    "resources": {"requests": resources, "limits": resources},
                }
            ],
        },
    }


def actual_placement(pod: JsonDict, ops: NodeOps, node: Node) -> JsonDict:
    """What the kubelet did with the test pod: its phase and the cpuset it checkpointed."""
    status = pod.get("status") or {}
    admitted = status.get("phase") == "Running"
    if not admitted:
        return {"admitted": False, "reason": status.get("reason") or "", "cpuset": "", "numa": []}
    uid = pod["metadata"]["uid"]
    raw = ops.read(CPU_STATE)
    entries: JsonDict = {}
    if raw:
        try:
            entries = (json.loads(raw).get("entries") or {}).get(uid) or {}
        except ValueError:
            raise InputError("not JSON", source=f"{node.name}:{CPU_STATE}") from None
    cpuset = str(entries.get(CONTAINER) or "")
    return {"admitted": True, "reason": "", "cpuset": cpuset, "numa": numa_of(cpuset, node)}


def _held(state: CpuManagerState, uid: str) -> dict[str, CPUSet]:
    """A pod's exclusive CPUs in a checkpoint, per container (the pod-level set as ``pod``)."""
    held = dict(state.entries.get(uid) or {})
    if uid in state.pod_entries:
        held["pod"] = state.pod_entries[uid]
    return held


def _listed(held: dict[str, CPUSet]) -> str:
    return ", ".join(f"{cpus} ({'pod level' if name == 'pod' else f'container {name}'})" for name, cpus in held.items())


def restart_drift(before: str | bytes, after: str | bytes, pods: list[JsonDict]) -> list[str]:
    """What changed for running pods across a kubelet restart, one line per pod: a pod that held
    exclusive CPUs in the checkpoint before the restart and was rejected when the kubelet re-admitted
    it (its reason and message, and the CPUs it held), or whose CPUs differ in the checkpoint the
    restarted kubelet wrote; a running pod pinned afresh is named too. ``pods``: the node's pods as
    the API returns them after the restart. Empty: every running pod kept exactly its CPUs."""
    old = parse_cpu_manager_state(before, source=f"{CPU_STATE} before the restart")
    new = parse_cpu_manager_state(after, source=f"{CPU_STATE} after the restart")
    found = []
    for pod in pods:
        meta, status = pod["metadata"], pod.get("status") or {}
        name, uid = f"{meta['namespace']}/{meta['name']}", meta.get("uid", "")
        was, now = _held(old, uid), _held(new, uid)
        if status.get("phase") not in ("Running", "Pending"):
            if was:
                why = f"{status.get('reason') or status.get('phase') or 'not running'}: "
                why += str(status.get("message") or "").removeprefix("Pod was rejected: ")
                found.append(f"{name}: rejected at the restart ({why.rstrip(': ')}); it held CPUs {_listed(was)}")
            continue
        for container in sorted(set(was) | set(now)):
            if was.get(container) != now.get(container):
                before_cpus = str(was[container]) if container in was else "no exclusive CPUs"
                after_cpus = str(now[container]) if container in now else "none"
                where = "pod level" if container == "pod" else f"container {container}"
                found.append(f"{name} {where}: {before_cpus} before the restart, {after_cpus} after")
    return found


def repinned(before: str | bytes, after: str | bytes, pods: list[JsonDict]) -> bool:
    """Running pods hold other exclusive CPUs than in the checkpoint from before the restart, and none
    holds CPUs it did not hold then: that checkpoint is what they ran on, with nothing newer in it to
    lose, so a rollback puts it back (the kubelet re-applies a restored checkpoint's CPUs at its start).
    ``pods`` as for ``restart_drift``."""
    old = parse_cpu_manager_state(before, source=f"{CPU_STATE} before the restart")
    new = parse_cpu_manager_state(after, source=f"{CPU_STATE} after the restart")
    moved = False
    for pod in pods:
        if (pod.get("status") or {}).get("phase") not in ("Running", "Pending"):
            continue
        uid = pod["metadata"].get("uid", "")
        was, now = _held(old, uid), _held(new, uid)
        if set(now) - set(was):
            return False
        moved = moved or any(was[c] != now.get(c) for c in was)
    return moved
