"""Lint rules on the planned settings and the node they land on: whether an edit of the file takes
effect (a flag overrides it, kubeadm rewrites it), whether the options depend on a gate, and whether
the managers can align what the topology policy asks (CPUs, reserved CPUs, devices)."""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.rules import Hit, LintContext, Rule
from tmnb.cpuset import CPUSet
from tmnb.kubelet.names import BEST_EFFORT, CPU_STATIC, RESTRICTED, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.profiles import KUBELET_VERSION, STAGE_GATES, Manager
from tmnb.replay import show_value

#: The topology policies that refuse a pod they cannot align.
STRICT_POLICIES = {RESTRICTED, SINGLE_NUMA_NODE}


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
    "Add cpuManagerPolicy: static (with reservedSystemCPUs) to the target, so the CPUs are aligned too.",
    _cpu_none_with_strict_policy,
    summary="a strict topology policy with the CPU manager's none policy: CPUs are never aligned",
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


def _kubeadm_overwrites(c: LintContext) -> Iterator[Hit]:
    """The fields the plan edits in the file (a new minor is no edit of it; a field at its target is none)."""
    fields = sorted(k for k in c.plan.target if k != KUBELET_VERSION and c.plan.changes(k))
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
    fleet=True,
    summary="kubeadm rewrites the kubelet's config file at its next upgrade",
)
