"""Lint a planned kubelet change against each node's current state, before anything is touched.

A finding says where (node, area, setting), what the plan expects and what the node has, how bad
it is (``blocker``: the change will fail or not take effect; ``warning``: it needs care or
manual action; ``info``: worth knowing) and what to do. Rules are small functions, one pitfall
each, so the list reads like the runbook's "known issues" section.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.inventory import is_integer_cpu, shape_of, skew_note
from tmnb.analysis.occupancy import pool_of
from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.options import (
    MAX_ALLOWABLE_NUMA_NODES,
    gate_for,
    option_maturity,
    parse_cpu_manager_options,
    parse_topology_manager_options,
)
from tmnb.snapshot import Node, Snapshot
from tmnb.versions import KubeVersion

Severity = Literal["blocker", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "blocker": 2}
STRICT_POLICIES = {"restricted", "single-numa-node"}
DEFAULTS: dict[str, Any] = {
    "topologyManagerPolicy": "none",
    "topologyManagerScope": "container",
    "topologyManagerPolicyOptions": {},
    "cpuManagerPolicy": "none",
    "cpuManagerPolicyOptions": {},
    "memoryManagerPolicy": "None",
    "featureGates": {},
}
STATE_FILES = {
    "cpuManagerPolicy": "/var/lib/kubelet/cpu_manager_state",
    "memoryManagerPolicy": "/var/lib/kubelet/memory_manager_state",
}


@dataclass(frozen=True)
class Finding:
    rule: str
    node: str
    area: str
    setting: str
    expected: str
    detected: str
    severity: Severity
    explanation: str
    remedy: str


@dataclass(frozen=True)
class NodePlan:
    """One node's current and planned settings; the rules read only this."""

    node: Node
    current: Mapping[str, Any]
    planned: Mapping[str, Any]
    version: KubeVersion | None

    def changes(self, name: str) -> bool:
        return _show(self.current.get(name)) != _show(self.planned.get(name))


def _show(value: Any) -> str:
    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def plan_for(node: Node, target: Mapping[str, Any]) -> NodePlan:
    current = {**DEFAULTS, **{k: s.value for k, s in node.kubelet.settings.items()}}
    version = None
    if node.versions.kubelet:
        try:
            version = KubeVersion.parse(node.versions.kubelet)
        except InputError:
            version = None
    return NodePlan(node, current, {**current, **target}, version)


Rule = Callable[[NodePlan], Iterator[Finding]]


def flag_overrides_file(p: NodePlan) -> Iterator[Finding]:
    for name, setting in p.node.kubelet.settings.items():
        if setting.source != "flag":
            continue
        planned_change = name in p.planned and p.changes(name)
        yield Finding(
            "flag-overrides-file",
            p.node.name,
            "kubelet configuration",
            name,
            "set in the config file or a drop-in",
            f"set by {setting.detail or 'a command-line flag'} = {_show(setting.value)}",
            "blocker" if planned_change else "info",
            "Command-line flags beat the config file and its drop-ins: an edit of the file will not take effect"
            + (" and this plan changes the field." if planned_change else "."),
            f"Remove {setting.detail or 'the flag'} from the kubelet unit / KUBELET_EXTRA_ARGS and set {name} "
            "in the config file.",
        )


