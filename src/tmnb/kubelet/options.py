"""Topology Manager and CPU manager policy options, parsed as the kubelet of a given version parses them.

A fleet runs kubelets from 1.28 to 1.36 and an option's maturity (alpha/beta/GA) decides whether a
feature gate must be on, so the same ``topologyManagerPolicyOptions`` map can start one kubelet and
stop another. Error texts are the kubelet's own (``ConfigRejected``); malformed input from tmnb's
callers (non-string values, unknown manager names) is an ``InputError``.

Known deviation: the kubelet walks the option map in Go's random map order, so with several bad
options the error it reports varies from start to start; here the first bad option in the
mapping's order wins.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.versions import MODELLED_KUBELET, KubeVersion

Manager = Literal["topology", "cpu"]
Maturity = Literal["alpha", "beta", "ga"]

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_CPUS_BY_UNCORECACHE = "prefer-align-cpus-by-uncorecache"

#: Oldest kubelet minor whose option handling is modelled (topology policy options appeared in 1.26).
OLDEST_MODELLED = KubeVersion(1, 26, 0)

# (first minor of the 1.x line, maturity from then on); later entries supersede earlier ones.
_MATURITY: dict[Manager, dict[str, tuple[tuple[int, Maturity], ...]]] = {
    "topology": {
        PREFER_CLOSEST_NUMA_NODES: ((26, "alpha"), (28, "beta"), (32, "ga")),
        MAX_ALLOWABLE_NUMA_NODES: ((31, "beta"), (35, "ga")),
    },
    "cpu": {
        FULL_PCPUS_ONLY: ((22, "alpha"), (23, "beta"), (33, "ga")),
        DISTRIBUTE_CPUS_ACROSS_NUMA: ((23, "alpha"), (33, "beta")),
        ALIGN_BY_SOCKET: ((25, "alpha"),),
        DISTRIBUTE_CPUS_ACROSS_CORES: ((31, "alpha"),),
        STRICT_CPU_RESERVATION: ((32, "alpha"), (33, "beta"), (35, "ga")),
        PREFER_ALIGN_CPUS_BY_UNCORECACHE: ((32, "alpha"), (34, "beta"), (36, "ga")),
    },
}

#: The maturities behind a feature gate, as the kubelet's message names them.
_GATED_STAGES: tuple[tuple[Maturity, str], ...] = (("alpha", "Alpha"), ("beta", "Beta"))
#: The feature gate an option of each non-GA maturity needs.
STAGE_GATES: dict[tuple[Manager, Maturity], str] = {
    ("topology", "alpha"): "TopologyManagerPolicyAlphaOptions",
    ("topology", "beta"): "TopologyManagerPolicyBetaOptions",
    ("cpu", "alpha"): "CPUManagerPolicyAlphaOptions",
    ("cpu", "beta"): "CPUManagerPolicyBetaOptions",
}

#: The gate ``kubelet run()`` checks before handing any option map to the manager.
MAP_GATES: dict[Manager, str] = {
    "topology": "TopologyManagerPolicyOptions",
    "cpu": "CPUManagerPolicyOptions",
}


@dataclass(frozen=True)
class _GateStage:
    since_minor: int
    default: bool
    locked: bool = False


_GATES: dict[str, tuple[_GateStage, ...]] = {
    "TopologyManagerPolicyOptions": (_GateStage(26, False), _GateStage(28, True), _GateStage(32, True, True)),
    "TopologyManagerPolicyAlphaOptions": (_GateStage(26, False),),
    "TopologyManagerPolicyBetaOptions": (_GateStage(26, False), _GateStage(28, True)),
    "CPUManagerPolicyOptions": (_GateStage(22, False), _GateStage(23, True), _GateStage(33, True, True)),
    "CPUManagerPolicyAlphaOptions": (_GateStage(23, False),),
    "CPUManagerPolicyBetaOptions": (_GateStage(23, True),),
}


@dataclass(frozen=True)
class TopologyManagerOptions:
    prefer_closest_numa: bool = False
    max_allowable_numa_nodes: int = DEFAULT_MAX_ALLOWABLE_NUMA_NODES


@dataclass(frozen=True)
class CPUManagerOptions:
    full_pcpus_only: bool = False
    distribute_cpus_across_numa: bool = False
    align_by_socket: bool = False
    distribute_cpus_across_cores: bool = False
    strict_cpu_reservation: bool = False
    prefer_align_cpus_by_uncorecache: bool = False


_CPU_FIELDS = {
    FULL_PCPUS_ONLY: "full_pcpus_only",
    DISTRIBUTE_CPUS_ACROSS_NUMA: "distribute_cpus_across_numa",
    ALIGN_BY_SOCKET: "align_by_socket",
    DISTRIBUTE_CPUS_ACROSS_CORES: "distribute_cpus_across_cores",
    STRICT_CPU_RESERVATION: "strict_cpu_reservation",
    PREFER_ALIGN_CPUS_BY_UNCORECACHE: "prefer_align_cpus_by_uncorecache",
}

# Checked in this order after all options parsed (policy_options.go).
_CPU_EXCLUSIONS = (
    (FULL_PCPUS_ONLY, DISTRIBUTE_CPUS_ACROSS_CORES),
    (DISTRIBUTE_CPUS_ACROSS_NUMA, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_CORES),
    (PREFER_ALIGN_CPUS_BY_UNCORECACHE, DISTRIBUTE_CPUS_ACROSS_NUMA),
)


def _check_manager(manager: str) -> Manager:
    if manager not in _MATURITY:
        raise InputError(f"manager must be 'topology' or 'cpu', got {manager!r}")
    return manager


def _check_version(version: KubeVersion) -> None:
    if not isinstance(version, KubeVersion):
        raise InputError(f"version must be a KubeVersion, got {type(version).__name__}")
    if version.major != 1 or version < OLDEST_MODELLED:
        raise InputError(f"kubelet {version} is not modelled: option handling is modelled from {OLDEST_MODELLED}")


def _gate_stage(gate: str, version: KubeVersion) -> _GateStage | None:
    current = None
    if version.major == 1:
        for stage in _GATES.get(gate, ()):
            if version.minor >= stage.since_minor:
                current = stage
    return current


def option_maturity(manager: Manager, name: str, version: KubeVersion) -> Maturity | None:
    """Maturity of a policy option in a kubelet version; None when that kubelet does not know it."""
    current: Maturity | None = None
    if version.major == 1:
        for since_minor, maturity in _MATURITY[_check_manager(manager)].get(name, ()):
            if version.minor >= since_minor:
                current = maturity
    return current


def gate_for(manager: Manager, maturity: Maturity) -> str | None:
    """The feature gate an option of this maturity needs; None for GA options."""
    return STAGE_GATES.get((_check_manager(manager), maturity))


def feature_gate_enabled(gate: str, version: KubeVersion, feature_gates: Mapping[str, bool] | None) -> bool:
    """Effective value of a gate; setting a locked (GA) gate to the other value stops the kubelet."""
    stage = _gate_stage(gate, version)
    if stage is None:
        return False
    value = (feature_gates or {}).get(gate)
    if value is None:
        return stage.default
    if not isinstance(value, bool):
        raise InputError(f"feature gate {gate} must be true or false, got {value!r}", where="featureGates")
    if stage.locked and value != stage.default:
        lock = "true" if stage.default else "false"
        raise ConfigRejected(f"cannot set feature gate {gate} to {str(value).lower()}, feature is locked to {lock}")
    return value


def _string_options(options: Mapping[str, str], field: str) -> dict[str, str]:
    if not isinstance(options, Mapping):
        raise InputError(f"expected a mapping of option name to string, got {type(options).__name__}", where=field)
    for name, value in options.items():
        if not isinstance(name, str) or not isinstance(value, str):
            raise InputError(
                f"option {name!r}: names and values must be strings (as in KubeletConfiguration), "
                f"got {type(value).__name__}",
                where=field,
            )
    return dict(options)


def _check_available(
    manager: Manager,
    name: str,
    version: KubeVersion,
    feature_gates: Mapping[str, bool] | None,
) -> None:
    label = "Topology Manager" if manager == "topology" else "CPU Manager"
    maturity = option_maturity(manager, name, version)
    if maturity is None:
        raise ConfigRejected(f"unknown {label} Policy option: {gostr.quote(name)}")
    for stage, level in _GATED_STAGES:
        gate = STAGE_GATES[(manager, stage)]
        if maturity == stage and not feature_gate_enabled(gate, version, feature_gates):
            raise ConfigRejected(
                f"{label} Policy {level}-level Options not enabled, but option {gostr.quote(name)} provided"
            )


def _parse_bool_option(name: str, value: str) -> bool:
    try:
        return gostr.parse_bool(value)
    except gostr.GoParseError as err:
        raise ConfigRejected(f"bad value for option {gostr.quote(name)}: {err}") from None


def parse_topology_manager_options(
    options: Mapping[str, str],
    *,
    version: KubeVersion = MODELLED_KUBELET,
    feature_gates: Mapping[str, bool] | None = None,
) -> TopologyManagerOptions:
    """``topologyManagerPolicyOptions`` as the kubelet parses them (``run()`` gate check, then
    ``NewPolicyOptions``). The kubelet skips this entirely when the policy is ``none``."""
    _check_version(version)
    opts = _string_options(options, "topologyManagerPolicyOptions")
    for gate in (*STAGE_GATES.values(), *MAP_GATES.values()):
        feature_gate_enabled(gate, version, feature_gates)
    if opts and not feature_gate_enabled(MAP_GATES["topology"], version, feature_gates):
        raise ConfigRejected(
            f"topology manager policy options {gostr.format_string_map(opts)} require feature gates "
            f"{gostr.quote(MAP_GATES['topology'])} enabled"
        )
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name, value in opts.items():
        _check_available("topology", name, version, feature_gates)
        if name == PREFER_CLOSEST_NUMA_NODES:
            prefer_closest = _parse_bool_option(name, value)
        else:  # MAX_ALLOWABLE_NUMA_NODES, the only other known topology option
            try:
                number = gostr.atoi(value)
            except gostr.GoParseError as err:
                raise ConfigRejected(f"unable to convert policy option to integer {gostr.quote(name)}: {err}") from None
            if number < DEFAULT_MAX_ALLOWABLE_NUMA_NODES:
                raise ConfigRejected(
                    f"the minimum value of {gostr.quote(name)} should not be less than "
                    f"{DEFAULT_MAX_ALLOWABLE_NUMA_NODES}"
                )
            max_nodes = number
    return TopologyManagerOptions(prefer_closest_numa=prefer_closest, max_allowable_numa_nodes=max_nodes)


def parse_cpu_manager_options(
    options: Mapping[str, str],
    *,
    version: KubeVersion = MODELLED_KUBELET,
    feature_gates: Mapping[str, bool] | None = None,
) -> CPUManagerOptions:
    """``cpuManagerPolicyOptions`` as the kubelet parses them for the static policy, including the
    mutual exclusions checked after parsing."""
    _check_version(version)
    opts = _string_options(options, "cpuManagerPolicyOptions")
    for gate in (*STAGE_GATES.values(), *MAP_GATES.values()):
        feature_gate_enabled(gate, version, feature_gates)
    if opts and not feature_gate_enabled(MAP_GATES["cpu"], version, feature_gates):
        raise ConfigRejected(
            f"CPU Manager policy options {gostr.format_string_map(opts)} require feature gates "
            f'"CPUManager", {gostr.quote(MAP_GATES["cpu"])} enabled'
        )
    values: dict[str, bool] = {}
    for name, value in opts.items():
        _check_available("cpu", name, version, feature_gates)
        values[_CPU_FIELDS[name]] = _parse_bool_option(name, value)
    for first, second in _CPU_EXCLUSIONS:
        if values.get(_CPU_FIELDS[first]) and values.get(_CPU_FIELDS[second]):
            raise ConfigRejected(f"static policy options {first} and {second} can not be used at the same time")
    return CPUManagerOptions(**values)
