"""Lint a planned kubelet change against each node's current state, before anything is touched.

A finding says where (node, area, setting), what the plan expects and what the node has, how bad
it is (``blocker``: the change will fail or not take effect; ``warning``: it needs care or
manual action; ``info``: worth knowing) and what to do. Rules are small functions, one pitfall
each, so the list reads like the runbook's "known issues" section.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

import pandas as pd

from tmnb.analysis.inventory import is_integer_cpu, shape_of, skew_note
from tmnb.analysis.occupancy import pool_of
from tmnb.cpuset import CPUSet
from tmnb.kubelet.names import BEST_EFFORT, CPU_STATIC, RESTRICTED, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.profiles import KUBELET_VERSION, STAGE_GATES, Manager
from tmnb.parse.quantity import parse_quantity
from tmnb.replay import DEFAULTS, NodePlan, plans_for, show_value
from tmnb.settings.effective import KubeletSettings, snapshot_settings
from tmnb.settings.validate import validate_settings
from tmnb.snapshot import Pod, Setting, Snapshot
from tmnb.versions import KubeVersion

Severity = Literal["blocker", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "blocker": 2}
STRICT_POLICIES = {RESTRICTED, SINGLE_NUMA_NODE}
_SEVERITY: dict[str, Severity] = {"error": "blocker", "warning": "warning", "info": "info"}
#: Validator findings a plan-aware rule here reports better (with the plan in mind).
COVERED_BY_PLAN_RULES = {"flag.overrides-config", "topology.no-cpu-memory-hints"}
REMEDIES = {
    "topology.too-many-numa-nodes": "Set topologyManagerPolicyOptions max-allowable-numa-nodes to at least the node's "
    "NUMA count (beta from 1.31, GA in 1.35), knowing hint merging grows as 2^n, or keep policy none here.",
    "topology.options-ignored": "Remove the options or set a policy that uses them.",
    "cpu.options-with-none": "Remove cpuManagerPolicyOptions or switch the CPU manager to static.",
    "cpu.static-no-reservation": "Set reservedSystemCPUs (e.g. one core's threads) or kubeReserved/systemReserved cpu.",
    "memory.reserved-sum": "Make reservedMemory per NUMA node add up to kubeReserved + systemReserved + the hard "
    "eviction threshold for memory.",
    "kubelet.rejects": "Upgrade the kubelet first, enable the named feature gate, or drop the option.",
    "configz.drift": "Restart the kubelet (drained) so the running configuration matches the files before changing it.",
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
            f"set by {setting.detail or 'a command-line flag'} = {show_value(setting.value)}",
            "blocker" if planned_change else "info",
            "Command-line flags beat the config file and its drop-ins: an edit of the file will not take effect"
            + (" and this plan changes the field." if planned_change else "."),
            f"Remove {setting.detail or 'the flag'} from the kubelet unit / KUBELET_EXTRA_ARGS and set {name} "
            "in the config file.",
        )


def option_maturity_rule(p: NodePlan) -> Iterator[Finding]:
    """Alpha and beta options work only while their gate stays on: worth knowing before a rollout."""
    kubelet = p.planned_kubelet
    managers: tuple[tuple[Manager, str, bool], ...] = (
        ("topology", "topologyManagerPolicyOptions", p.planned.get("topologyManagerPolicy") == TOPOLOGY_NONE),
        ("cpu", "cpuManagerPolicyOptions", p.planned.get("cpuManagerPolicy") != CPU_STATIC),
    )
    for manager, field, off in managers:
        for name in (p.planned.get(field) or {}) if not off else ():
            maturity = kubelet.option_maturity(manager, name)
            if maturity == "alpha" or maturity == "beta":
                yield Finding(
                    "option-maturity",
                    p.node.name,
                    f"{manager} manager",
                    f"{field}.{name}",
                    "a GA option",
                    f"{maturity} in kubelet {kubelet.name}",
                    "warning" if maturity == "alpha" else "info",
                    f"{name} is {maturity} in this kubelet and depends on the "
                    f"{STAGE_GATES[(manager, maturity)]} feature gate.",
                    "Keep the gate explicit in featureGates and re-check after kubelet upgrades.",
                )


def cpu_none_with_strict_policy(p: NodePlan) -> Iterator[Finding]:
    policy = p.planned.get("topologyManagerPolicy")
    if policy in STRICT_POLICIES and p.planned.get("cpuManagerPolicy") != CPU_STATIC:
        yield Finding(
            "cpu-none-strict-topology",
            p.node.name,
            "cpu manager",
            "cpuManagerPolicy",
            CPU_STATIC,
            show_value(p.planned.get("cpuManagerPolicy")),
            "warning",
            f"With topologyManagerPolicy {policy} but cpuManagerPolicy none, CPUs give no NUMA hints: only devices "
            "(and memory with the Static memory manager) are aligned, and CPUs still float across NUMA nodes.",
            "Plan cpuManagerPolicy static (with reserved CPUs) together with the topology policy.",
        )


def manager_policy_change(p: NodePlan) -> Iterator[Finding]:
    """A checkpoint the change spoils: the kubelet refuses to start over it (or may, for a reserved set
    whose new CPUs a pod holds), so the node needs a drain and the file moved aside."""
    for name, fields in p.spoiled_checkpoints().items():
        state = f"/var/lib/kubelet/{name}"
        changed = ", ".join(fields)
        yield Finding(
            "manager-policy-change",
            p.node.name,
            "kubelet restart",
            fields[0],
            "; ".join(f"{f}={show_value(p.planned.get(f))}" for f in fields),
            "; ".join(f"{f}={show_value(p.current.get(f))}" for f in fields),
            "warning",
            f"Changing {changed} while {state} holds the old state can make the kubelet refuse to start "
            '("could not restore state from checkpoint: configured policy ... differs from state checkpoint '
            'policy", "not all reserved cpus ... are present in defaultCpuSet", "the expected machine state is '
            'different from the real one"); tmnb drains and moves the file aside whenever one of these changes.',
            f"Manual action: drain the node, stop the kubelet, remove {state}, apply the config, "
            "start the kubelet, verify, uncordon.",
        )


def devices_without_numa(p: NodePlan) -> Iterator[Finding]:
    if p.planned.get("topologyManagerPolicy") not in STRICT_POLICIES | {BEST_EFFORT}:
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


def non_integer_guaranteed(p: NodePlan, pods: Iterable[Pod]) -> Iterator[Finding]:
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


def planned_settings(p: NodePlan) -> KubeletSettings:
    """The node's settings with the target applied as a config-file edit, for the validator."""
    fields = {name: Setting(value, "default") for name, value in DEFAULTS.items()}
    fields.update(p.node.kubelet.settings)
    for name, value in p.target.items():
        if name == KUBELET_VERSION:
            continue
        previous = fields.get(name)
        history = () if previous is None else (*previous.overridden, previous.as_layer())
        fields[name] = Setting(value, "file", "planned change", history)
    return snapshot_settings(fields, config_file=p.node.kubelet.config_file, config_dir=p.node.kubelet.config_dir)