def _option_findings(p: NodePlan, manager: Literal["topology", "cpu"], field: str) -> Iterator[Finding]:
    options = p.planned.get(field) or {}
    if not options or p.version is None:
        return
    gates = p.planned.get("featureGates") or {}
    parse = parse_topology_manager_options if manager == "topology" else parse_cpu_manager_options
    try:
        parse(options, version=p.version, feature_gates=gates)
    except ConfigRejected as err:
        yield Finding(
            "option-not-available",
            p.node.name,
            f"{manager} manager",
            field,
            _show(options),
            f"kubelet {p.version}",
            "blocker",
            f"The kubelet would refuse to start: {err.message}",
            "Upgrade the kubelet first, enable the named feature gate, or drop the option.",
        )
        return
    except InputError as err:
        yield Finding(
            "option-not-available",
            p.node.name,
            f"{manager} manager",
            field,
            _show(options),
            "invalid",
            "blocker",
            err.message,
            "Fix the option map: names and values are strings.",
        )
        return
    for name in options:
        maturity = option_maturity(manager, name, p.version)
        if maturity in {"alpha", "beta"}:
            yield Finding(
                "option-maturity",
                p.node.name,
                f"{manager} manager",
                f"{field}.{name}",
                "a GA option",
                f"{maturity} in kubelet {p.version}",
                "warning" if maturity == "alpha" else "info",
                f"{name} is {maturity} in this kubelet and depends on the {gate_for(manager, maturity)} feature gate.",
                "Keep the gate explicit in featureGates and re-check after kubelet upgrades.",
            )


def options_valid(p: NodePlan) -> Iterator[Finding]:
    if p.planned.get("topologyManagerPolicy") != "none":
        yield from _option_findings(p, "topology", "topologyManagerPolicyOptions")
    if p.planned.get("cpuManagerPolicy") == "static":
        yield from _option_findings(p, "cpu", "cpuManagerPolicyOptions")


def options_ignored(p: NodePlan) -> Iterator[Finding]:
    if p.planned.get("topologyManagerPolicy") == "none" and p.planned.get("topologyManagerPolicyOptions"):
        yield Finding(
            "options-ignored",
            p.node.name,
            "topology manager",
            "topologyManagerPolicyOptions",
            "no options with policy none",
            _show(p.planned["topologyManagerPolicyOptions"]),
            "warning",
            "With policy none the kubelet never parses the options: typos and unsupported values pass silently.",
            "Remove the options or set a policy that uses them.",
        )
    if p.planned.get("cpuManagerPolicy") == "none" and p.planned.get("cpuManagerPolicyOptions"):
        opts = p.planned["cpuManagerPolicyOptions"]
        yield Finding(
            "options-ignored",
            p.node.name,
            "cpu manager",
            "cpuManagerPolicyOptions",
            "no options with policy none",
            _show(opts),
            "blocker",
            f"The kubelet would refuse to start: None policy: received unsupported options={_go_map(opts)}",
            "Remove cpuManagerPolicyOptions or switch the CPU manager to static.",
        )


def _go_map(opts: Mapping[str, str]) -> str:
    return "map[" + " ".join(f"{k}:{v}" for k, v in sorted(opts.items())) + "]"


def cpu_none_with_strict_policy(p: NodePlan) -> Iterator[Finding]:
    policy = p.planned.get("topologyManagerPolicy")
    if policy in STRICT_POLICIES and p.planned.get("cpuManagerPolicy") != "static":
        yield Finding(
            "cpu-none-strict-topology",
            p.node.name,
            "cpu manager",
            "cpuManagerPolicy",
            "static",
            _show(p.planned.get("cpuManagerPolicy")),
            "warning",
            f"With topologyManagerPolicy {policy} but cpuManagerPolicy none, CPUs give no NUMA hints: only devices "
            "(and memory with the Static memory manager) are aligned, and CPUs still float across NUMA nodes.",
            "Plan cpuManagerPolicy static (with reserved CPUs) together with the topology policy.",
        )


def static_cpu_needs_reservation(p: NodePlan) -> Iterator[Finding]:
    if p.planned.get("cpuManagerPolicy") != "static" or p.planned.get("reservedSystemCPUs"):
        return
    from kubernetes.utils import parse_quantity

    total = sum(parse_quantity((p.planned.get(k) or {}).get("cpu", "0")) for k in ("kubeReserved", "systemReserved"))
    if total <= 0:
        yield Finding(
            "static-needs-reserved-cpus",
            p.node.name,
            "cpu manager",
            "reservedSystemCPUs",
            "a non-zero CPU reservation",
            "none",
            "blocker",
            "The kubelet would refuse to start: [cpumanager] the static policy requires systemreserved.cpu + "
            "kubereserved.cpu to be greater than zero",
            "Set reservedSystemCPUs (e.g. one core's threads per socket) or kubeReserved/systemReserved cpu.",
        )


