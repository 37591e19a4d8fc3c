"""Lint a planned kubelet change against each node's current state, before anything is touched.

A finding says where (node, area, setting), what the plan expects and what the node has, how bad
it is (``blocker``: the change will fail or not take effect; ``warning``: it needs care or
manual action; ``info``: worth knowing) and what to do. Each rule is a ``Rule`` (``analysis.rules``):
one pitfall, its metadata and a small check, so ``RULES`` reads like the runbook's "known issues"
section; the upgrade rules (a target that changes the kubelet minor) live in ``analysis.upgrade``.
``REGISTRY`` holds every rule and every validator finding code by id: readiness and the reports read
the manual-action flag and the remedy from there.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import asdict
from typing import Any

import pandas as pd

from tmnb.analysis.inventory import is_integer_cpu, shape_of, skew_note
from tmnb.analysis.occupancy import pool_of
from tmnb.analysis.rules import (
    DEFAULT_REMEDY,
    SEVERITY_ORDER,
    Finding,
    FleetContext,
    Hit,
    LintContext,
    Rule,
    Severity,
    ValidatorCode,
    always,
)
from tmnb.analysis.upgrade import UPGRADE_RULES, feature_gates_refused_by_upgrade
from tmnb.cpuset import CPUSet
from tmnb.kubelet.names import BEST_EFFORT, CPU_STATIC, RESTRICTED, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.profiles import CHECKPOINT_POLICIES, KUBELET_VERSION, STAGE_GATES, Manager
from tmnb.parse.quantity import parse_quantity
from tmnb.replay import DEFAULTS, DrainSteps, NodePlan, plans_for, show_value
from tmnb.settings.effective import KubeletSettings, snapshot_settings
from tmnb.settings.findings import Finding as ValidatorFinding
from tmnb.settings.findings import Severity as ValidatorSeverity
from tmnb.settings.validate import validate_settings
from tmnb.snapshot import Setting, Snapshot
from tmnb.versions import KubeVersion

__all__ = [
    "REGISTRY",
    "RULES",
    "SEVERITY_ORDER",
    "Finding",
    "Severity",
    "at_or_above",
    "lint",
    "manual_step",
    "needs_manual_action",
    "to_frame",
]

STRICT_POLICIES = {RESTRICTED, SINGLE_NUMA_NODE}
_SEVERITY: dict[ValidatorSeverity, Severity] = {"error": "blocker", "warning": "warning", "info": "info"}


def _flag_overrides_file(c: LintContext) -> Iterator[Hit]:
    p = c.plan
    for name, setting in p.node.kubelet.settings.items():
        if setting.source != "flag":
            continue
        planned_change = name in p.planned and p.changes(name)
        yield Hit(
            name,
            "set in the config file or a drop-in",
            f"set by {setting.detail or 'a command-line flag'} = {show_value(setting.value)}",
            "Command-line flags beat the config file and its drop-ins: an edit of the file will not take effect"
            + (" and this plan changes the field." if planned_change else "."),
            severity=None if planned_change else "info",
            fill={"flag": setting.detail or "the flag"},
        )


FLAG_OVERRIDES_FILE = Rule[LintContext](
    "flag-overrides-file",
    "kubelet configuration",
    "blocker",
    "Remove {flag} from the kubelet unit / KUBELET_EXTRA_ARGS and set {setting} in the config file.",
    _flag_overrides_file,
    manual=True,
    summary="a command-line flag sets a field the plan edits in the file (info when the plan leaves it alone)",
)


def _option_maturity(c: LintContext) -> Iterator[Hit]:
    """Alpha and beta options work only while their gate stays on: worth knowing before a rollout."""
    p, kubelet = c.plan, c.profile
    managers: tuple[tuple[Manager, str, bool], ...] = (
        ("topology", "topologyManagerPolicyOptions", p.planned.get("topologyManagerPolicy") == TOPOLOGY_NONE),
        ("cpu", "cpuManagerPolicyOptions", p.planned.get("cpuManagerPolicy") != CPU_STATIC),
    )
    for manager, field, off in managers:
        for name in (p.planned.get(field) or {}) if not off else ():
            maturity = kubelet.option_maturity(manager, name)
            if maturity == "alpha" or maturity == "beta":
                yield Hit(
                    f"{field}.{name}",
                    "a GA option",
                    f"{maturity} in kubelet {kubelet.name}",
                    f"{name} is {maturity} in this kubelet and depends on the "
                    f"{STAGE_GATES[(manager, maturity)]} feature gate.",
                    severity="warning" if maturity == "alpha" else "info",
                    area=f"{manager} manager",
                )


OPTION_MATURITY = Rule[LintContext](
    "option-maturity",
    "policy options",
    "warning",
    "Keep the gate explicit in featureGates and re-check after kubelet upgrades.",
    _option_maturity,
    summary="an alpha (warning) or beta (info) policy option, which works only while its gate is on",
)


def _cpu_none_with_strict_policy(c: LintContext) -> Iterator[Hit]:
    p = c.plan
    policy = p.planned.get("topologyManagerPolicy")
    if policy in STRICT_POLICIES and p.planned.get("cpuManagerPolicy") != CPU_STATIC:
        yield Hit(
            "cpuManagerPolicy",
            CPU_STATIC,
            show_value(p.planned.get("cpuManagerPolicy")),
            f"With topologyManagerPolicy {policy} but cpuManagerPolicy none, CPUs give no NUMA hints: only devices "
            "(and memory with the Static memory manager) are aligned, and CPUs still float across NUMA nodes.",
        )


CPU_NONE_STRICT_TOPOLOGY = Rule[LintContext](
    "cpu-none-strict-topology",
    "cpu manager",
    "warning",
    "Plan cpuManagerPolicy static (with reserved CPUs) together with the topology policy.",
    _cpu_none_with_strict_policy,
    summary="a strict topology policy with the CPU manager's none policy: CPUs are never aligned",
)


def _manager_policy_change(c: LintContext) -> Iterator[Hit]:
    """A checkpoint the rollout moves aside (``replay.drain``): one the kubelet would refuse at start, in
    its words, or one whose manager's settings change, moved although the kubelet would restore it."""
    p = c.plan
    spoiled = p.spoiled_checkpoints()
    for moved in c.steps.moved:
        name = moved.path.rsplit("/", 1)[-1]
        fields = spoiled.get(name) or (CHECKPOINT_POLICIES[name][0],)
        yield Hit(
            fields[0],
            "; ".join(f"{f}={show_value(p.planned.get(f))}" for f in fields),
            "; ".join(f"{f}={show_value(p.current.get(f))}" for f in fields),
            f"{moved.why}. tmnb's rollout drains the node and moves the file aside.",
            fill={"state": moved.path},
        )


