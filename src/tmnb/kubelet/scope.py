"""Topology Manager scopes: how one pod is admitted (container, pod or none scope).

Container scope merges and allocates container by container, so what an earlier container got
changes what the next one sees. Pod scope merges once for the whole pod and then allocates every
container with that one hint. Provider errors become the kubelet's admit result reasons.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.hints import ProviderHints, TopologyHint
from tmnb.kubelet.names import SCOPE_NONE, SCOPE_POD, TOPOLOGY_NONE
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.policy import TopologyPolicy

TOPOLOGY_AFFINITY_ERROR = "TopologyAffinityError"
TOPOLOGY_AFFINITY_MESSAGE = "Resources cannot be allocated with Topology locality"
UNEXPECTED_ADMISSION_ERROR = "UnexpectedAdmissionError"
NO_AFFINITY = TopologyHint(None, False)


class HintProvider(Protocol):
    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints: ...

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints: ...

    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> object:
        """What the provider gave the container (a CPU mask, device ids, memory blocks, or None)."""
        ...


@dataclass
class AdmitResult:
    """The kubelet's PodAdmitResult plus what the Topology Manager stored per container."""

    admit: bool
    reason: str = ""
    message: str = ""
    affinity: dict[str, TopologyHint] = field(default_factory=dict)
    #: per container, each provider's ``allocate`` result, in the providers' order
    allocations: dict[str, list[object]] = field(default_factory=dict)

    @property
    def pod_status_message(self) -> str:
        return f"Pod was rejected: {self.message}" if not self.admit else ""


def _failed(result: AdmitResult, err: AdmissionError) -> AdmitResult:
    result.admit = False
    if err.reason:
        result.reason, result.message = err.reason, str(err)
    else:
        result.reason = UNEXPECTED_ADMISSION_ERROR
        result.message = f"Allocate failed due to {err}, which is unexpected"
    return result


def _rejected(result: AdmitResult) -> AdmitResult:
    result.admit = False
    result.reason, result.message = TOPOLOGY_AFFINITY_ERROR, TOPOLOGY_AFFINITY_MESSAGE
    return result


def _allocate(providers: Sequence[HintProvider], pod: Pod, c: Container, hint: TopologyHint, out: AdmitResult) -> None:
    out.allocations[c.name] = [p.allocate(pod, c, hint) for p in providers]


def admit_pod(policy: TopologyPolicy, scope: str, providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
    """``Admit`` for one pod; providers in the kubelet's registration order (devices, CPU, memory)."""
    result = AdmitResult(admit=True)
    containers = pod.all_containers()
    try:
        if scope == SCOPE_NONE or policy.name == TOPOLOGY_NONE:
            for c in containers:
                _allocate(providers, pod, c, NO_AFFINITY, result)
            return result
        if scope == SCOPE_POD:
            hint, admit = policy.merge([p.get_pod_topology_hints(pod) for p in providers])
            if not admit:
                return _rejected(result)
            for c in containers:
                result.affinity[c.name] = hint
                _allocate(providers, pod, c, hint, result)
            return result
        for c in containers:
            hint, admit = policy.merge([p.get_topology_hints(pod, c) for p in providers])
            if not admit:
                return _rejected(result)
            result.affinity[c.name] = hint
            result.allocations[c.name] = [p.allocate(pod, c, hint) for p in providers]  # _allocate, inline
        return result
    except AdmissionError as err:
        return _failed(result, err)