def manager_policy_change(p: NodePlan) -> Iterator[Finding]:
    for field, state in STATE_FILES.items():
        if p.changes(field):
            yield Finding(
                "manager-policy-change",
                p.node.name,
                "kubelet restart",
                field,
                _show(p.planned.get(field)),
                _show(p.current.get(field)),
                "warning",
                f"Changing {field} makes the kubelet refuse to start while {state} holds the old policy "
                '("could not restore state from checkpoint: configured policy ... differs from state checkpoint '
                'policy").',
                f"Manual action: drain the node, stop the kubelet, remove {state}, apply the config, "
                "start the kubelet, verify, uncordon.",
            )


def numa_limit(p: NodePlan) -> Iterator[Finding]:
    zones = len(p.node.numa) or len(p.node.nrt)
    if zones <= 8 or p.planned.get("topologyManagerPolicy") in (None, "none"):
        return
    raw = (p.planned.get("topologyManagerPolicyOptions") or {}).get(MAX_ALLOWABLE_NUMA_NODES)
    limit = int(raw) if isinstance(raw, str) and raw.strip().lstrip("+").isdigit() else 8
    if zones > limit:
        yield Finding(
            "numa-over-limit",
            p.node.name,
            "topology manager",
            f"topologyManagerPolicyOptions.{MAX_ALLOWABLE_NUMA_NODES}",
            f">= {zones}",
            str(raw or "unset (8)"),
            "blocker",
            f"The kubelet would refuse to start: unsupported on machines with more than {limit} NUMA Nodes "
            f"(this node has {zones}).",
            f'Set {MAX_ALLOWABLE_NUMA_NODES}: "{zones}" (beta from 1.31, GA in 1.35), knowing that hint '
            "merging grows as 2^n with n NUMA nodes, or keep policy none on this hardware.",
        )


def devices_without_numa(p: NodePlan) -> Iterator[Finding]:
    if p.planned.get("topologyManagerPolicy") not in STRICT_POLICIES | {"best-effort"}:
        return
    for resource in sorted({d.resource for d in p.node.devices if not d.numa}):
        yield Finding(
            "device-without-numa",
            p.node.name,
            "device manager",
            resource,
            "devices with NUMA affinity",
            "no NUMA topology reported",
            "warning",
            f"The {resource} device plugin reports no NUMA topology, so the Topology Manager treats it as "
            "'no preference': its devices are never aligned with the CPUs and memory.",
            "Upgrade or configure the device plugin to report TopologyInfo.",
        )


def non_integer_guaranteed(p: NodePlan, pods: Iterable[Any]) -> Iterator[Finding]:
    for pod in pods:
        fractional = [c.name for c in pod.containers if not is_integer_cpu(c.requests.get("cpu"))]
        if pod.qos_class == "Guaranteed" and fractional:
            yield Finding(
                "guaranteed-fractional-cpu",
                p.node.name,
                "workloads",
                f"{pod.namespace}/{pod.name}",
                "whole-number CPU requests",
                ", ".join(fractional),
                "info",
                "Guaranteed pods with fractional CPU requests never get exclusive CPUs; they stay in the shared pool.",
                "Round the CPU request to a whole number if this workload needs pinning.",
            )


def reserved_cpus_span_numa(p: NodePlan) -> Iterator[Finding]:
    text = p.planned.get("reservedSystemCPUs")
    if not text:
        return
    reserved = CPUSet.parse(str(text))
    zones = sorted({c.numa for c in p.node.cpus if c.cpu in reserved})
    if len(zones) > 1:
        yield Finding(
            "reserved-cpus-span-numa",
            p.node.name,
            "cpu manager",
            "reservedSystemCPUs",
            "CPUs of one NUMA node",
            f"{text} (NUMA {', '.join(map(str, zones))})",
            "info",
            "Reserved CPUs on several NUMA nodes shrink every zone, so fewer whole-zone allocations fit.",
            "Reserve one core's threads on one NUMA node unless system daemons need more.",
        )


