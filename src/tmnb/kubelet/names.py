"""The kubelet's policy and scope names, spelled once (KubeletConfiguration values, case-sensitive).

The Topology Manager policy names double as the keys of the registry in
``kubelet.topologymanager.policy``; settings validation, the model and the replay all compare
against these constants.

Ports the names of pkg/kubelet/cm/topologymanager/policy_*.go and scope.go, cpumanager/policy_*.go
and memorymanager/policy_*.go (1.33–1.37).
"""

from __future__ import annotations

from typing import Final

#: topologyManagerPolicy values (policy_*.go); the allowed set is ``topologymanager.policy.TOPOLOGY_POLICIES``.
TOPOLOGY_NONE: Final = "none"
BEST_EFFORT: Final = "best-effort"
RESTRICTED: Final = "restricted"
SINGLE_NUMA_NODE: Final = "single-numa-node"

#: topologyManagerScope values; ``none`` is what the manager runs with under policy none.
SCOPE_CONTAINER: Final = "container"
SCOPE_POD: Final = "pod"
SCOPE_NONE: Final = "none"
TOPOLOGY_SCOPES: Final = (SCOPE_CONTAINER, SCOPE_POD)

#: cpuManagerPolicy values (lower case).
CPU_NONE: Final = "none"
CPU_STATIC: Final = "static"
CPU_POLICIES: Final = (CPU_NONE, CPU_STATIC)

#: memoryManagerPolicy values (capitalised, unlike the CPU manager's).
MEMORY_NONE: Final = "None"
MEMORY_STATIC: Final = "Static"
MEMORY_POLICIES: Final = (MEMORY_NONE, MEMORY_STATIC)


def unknown_policy(name: str) -> str:
    """The refusal of a policy name none of the three managers knows (their ``NewManager``'s ``default:``
    branch, Go ``\"%s\"``, not ``%q``)."""
    return f'unknown policy: "{name}"'


#: pod.status.reason of a pod the kubelet's admission handlers refused.
ADMISSION_REASONS: Final = ("TopologyAffinityError", "SMTAlignmentError", "UnexpectedAdmissionError")
#: the check behind each reason, as a postmortem names it (SMTAlignmentError comes from the static CPU
#: policy's full-pcpus-only check, TopologyAffinityError from the Topology Manager policy's merge,
#: UnexpectedAdmissionError from a hint provider's Allocate)
ADMISSION_CHECKS: Final = {
    "TopologyAffinityError": "the Topology Manager policy's NUMA alignment",
    "SMTAlignmentError": "the CPU manager's full-pcpus-only SMT alignment",
    "UnexpectedAdmissionError": "a resource manager's Allocate",
}
