"""The settings validator's findings as lint findings: the planned configuration validated as the
kubelet that will run it (``kubelet-config``), and lint's metadata for each of the validator's codes
(``VALIDATOR_CODES``: its remedy, whether it needs a manual step, whether a plan-aware rule reports it
instead)."""

from __future__ import annotations

from collections.abc import Iterator

from tmnb.analysis.rules import DEFAULT_REMEDY, Hit, LintContext, Rule, Severity, ValidatorCode, always
from tmnb.analysis.upgrade.gates import feature_gates_refused_by_upgrade
from tmnb.cpuset import CPUSet
from tmnb.kubelet.profiles import KUBELET_VERSION
from tmnb.parse.quantity import parse_quantity
from tmnb.replay import DEFAULTS, NodePlan, show_value
from tmnb.settings.effective import KubeletSettings, snapshot_settings
from tmnb.settings.findings import Finding as ValidatorFinding
from tmnb.settings.findings import Severity as ValidatorSeverity
from tmnb.settings.validate import validate_settings
from tmnb.snapshot import Setting

_SEVERITY: dict[ValidatorSeverity, Severity] = {"error": "blocker", "warning": "warning", "info": "info"}


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
            remedy=code.fill(f.field, p.target, f.severity),
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
        ValidatorCode(
            "cpu.reserved-cpus-supersedes",
            "Nothing to correct: the kubelet reserves exactly the CPUs reservedSystemCPUs lists and ignores the cpu "
            "amounts of kubeReserved and systemReserved; drop those amounts to say so.",
        ),
        ValidatorCode(
            "cpu.static-fractional-reservation",
            "Nothing to correct: the static policy reserves whole CPUs, the cpu of kubeReserved and systemReserved "
            "rounded up; reserve whole CPUs to say so.",
        ),
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
        ValidatorCode(
            "memory.reserved-ignored",
            "Nothing to correct: reservedMemory waits for memoryManagerPolicy Static (add it to the target to use "
            "the reservation), or drop reservedMemory.",
        ),
        ValidatorCode(
            "memory.reserved-sum",
            "Make reservedMemory per NUMA node add up to kubeReserved + systemReserved + the hard eviction "
            "threshold for memory.",
        ),
        ValidatorCode("memory.reserved-sum-unchecked"),
        ValidatorCode("memory.reserved-type"),
        ValidatorCode("memory.reserved-unknown-numa"),
        ValidatorCode("memory.reserved-zero"),
        ValidatorCode(
            "topology.max-numa-above-default",
            "Keep max-allowable-numa-nodes in the plan's topologyManagerPolicyOptions only for nodes with more NUMA "
            "nodes than the kubelet's default limit (a node selector): with it, each admission enumerates 2^n NUMA "
            "masks.",
            kept="Keep it: the plan leaves this node's topologyManagerPolicyOptions as they are, and a node with more "
            "NUMA nodes than the kubelet's default limit needs max-allowable-numa-nodes to run a Topology Manager "
            "policy at all; the kubelet's warning is about the cost, 2^n NUMA masks per admission.",
        ),
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
        ValidatorCode(
            "topology.prefer-closest-ineffective",
            "Drop prefer-closest-numa-nodes from the plan's topologyManagerPolicyOptions, or leave it: "
            "single-numa-node ignores it.",
            kept="Nothing to change: single-numa-node ignores the node's prefer-closest-numa-nodes; to drop it in "
            "the same rollout, add topologyManagerPolicyOptions to the target without it (with the node's other "
            "options).",
        ),
        ValidatorCode("topology.scope"),
        ValidatorCode("topology.sparse-numa-ids", "Drop prefer-closest-numa-nodes on this machine (sparse NUMA ids)."),
        ValidatorCode(
            "topology.too-many-numa-nodes",
            "Set max-allowable-numa-nodes in the plan's topologyManagerPolicyOptions to at least the node's NUMA "
            "count (hint merging grows as 2^n), or leave this node out of the change.",
            kept="Add topologyManagerPolicyOptions to the target with max-allowable-numa-nodes at least the node's "
            "NUMA count (and the node's other options): without it the kubelet refuses a Topology Manager policy on "
            "this many NUMA nodes, and hint merging grows as 2^n; or leave this node out of the change.",
            field="topologyManagerPolicyOptions",
        ),
    )
}


def validator_code(code: str) -> ValidatorCode:
    """The metadata of a validator code (a code the registry does not list: the default remedy)."""
    return VALIDATOR_CODES.get(code) or ValidatorCode(code)