def version_skew(p: NodePlan, server: KubeVersion | None) -> Iterator[Finding]:
    severity, note = skew_note(server, p.version)
    if severity != "ok":
        yield Finding(
            "version-skew",
            p.node.name,
            "versions",
            "kubelet version",
            f"API server {server}",
            str(p.version or "unknown"),
            "blocker" if severity == "blocker" else "warning",
            note,
            "Upgrade the kubelet (drain first) before changing Topology Manager settings, so the plan is validated "
            "against the version that will run it.",
        )


def kubeadm_overwrites(p: NodePlan, target: Mapping[str, Any]) -> Iterator[Finding]:
    if p.node.kubelet.kubeadm_managed and target:
        yield Finding(
            "kubeadm-overwrites",
            p.node.name,
            "kubelet configuration",
            ", ".join(sorted(target)),
            "changes that survive kubeadm upgrade",
            "kubeadm-managed node",
            "warning",
            "`kubeadm upgrade node` rewrites /var/lib/kubelet/config.yaml from the kubelet-config ConfigMap: "
            "local edits are lost at the next upgrade.",
            "Express the change as a kubeadm patch (target kubeletconfiguration) or in the kubelet-config ConfigMap.",
        )


NODE_RULES: tuple[Rule, ...] = (
    flag_overrides_file,
    options_valid,
    options_ignored,
    cpu_none_with_strict_policy,
    static_cpu_needs_reservation,
    manager_policy_change,
    numa_limit,
    devices_without_numa,
    reserved_cpus_span_numa,
)


def mixed_hardware(snapshot: Snapshot, pool_label: str | None = None) -> Iterator[Finding]:
    pools: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for node in snapshot.nodes:
        pools[pool_of(node, pool_label)][shape_of(node).label].append(node.name)
    for pool, shapes in sorted(pools.items()):
        if len(shapes) > 1:
            detail = "; ".join(f"{len(v)}x {k}" for k, v in sorted(shapes.items()))
            yield Finding(
                "mixed-hardware-pool",
                pool,
                "fleet",
                "node pool",
                "one hardware shape per pool",
                detail,
                "warning",
                "A canary on one shape says little about the others: NUMA sizes decide what fits.",
                "Pick a canary per shape, or split the pool by hardware.",
            )


def lint(snapshot: Snapshot, target: Mapping[str, Any], *, pool_label: str | None = None) -> list[Finding]:
    """Every finding for ``target`` (KubeletConfiguration fields to set) on every node of the snapshot."""
    server = None
    if snapshot.cluster.server_version:
        server = KubeVersion.parse(snapshot.cluster.server_version, source="cluster.server_version")
    findings: list[Finding] = list(mixed_hardware(snapshot, pool_label))
    for node in snapshot.nodes:
        plan = plan_for(node, target)
        for rule in NODE_RULES:
            findings.extend(rule(plan))
        findings.extend(version_skew(plan, server))
        findings.extend(kubeadm_overwrites(plan, target))
        findings.extend(non_integer_guaranteed(plan, snapshot.pods_on(node.name)))
    return findings


def to_frame(findings: Iterable[Finding]) -> pd.DataFrame:
    frame = pd.DataFrame([asdict(f) for f in findings], columns=list(Finding.__dataclass_fields__))
    order = frame["severity"].map(SEVERITY_ORDER)
    return (
        frame.assign(_o=-order)
        .sort_values(["_o", "node", "rule"], kind="stable")
        .drop(columns="_o")
        .reset_index(drop=True)
    )


def at_or_above(findings: Iterable[Finding], level: Severity) -> list[Finding]:
    return [f for f in findings if SEVERITY_ORDER[f.severity] >= SEVERITY_ORDER[level]]
