"""Topology Manager rules: the kubelet's checks (policy and scope names, the option-map gate, the
options, NUMA distances and the NUMA node limit), then tmnb's advice on what the settings do."""

from __future__ import annotations

from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.options import DEFAULT_MAX_ALLOWABLE_NUMA_NODES, MAX_ALLOWABLE_NUMA_NODES_WARNING
from tmnb.kubelet.startup.checks import Start, topology_options
from tmnb.kubelet.topologymanager.policy import TOPOLOGY_POLICIES
from tmnb.settings.findings import Findings
from tmnb.settings.managers.shared import kubelet_refusals

_OPTIONS = "topologyManagerPolicyOptions"


def check_topology(start: Start, out: Findings) -> None:
    kubelet_refusals(start, "topology", out)
    cfg = start.cfg
    policy = cfg["topologyManagerPolicy"]
    if policy == TOPOLOGY_NONE:
        if cfg.get(_OPTIONS):
            out.add(
                "topology.options-ignored",
                _OPTIONS,
                "warning",
                "topologyManagerPolicyOptions are ignored while topologyManagerPolicy is none: the kubelet does not "
                "parse them, so mistakes in them surface only when the policy changes",
            )
        return
    parsed = topology_options(start)
    if parsed is not None and parsed.max_allowable_numa_nodes > DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
        out.add("topology.max-numa-above-default", _OPTIONS, "info", MAX_ALLOWABLE_NUMA_NODES_WARNING, kubelet=True)
    if parsed is not None and parsed.prefer_closest_numa and policy == SINGLE_NUMA_NODE:
        out.add(
            "topology.prefer-closest-ineffective",
            _OPTIONS,
            "info",
            "prefer-closest-numa-nodes only changes best-effort and restricted; "
            "single-numa-node never spans NUMA nodes",
        )
    no_hints = cfg["cpuManagerPolicy"] == CPU_NONE and cfg["memoryManagerPolicy"] == MEMORY_NONE
    if policy in TOPOLOGY_POLICIES and no_hints:
        out.add(
            "topology.no-cpu-memory-hints",
            "topologyManagerPolicy",
            "info",
            f"topologyManagerPolicy {policy} with cpuManagerPolicy none and memoryManagerPolicy None aligns "
            "only devices: no CPU or memory hint provider takes part",
        )
