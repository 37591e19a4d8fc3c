"""Topology Manager rules: policy and scope names, when policy options are parsed, NUMA limits."""

from __future__ import annotations

from collections.abc import Collection, Mapping

from tmnb.kubelet import gostr, options
from tmnb.kubelet.names import (
    CPU_NONE,
    MEMORY_NONE,
    SCOPE_CONTAINER,
    SINGLE_NUMA_NODE,
    TOPOLOGY_NONE,
    TOPOLOGY_SCOPES,
)
from tmnb.kubelet.policy import TOPOLOGY_POLICIES
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import topology_map_gate


def check_topology(
    settings: KubeletSettings,
    kubelet: KubeletProfile,
    gates: Mapping[str, bool],
    numa_nodes: Collection[int] | None,
    out: Findings,
) -> None:
    policy = settings.value("topologyManagerPolicy", TOPOLOGY_NONE)
    scope = settings.value("topologyManagerScope", SCOPE_CONTAINER)
    if policy not in TOPOLOGY_POLICIES:
        allowed = "[" + " ".join(gostr.quote(p) for p in TOPOLOGY_POLICIES) + "]"
        out.add(
            "topology.policy",
            "topologyManagerPolicy",
            "error",
            f"invalid configuration: topologyManagerPolicy (--topology-manager-policy) {gostr.quote(policy)} "
            f"must be one of: {allowed}",
            kubelet=True,
        )
    if scope not in TOPOLOGY_SCOPES:
        out.add(
            "topology.scope",
            "topologyManagerScope",
            "error",
            f"invalid configuration: topologyManagerScope (--topology-manager-scope) {gostr.quote(scope)} "
            'must be one of: "container", or "pod"',
            kubelet=True,
        )
    if policy not in TOPOLOGY_POLICIES:
        return
    max_nodes = _topology_options(policy, settings.value("topologyManagerPolicyOptions", {}), kubelet, gates, out)
    if policy == TOPOLOGY_NONE:
        return  # NewManager returns before counting NUMA nodes
    if numa_nodes is not None and len(numa_nodes) > max_nodes:
        out.add(
            "topology.too-many-numa-nodes",
            "topologyManagerPolicy",
            "error",
            f"unsupported on machines with more than {max_nodes} NUMA Nodes",
            kubelet=True,
        )
    if settings.value("cpuManagerPolicy") == CPU_NONE and settings.value("memoryManagerPolicy") == MEMORY_NONE:
        out.add(
            "topology.no-cpu-memory-hints",
            "topologyManagerPolicy",
            "info",
            f"topologyManagerPolicy {policy} with cpuManagerPolicy none and memoryManagerPolicy None aligns "
            "only devices: no CPU or memory hint provider takes part",
        )


def _topology_options(
    policy: str, opts: Mapping[str, str], kubelet: KubeletProfile, gates: Mapping[str, bool], out: Findings
) -> int:
    """Check ``topologyManagerPolicyOptions``; returns the NUMA node limit they set."""
    field = "topologyManagerPolicyOptions"
    if policy == TOPOLOGY_NONE:
        if opts:
            out.add(
                "topology.options-ignored",
                field,
                "warning",
                "topologyManagerPolicyOptions are ignored while topologyManagerPolicy is none: the kubelet does not "
                "parse them, so mistakes in them surface only when the policy changes",
            )
            out.rejected(field, lambda: topology_map_gate(opts, kubelet, gates))
        return options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    parsed = out.rejected(
        field, lambda: options.parse_topology_manager_options(opts, kubelet=kubelet, feature_gates=gates)
    )
    if parsed is None:
        return options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    if parsed.max_allowable_numa_nodes > options.DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
        out.add(
            "topology.max-numa-above-default",
            field,
            "info",
            "WARNING: the value of max-allowable-numa-nodes is more than the default recommended value",
            kubelet=True,
        )
    if parsed.prefer_closest_numa and policy == SINGLE_NUMA_NODE:
        out.add(
            "topology.prefer-closest-ineffective",
            field,
            "info",
            "prefer-closest-numa-nodes only changes best-effort and restricted; "
            "single-numa-node never spans NUMA nodes",
        )
    return parsed.max_allowable_numa_nodes