def kubelet_config(p: NodePlan) -> Iterator[Finding]:
    """The planned configuration through the version-aware validator: what this kubelet would refuse."""
    hw = p.node
    version = p.planned_kubelet.version if p.upgrades else p.version
    memory = hw.capacity.get("memory")
    found = validate_settings(
        planned_settings(p),
        version=version,
        numa_nodes=[z.id for z in hw.numa] or None,
        sockets=len({c.socket for c in hw.cpus}) or None,
        memory_capacity=int(parse_quantity(memory)) if memory else None,
        online_cpus=CPUSet(c.cpu for c in hw.cpus if c.online) or None,
    )
    for f in found:
        if f.code in COVERED_BY_PLAN_RULES:
            continue
        refused = f.severity == "error" and f.kubelet_text
        yield Finding(
            f.code,
            hw.name,
            f.code.split(".")[0],
            f.field,
            f"a configuration kubelet {p.planned_kubelet.name} accepts" if f.severity == "error" else "",
            show_value(p.planned.get(f.field)),
            _SEVERITY[f.severity],
            ("The kubelet would refuse to start: " if refused else "") + f.message,
            REMEDIES.get(f.code, f"Correct {f.field} in the plan before rolling it out."),
        )


NODE_RULES: tuple[Rule, ...] = (
    kubelet_config,
    flag_overrides_file,
    option_maturity_rule,
    cpu_none_with_strict_policy,
    manager_policy_change,
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


def lint(
    snapshot: Snapshot,
    target: Mapping[str, Any],
    *,
    pool_label: str | None = None,
    plans: Mapping[str, NodePlan] | None = None,
) -> list[Finding]:
    """Every finding for ``target`` (KubeletConfiguration fields to set) on every node of the snapshot;
    ``plans`` (by node name) are the ones the caller already built for the same target."""
    plans = plans if plans is not None else plans_for(snapshot.nodes, target)
    server = None
    if snapshot.cluster.server_version:
        server = KubeVersion.parse(snapshot.cluster.server_version, source="cluster.server_version")
    findings: list[Finding] = list(mixed_hardware(snapshot, pool_label))
    for node in snapshot.nodes:
        plan = plans[node.name]
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