MANAGER_POLICY_CHANGE = Rule[LintContext](
    "manager-policy-change",
    "kubelet restart",
    "warning",
    "Manual action: drain the node, stop the kubelet, move {state} aside, apply the config, start the kubelet, "
    "verify, uncordon.",
    _manager_policy_change,
    manual=True,
    summary="a resource manager's checkpoint the kubelet would refuse at start, or whose settings change: drain "
    "and move the file aside",
)


def _restart_drain(c: LintContext) -> Iterator[Hit]:
    """A drain with no checkpoint moved: running pods the restart would reject or re-pin, or a restart
    tmnb cannot predict (the kubelet's refusal of the target is the validator's finding)."""
    steps: DrainSteps = c.steps
    if steps.drain and not steps.moved and not steps.refused:
        yield Hit(
            "running pods",
            "pods the kubelet re-admits as they run",
            "drain",
            f"{steps.why}. tmnb's rollout drains the node before the restart.",
            severity="info" if steps.careful else None,  # not predicted: the verdict says unknown
        )


RESTART_DRAIN = Rule[LintContext](
    "restart-drain",
    "kubelet restart",
    "warning",
    "Manual action: drain the node, apply the config, restart the kubelet, verify, uncordon.",
    _restart_drain,
    manual=True,
    summary="the restart would reject or re-pin a running pod (warning), or cannot be predicted (info): drain first",
)


