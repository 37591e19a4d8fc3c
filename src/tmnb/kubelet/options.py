"""Topology Manager and CPU manager policy options, parsed as the kubelet of a given minor parses them.

An option's maturity (alpha/beta/GA) in the node's minor (``profiles``) decides whether a feature gate
must be on, so the same ``topologyManagerPolicyOptions`` map can start one kubelet and stop another.
Error texts are the kubelet's own (``ConfigRejected``); malformed input from tmnb's callers
(non-string values) is an ``InputError``. The gates passed in are the configuration's
``featureGates``, already merged (``gates.merge_feature_gates``) at start-up.

Known deviation: the kubelet walks the option map in Go's random map order, so with several bad
options the error it reports varies from start to start; here the first bad option in the
mapping's order wins.

Ports ``NewPolicyOptions`` and ``CheckPolicyOptionAvailable`` of
pkg/kubelet/cm/topologymanager/policy_options.go, ``NewStaticPolicyOptions`` of
pkg/kubelet/cm/cpumanager/policy_options.go and the option-map gate check of cmd/kubelet/app/server.go
(1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.profiles import DEFAULT_MINOR, STAGE_GATES, TOPOLOGY_OPTIONS_GATE, KubeletProfile, Manager, profile

PREFER_CLOSEST_NUMA_NODES = "prefer-closest-numa-nodes"
MAX_ALLOWABLE_NUMA_NODES = "max-allowable-numa-nodes"
DEFAULT_MAX_ALLOWABLE_NUMA_NODES = 8

FULL_PCPUS_ONLY = "full-pcpus-only"
DISTRIBUTE_CPUS_ACROSS_NUMA = "distribute-cpus-across-numa"
ALIGN_BY_SOCKET = "align-by-socket"
DISTRIBUTE_CPUS_ACROSS_CORES = "distribute-cpus-across-cores"
STRICT_CPU_RESERVATION = "strict-cpu-reservation"
PREFER_ALIGN_CPUS_BY_UNCORECACHE = "prefer-align-cpus-by-uncorecache"


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


#: How each manager words a missing alpha/beta gate (topologymanager and cpumanager policy_options.go).
_LEVEL_TEXT: dict[Manager, str] = {
    "topology": "topology manager policy {level}-level options not enabled, but option {name} provided",
    "cpu": "CPU Manager Policy {Level}-level Options not enabled, but option {name} provided",
}


def _check_available(
    manager: Manager, name: str, kubelet: KubeletProfile, feature_gates: Mapping[str, bool] | None
) -> None:
    label = "Topology Manager" if manager == "topology" else "CPU Manager"
    maturity = kubelet.option_maturity(manager, name)
    if maturity is None:
        raise ConfigRejected(f"unknown {label} Policy option: {gostr.quote(name)}")
    if maturity == "ga":
        return
    if not kubelet.gate_on(STAGE_GATES[(manager, maturity)], feature_gates):
        raise ConfigRejected(
            _LEVEL_TEXT[manager].format(level=maturity, Level=maturity.capitalize(), name=gostr.quote(name))
        )


def _parse_bool_option(name: str, value: str) -> bool:
    try:
        return gostr.parse_bool(value)
    except gostr.GoParseError as err:
        raise ConfigRejected(f"bad value for option {gostr.quote(name)}: {err}") from None


#: What ``NewPolicyOptions`` logs (klog.InfoS, the kubelet starts) for a limit above the default.
MAX_ALLOWABLE_NUMA_NODES_WARNING = (
    "WARNING: the value of max-allowable-numa-nodes is more than the default recommended value"
)


def topology_options_gate_error(
    options: Mapping[str, str], kubelet: KubeletProfile, feature_gates: Mapping[str, bool] | None
) -> str | None:
    """``run()``'s check of the option-map gate, made whatever the policy (before any manager
    exists); reachable while the gate is GA but not locked (1.33-1.35)."""
    opts = _string_options(options, "topologyManagerPolicyOptions")
    if opts and not kubelet.gate_on(TOPOLOGY_OPTIONS_GATE, feature_gates):
        return (
            f"topology manager policy options {gostr.format_string_map(opts)} require feature gates "
            f"{gostr.quote(TOPOLOGY_OPTIONS_GATE)} enabled"
        )
    return None


def parse_topology_manager_options(
    options: Mapping[str, str],
    *,
    kubelet: KubeletProfile | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> TopologyManagerOptions:
    """``topologyManagerPolicyOptions`` as the kubelet parses them (``run()`` gate check, then
    ``NewPolicyOptions``). The kubelet skips the parse when the policy is ``none``."""
    kubelet = kubelet or profile(DEFAULT_MINOR)
    gate_error = topology_options_gate_error(options, kubelet, feature_gates)
    if gate_error is not None:
        raise ConfigRejected(gate_error)
    return new_topology_policy_options(options, kubelet=kubelet, feature_gates=feature_gates)


def new_topology_policy_options(
    options: Mapping[str, str],
    *,
    kubelet: KubeletProfile,
    feature_gates: Mapping[str, bool] | None = None,
) -> TopologyManagerOptions:
    """``NewPolicyOptions`` alone: each option's maturity and value (``run()``'s gate check is
    ``topology_options_gate_error``)."""
    opts = _string_options(options, "topologyManagerPolicyOptions")
    prefer_closest = False
    max_nodes = DEFAULT_MAX_ALLOWABLE_NUMA_NODES
    for name, value in opts.items():
        _check_available("topology", name, kubelet, feature_gates)
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
    kubelet: KubeletProfile | None = None,
    feature_gates: Mapping[str, bool] | None = None,
) -> CPUManagerOptions:
    """``cpuManagerPolicyOptions`` as the kubelet parses them for the static policy, including the
    mutual exclusions checked after parsing. (Its option-map gate is GA and locked in every
    supported minor, so ``run()`` checks none.)"""
    kubelet = kubelet or profile(DEFAULT_MINOR)
    opts = _string_options(options, "cpuManagerPolicyOptions")
    values: dict[str, bool] = {}
    for name, value in opts.items():
        _check_available("cpu", name, kubelet, feature_gates)
        values[_CPU_FIELDS[name]] = _parse_bool_option(name, value)
    for first, second in _CPU_EXCLUSIONS:
        if values.get(_CPU_FIELDS[first]) and values.get(_CPU_FIELDS[second]):
            raise ConfigRejected(f"static policy options {first} and {second} can not be used at the same time")
    return CPUManagerOptions(**values)
