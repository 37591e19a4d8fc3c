"""Topology Manager scopes: how one pod is admitted, one class per scope, chosen once at start-up.

Container scope merges and allocates container by container, so what an earlier container got
changes what the next one sees. Pod scope merges once for the whole pod and then allocates every
container with that one hint. The none scope (policy ``none``) allocates with no affinity. Provider
errors become the kubelet's admit result reasons. ``SCOPES`` maps each scope name to its class;
``topology_manager.new_topology_manager`` picks one from it, and admission only calls its ``admit``.

Ports pkg/kubelet/cm/topologymanager/scope.go, scope_container.go, scope_pod.go and scope_none.go,
with the admit results of topology_manager.go and pkg/kubelet/cm/admission/errors.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import ClassVar, Protocol

from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.names import SCOPE_CONTAINER, SCOPE_NONE, SCOPE_POD, TOPOLOGY_NONE
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint
from tmnb.kubelet.topologymanager.policy import TopologyPolicy

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


class Scope(Protocol):
    """The kubelet's ``Scope``: a name, the policy it merges with, and ``Admit`` for one pod."""

    @property
    def name(self) -> str: ...

    @property
    def policy(self) -> TopologyPolicy: ...

    def admit(self, providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
        """``Admit``; providers in the kubelet's registration order (devices, CPU, memory)."""
        ...


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


def _admitting(admit: Callable[[AdmitResult], AdmitResult]) -> AdmitResult:
    """``admit`` on a fresh admitted result, a provider's ``AdmissionError`` turned into the rejection."""
    result = AdmitResult(admit=True)
    try:
        return admit(result)
    except AdmissionError as err:
        return _failed(result, err)


def _allocate(providers: Sequence[HintProvider], pod: Pod, c: Container, hint: TopologyHint, out: AdmitResult) -> None:
    out.allocations[c.name] = [p.allocate(pod, c, hint) for p in providers]


def _admit_policy_none(providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
    """``admitPolicyNone``: every container allocated with no affinity, nothing stored."""

    def admit(result: AdmitResult) -> AdmitResult:
        for c in pod.all_containers():
            _allocate(providers, pod, c, NO_AFFINITY, result)
        return result

    return _admitting(admit)


@dataclass(frozen=True)
class NoneScope:
    """``none``: what the manager runs with under policy none (no merge, no affinity)."""

    policy: TopologyPolicy
    name: ClassVar[str] = SCOPE_NONE

    def admit(self, providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
        return _admit_policy_none(providers, pod)


@dataclass(frozen=True)
class ContainerScope:
    """``container``: one merge and one allocation per container, in the pod's container order."""

    policy: TopologyPolicy
    name: ClassVar[str] = SCOPE_CONTAINER

    def admit(self, providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
        if self.policy.name == TOPOLOGY_NONE:
            return _admit_policy_none(providers, pod)
        merge = self.policy.merge

        def admit(result: AdmitResult) -> AdmitResult:
            for c in pod.all_containers():
                hint, admit = merge([p.get_topology_hints(pod, c) for p in providers])
                if not admit:
                    return _rejected(result)
                result.affinity[c.name] = hint
                result.allocations[c.name] = [p.allocate(pod, c, hint) for p in providers]  # _allocate, inline
            return result

        return _admitting(admit)


@dataclass(frozen=True)
class PodScope:
    """``pod``: one merge for the whole pod, then every container allocated with its hint."""

    policy: TopologyPolicy
    name: ClassVar[str] = SCOPE_POD

    def admit(self, providers: Sequence[HintProvider], pod: Pod) -> AdmitResult:
        if self.policy.name == TOPOLOGY_NONE:
            return _admit_policy_none(providers, pod)

        def admit(result: AdmitResult) -> AdmitResult:
            hint, admit = self.policy.merge([p.get_pod_topology_hints(pod) for p in providers])
            if not admit:
                return _rejected(result)
            for c in pod.all_containers():
                result.affinity[c.name] = hint
                _allocate(providers, pod, c, hint, result)
            return result

        return _admitting(admit)


ScopeType = Callable[[TopologyPolicy], Scope]

#: scope name -> scope class: ``topologyManagerScope``'s values, and ``none`` for policy none.
SCOPES: Mapping[str, ScopeType] = {s.name: s for s in (ContainerScope, PodScope, NoneScope)}