def _devices_without_numa(c: LintContext) -> Iterator[Hit]:
    if c.plan.planned.get("topologyManagerPolicy") not in STRICT_POLICIES | {BEST_EFFORT}:
        return
    for resource in sorted({d.resource for d in c.node.devices if not d.numa}):
        yield Hit(
            resource,
            "devices with NUMA affinity",
            "no NUMA topology reported",
            f"The {resource} device plugin reports no NUMA topology, so the Topology Manager treats it as "
            "'no preference': its devices are never aligned with the CPUs and memory.",
        )


DEVICE_WITHOUT_NUMA = Rule[LintContext](
    "device-without-numa",
    "device manager",
    "warning",
    "Upgrade or configure the device plugin to report TopologyInfo.",
    _devices_without_numa,
    summary="a device plugin reports no NUMA topology: its devices are never aligned",
)


def _non_integer_guaranteed(c: LintContext) -> Iterator[Hit]:
    for pod in c.pods:
        fractional = [k.name for k in pod.containers if not is_integer_cpu(k.requests.get("cpu"))]
        if pod.qos_class == "Guaranteed" and fractional:
            yield Hit(
                f"{pod.namespace}/{pod.name}",
                "whole-number CPU requests",
                ", ".join(fractional),
                "Guaranteed pods with fractional CPU requests never get exclusive CPUs; they stay in the shared pool.",
            )


GUARANTEED_FRACTIONAL_CPU = Rule[LintContext](
    "guaranteed-fractional-cpu",
    "workloads",
    "info",
    "Round the CPU request to a whole number if this workload needs pinning.",
    _non_integer_guaranteed,
    summary="a Guaranteed pod with a fractional CPU request never gets exclusive CPUs",
)


def _reserved_cpus_span_numa(c: LintContext) -> Iterator[Hit]:
    text = c.plan.planned.get("reservedSystemCPUs")
    if not text:
        return
    reserved = CPUSet.parse(str(text))
    zones = sorted({cpu.numa for cpu in c.node.cpus if cpu.cpu in reserved})
    if len(zones) > 1:
        yield Hit(
            "reservedSystemCPUs",
            "CPUs of one NUMA node",
            f"{text} (NUMA {', '.join(map(str, zones))})",
            "Reserved CPUs on several NUMA nodes shrink every zone, so fewer whole-zone allocations fit.",
        )


RESERVED_CPUS_SPAN_NUMA = Rule[LintContext](
    "reserved-cpus-span-numa",
    "cpu manager",
    "info",
    "Reserve one core's threads on one NUMA node unless system daemons need more.",
    _reserved_cpus_span_numa,
    summary="reserved CPUs on several NUMA nodes shrink every zone",
)


def _version_skew(c: LintContext) -> Iterator[Hit]:
    severity, note = skew_note(c.server, c.plan.version)
    if severity != "ok":
        yield Hit(
            "kubelet version",
            f"API server {c.server}",
            str(c.plan.version or "unknown"),
            note,
            severity="blocker" if severity == "blocker" else "warning",
        )


VERSION_SKEW = Rule[LintContext](
    "version-skew",
    "versions",
    "blocker",
    "Upgrade the kubelet (drain first) before changing Topology Manager settings, so the plan is validated "
    "against the version that will run it.",
    _version_skew,
    manual=True,
    summary="the kubelet lags the API server (warning) or is outside the supported skew (blocker)",
)


def _kubeadm_overwrites(c: LintContext) -> Iterator[Hit]:
    fields = sorted(k for k in c.plan.target if k != KUBELET_VERSION)  # a new minor is no edit of the file
    if c.node.kubelet.kubeadm_managed and fields:
        yield Hit(
            ", ".join(fields),
            "changes that survive kubeadm upgrade",
            "kubeadm-managed node",
            "`kubeadm upgrade node` rewrites /var/lib/kubelet/config.yaml from the kubelet-config ConfigMap: "
            "local edits are lost at the next upgrade.",
        )


KUBEADM_OVERWRITES = Rule[LintContext](
    "kubeadm-overwrites",
    "kubelet configuration",
    "warning",
    "Express the change as a kubeadm patch (target kubeletconfiguration) or in the kubelet-config ConfigMap.",
    _kubeadm_overwrites,
    manual=True,
    summary="kubeadm rewrites the kubelet's config file at its next upgrade",
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


def _validated(c: LintContext) -> tuple[ValidatorFinding, ...]:
    """``validate_settings`` of the planned configuration on the node's hardware, remembered in the lint
    run's ``c.validated`` by its inputs: the node's settings in their order (``repr`` of frozen records,
    values included), its files' places, the target, the version and the hardware facts it takes."""
    p = c.plan
    hw = p.node
    version = p.planned_kubelet.version if p.upgrades else p.version
    memory = hw.capacity.get("memory")
    numa = tuple(z.id for z in hw.numa)
    sockets = len({cpu.socket for cpu in hw.cpus})
    online = tuple(cpu.cpu for cpu in hw.cpus if cpu.online)
    settings = hw.kubelet
    key = (
        repr(list(settings.settings.items())),
        settings.config_file,
        settings.config_dir,
        repr(list(p.target.items())),
        version,
        numa,
        sockets,
        memory,
        online,
    )
    found = c.validated.get(key)
    if found is None:
        found = tuple(
            validate_settings(
                planned_settings(p),
                version=version,
                numa_nodes=list(numa) or None,
                sockets=sockets or None,
                memory_capacity=int(parse_quantity(memory)) if memory else None,
                online_cpus=CPUSet(online) or None,
            )
        )
        c.validated[key] = found
    return found


def _kubelet_config(c: LintContext) -> Iterator[Hit]:
    """The planned configuration through the version-aware validator: what this kubelet would refuse."""
    p = c.plan
    for f in _validated(c):
        code = validator_code(f.code)
        if code.covered is not None and code.covered(c):
            continue
        refused = f.severity == "error" and f.kubelet_text
        yield Hit(
            f.field,
            f"a configuration kubelet {p.planned_kubelet.name} accepts" if f.severity == "error" else "",
            show_value(p.planned.get(f.field)),
            ("The kubelet would refuse to start: " if refused else "") + f.message,
            severity=_SEVERITY[f.severity],
            area=f.code.split(".")[0],
            code=f.code,
            remedy=code.fill(f.field),
        )


KUBELET_CONFIG = Rule[LintContext](
    "kubelet-config",
    "kubelet configuration",
    "blocker",
    DEFAULT_REMEDY,
    _kubelet_config,
    summary="the planned configuration through the settings validator; each finding carries the validator's "
    "code and severity, and the metadata of that code (VALIDATOR_CODES)",
)


def _mixed_hardware(c: FleetContext) -> Iterator[Hit]:
    pools: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for node in c.snapshot.nodes:
        pools[pool_of(node, c.pool_label)][shape_of(node).label].append(node.name)
    for pool, shapes in sorted(pools.items()):
        if len(shapes) > 1:
            detail = "; ".join(f"{len(v)}x {k}" for k, v in sorted(shapes.items()))
            yield Hit(
                "node pool",
                "one hardware shape per pool",
                detail,
                "A canary on one shape says little about the others: NUMA sizes decide what fits.",
                where=pool,
            )


MIXED_HARDWARE_POOL = Rule[FleetContext](
    "mixed-hardware-pool",
    "fleet",
    "warning",
    "Pick a canary per shape, or split the pool by hardware.",
    _mixed_hardware,
    summary="one pool holds several hardware shapes",
)

#: Every node rule, in the order its findings are listed.
RULES: tuple[Rule[LintContext], ...] = (
    KUBELET_CONFIG,
    FLAG_OVERRIDES_FILE,
    OPTION_MATURITY,
    CPU_NONE_STRICT_TOPOLOGY,
    MANAGER_POLICY_CHANGE,
    RESTART_DRAIN,
    DEVICE_WITHOUT_NUMA,
    RESERVED_CPUS_SPAN_NUMA,
    VERSION_SKEW,
    KUBEADM_OVERWRITES,
    GUARANTEED_FRACTIONAL_CPU,
    *UPGRADE_RULES,
)
FLEET_RULES: tuple[Rule[FleetContext], ...] = (MIXED_HARDWARE_POOL,)

#: Lint's metadata for every finding code of the settings validator (``tmnb.settings``), one place:
#: its remedy, whether it needs a manual step, and whether a plan-aware rule here reports it instead.
VALIDATOR_CODES: dict[str, ValidatorCode] = {
    c.id: c
    for c in (
        ValidatorCode("config.duplicate-field", "Set {setting} once; the last one wins."),
        ValidatorCode(
            "config.feature-gates",
            "Drop or correct the named gate in featureGates.",
            reported_by="upgrade.gate-removed, upgrade.gate-locked, upgrade.gate-dependency",
            covered=feature_gates_refused_by_upgrade,
            summary="featureGates the kubelet refuses while decoding its file (a panic)",
        ),
        ValidatorCode(
            "config.field-too-new",
            "Remove {setting} or upgrade the kubelet first.",
            reported_by="upgrade.field-unknown",
            covered=lambda c: c.plan.upgrades,
        ),
        ValidatorCode("config.enforce-node-allocatable", "Correct enforceNodeAllocatable (and the cgroups it names)."),
        ValidatorCode("config.eviction-hard", "Correct the hard-eviction threshold {setting} names."),
        ValidatorCode("config.image-gc-age", "Set imageMinimumGCAge to zero or more."),
        ValidatorCode("config.invalid"),
        ValidatorCode("config.kube-reserved", "Correct kubeReserved: quantities the kubelet can reserve."),
        ValidatorCode("config.max-pods", "Set maxPods to zero or more."),
        ValidatorCode(
            "config.node-allocatable",
            "Reserve less than the node's capacity (kubeReserved + systemReserved + eviction).",
        ),
        ValidatorCode("config.pods-per-core", "Set podsPerCore to zero or more."),
        ValidatorCode("config.system-reserved", "Correct systemReserved: quantities the kubelet can reserve."),
        ValidatorCode("config.unknown-field", "Correct the field's name (or remove it)."),
        ValidatorCode(
            "configz.drift",
            "Restart the kubelet (drained) so the running configuration matches the files before changing it.",
        ),
        ValidatorCode("cpu.align-by-socket-hardware"),
        ValidatorCode("cpu.align-by-socket-single-numa"),
        ValidatorCode("cpu.options-with-none", "Remove cpuManagerPolicyOptions or switch the CPU manager to static."),
        ValidatorCode("cpu.policy", "Set cpuManagerPolicy to none or static (case-sensitive)."),
        ValidatorCode("cpu.reserve", "Reserve CPUs the machine has, in the number the static policy can take."),
        ValidatorCode("cpu.reserved-cpus-cgroup"),
        ValidatorCode("cpu.reserved-cpus-offline"),
        ValidatorCode("cpu.reserved-cpus-parse"),
        ValidatorCode("cpu.reserved-cpus-supersedes"),
        ValidatorCode("cpu.static-fractional-reservation"),
        ValidatorCode(
            "cpu.static-no-reservation",
            "Set reservedSystemCPUs (e.g. one core's threads) or kubeReserved/systemReserved cpu.",
        ),
        ValidatorCode("dropin.dir-unread"),
        ValidatorCode("dropin.skipped-file", "Rename the drop-in so it ends in .conf, or remove it."),
        ValidatorCode("flag.deprecated", "Move {setting} from the command line into the config file."),
        ValidatorCode(
            "flag.overrides-config",
            "Remove the flag and set {setting} in the config file.",
            reported_by="flag-overrides-file",
            covered=always,
        ),
        ValidatorCode("flag.unknown", "Remove the flag from the kubelet unit / KUBELET_EXTRA_ARGS.", manual=True),
        ValidatorCode(
            "kubelet.rejects", "Upgrade the kubelet first, enable the named feature gate, or drop the option."
        ),
        ValidatorCode(
            "kubelet.unmodelled", "Check this node's findings against its own kubelet minor's documentation."
        ),
        ValidatorCode("memory.available"),
        ValidatorCode("memory.policy", "Set memoryManagerPolicy to None or Static (case-sensitive)."),
        ValidatorCode("memory.reservation-policy", "Set memoryReservationPolicy to None, or enable MemoryQoS."),
        ValidatorCode("memory.reserved-missing", "Set reservedMemory for the Static memory manager."),
        ValidatorCode("memory.reserved-duplicate"),
        ValidatorCode("memory.reserved-ignored"),
        ValidatorCode(
            "memory.reserved-sum",
            "Make reservedMemory per NUMA node add up to kubeReserved + systemReserved + the hard eviction "
            "threshold for memory.",
        ),
        ValidatorCode("memory.reserved-sum-unchecked"),
        ValidatorCode("memory.reserved-type"),
        ValidatorCode("memory.reserved-unknown-numa"),
        ValidatorCode("memory.reserved-zero"),
        ValidatorCode("topology.max-numa-above-default"),
        ValidatorCode(
            "topology.numa-distances", "Fix the node's NUMA distances in sysfs, or drop prefer-closest-numa-nodes."
        ),
        ValidatorCode(
            "topology.no-cpu-memory-hints",
            reported_by="cpu-none-strict-topology",
            covered=always,
        ),
        ValidatorCode("topology.options-ignored", "Remove the options or set a policy that uses them."),
        ValidatorCode("topology.policy"),
        ValidatorCode("topology.prefer-closest-ineffective"),
        ValidatorCode("topology.scope"),
        ValidatorCode("topology.sparse-numa-ids", "Drop prefer-closest-numa-nodes on this machine (sparse NUMA ids)."),
        ValidatorCode(
            "topology.too-many-numa-nodes",
            "Set topologyManagerPolicyOptions max-allowable-numa-nodes to at least the node's NUMA count (beta from "
            "1.31, GA in 1.35), knowing hint merging grows as 2^n, or keep policy none here.",
        ),
    )
}

#: Every rule and validator code by id: what readiness and the reports read a finding's metadata from.
REGISTRY: dict[str, Rule[LintContext] | Rule[FleetContext] | ValidatorCode] = {
    **{r.id: r for r in RULES},
    **{r.id: r for r in FLEET_RULES},
    **VALIDATOR_CODES,
}


def validator_code(code: str) -> ValidatorCode:
    """The metadata of a validator code (a code the registry does not list: the default remedy)."""
    return VALIDATOR_CODES.get(code) or ValidatorCode(code)


def manual_step(rule: str, severity: str) -> bool:
    """Whether a finding of ``rule`` at ``severity`` needs a step by hand during the rollout: a warning or
    blocker of a rule whose registry entry says so."""
    entry = REGISTRY.get(rule)
    return entry is not None and entry.manual and severity != "info"


def needs_manual_action(finding: Finding) -> bool:
    return manual_step(finding.rule, finding.severity)


def lint(
    snapshot: Snapshot,
    target: Mapping[str, Any],
    *,
    pool_label: str | None = None,
    plans: Mapping[str, NodePlan] | None = None,
    steps: Mapping[str, DrainSteps] | None = None,
) -> list[Finding]:
    """Every finding for ``target`` (KubeletConfiguration fields to set) on every node of the snapshot;
    ``plans`` and ``steps`` (by node name) are the ones the caller already decided for the same target."""
    plans = plans if plans is not None else plans_for(snapshot.nodes, target)
    server = None
    if snapshot.cluster.server_version:
        server = KubeVersion.parse(snapshot.cluster.server_version, source="cluster.server_version")
    fleet = FleetContext(snapshot, pool_label)
    findings: list[Finding] = [f for rule in FLEET_RULES for f in rule.run(fleet)]
    validated: dict[tuple[object, ...], tuple[ValidatorFinding, ...]] = {}  # one run's, so a patched validator is seen
    for node in snapshot.nodes:
        decided = steps.get(node.name) if steps is not None else None
        context = LintContext(plans[node.name], tuple(snapshot.pods_on(node.name)), server, decided, validated)
        for node_rule in RULES:
            findings.extend(node_rule.run(context))
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
