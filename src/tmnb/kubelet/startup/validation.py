"""``ValidateKubeletConfiguration`` for the fields that shape resource management: every rule runs, and
the kubelet reports all failures together, as one aggregate error.

Each rule is a small function returning its ``Refusal``s (``VALIDATION``, in the kubelet's order), so
``startup.checks`` can run every one on its own for the settings validator: one implementation,
one text.

Ports pkg/kubelet/apis/config/validation/validation.go (``ValidateKubeletConfiguration``,
``validateReservedMemoryConfiguration``) (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.go_quantity import GoQuantity
from tmnb.kubelet.names import TOPOLOGY_SCOPES
from tmnb.kubelet.profiles import KubeletProfile
from tmnb.kubelet.startup.config import MEMORY_RESERVATION_POLICIES
from tmnb.kubelet.startup.types import Refusal
from tmnb.kubelet.topologymanager.policy import TOPOLOGY_POLICIES
from tmnb.parse.duration import format_go_duration, parse_go_duration

_ENFORCE_KEYS = (
    "pods",
    "system-reserved",
    "system-reserved-compressible",
    "kube-reserved",
    "kube-reserved-compressible",
    "none",
)

# ValidateKubeletConfiguration: every rule runs, and the kubelet reports all failures together

Rule = Callable[[Mapping[str, Any], KubeletProfile], list[Refusal]]


def _invalid(code: str, field: str, text: str) -> Refusal:
    return Refusal(code, field, f"invalid configuration: {text}")


def image_minimum_gc_age(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    gc_age = parse_go_duration(str(cfg["imageMinimumGCAge"]), where="imageMinimumGCAge")
    if kubelet.refuses_negative_image_gc_age and gc_age < 0:
        text = f"imageMinimumGCAge {format_go_duration(gc_age)} must not be negative"
        return [_invalid("config.image-gc-age", "imageMinimumGCAge", text)]
    return []


def max_pods(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg["maxPods"] < 0:
        return [
            _invalid(
                "config.max-pods", "maxPods", f"maxPods (--max-pods) {cfg['maxPods']} must not be a negative number"
            )
        ]
    return []


def pods_per_core(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg["podsPerCore"] < 0:
        text = f"podsPerCore (--pods-per-core) {cfg['podsPerCore']} must not be a negative number"
        return [_invalid("config.pods-per-core", "podsPerCore", text)]
    return []


def topology_manager_policy(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    policy = cfg["topologyManagerPolicy"]
    if policy in TOPOLOGY_POLICIES:
        return []
    allowed = "[" + " ".join(gostr.quote(p) for p in TOPOLOGY_POLICIES) + "]"
    text = f"topologyManagerPolicy (--topology-manager-policy) {gostr.quote(policy)} must be one of: {allowed}"
    return [_invalid("topology.policy", "topologyManagerPolicy", text)]


def topology_manager_scope(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    scope = cfg["topologyManagerScope"]
    if scope in TOPOLOGY_SCOPES:
        return []
    allowed = ", or ".join(gostr.quote(s) for s in TOPOLOGY_SCOPES)
    text = f"topologyManagerScope (--topology-manager-scope) {gostr.quote(scope)} must be one of: {allowed}"
    return [_invalid("topology.scope", "topologyManagerScope", text)]


def enforce_node_allocatable(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    """The enforcement keys: exclusive pairs first, then each key once (duplicates named), its
    cgroup, and cgroupsPerQOS for every key that enforces something."""
    flag = "in enforceNodeAllocatable (--enforce-node-allocatable)"
    keys = list(cfg["enforceNodeAllocatable"])
    _, system, system_c, kube, kube_c, none = _ENFORCE_KEYS
    errors = [
        f"both {gostr.quote(a)} and {gostr.quote(b)} cannot be specified together {flag}"
        for a, b in ((system, system_c), (kube, kube_c))
        if a in keys and b in keys
    ]
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            errors.append(f"duplicated enforcements {gostr.quote(key)} {flag}")
            continue
        seen.add(key)
        if key in (system, system_c) and not cfg.get("systemReservedCgroup"):
            errors.append(
                "systemReservedCgroup (--system-reserved-cgroup) must be specified when "
                f"{gostr.quote(system)} or {gostr.quote(system_c)} included {flag}"
            )
        elif key in (kube, kube_c) and not cfg.get("kubeReservedCgroup"):
            errors.append(
                "kubeReservedCgroup (--kube-reserved-cgroup) must be specified when "
                f"{gostr.quote(kube)} or {gostr.quote(kube_c)} included {flag}"
            )
        elif key == none:
            if len(keys) > 1:
                errors.append(
                    "enforceNodeAllocatable (--enforce-node-allocatable) may not contain additional enforcements "
                    f"when {gostr.quote(none)} is specified"
                )
            continue
        elif key not in _ENFORCE_KEYS:
            valid = ", ".join(gostr.quote(k) for k in _ENFORCE_KEYS[:-1]) + f" or {gostr.quote(none)}"
            errors.append(
                f"option {gostr.quote(key)} specified for enforceNodeAllocatable (--enforce-node-allocatable). "
                f"Valid options are {valid}"
            )
            continue
        if not cfg["cgroupsPerQOS"]:
            errors.append(
                f"cgroupsPerQOS (--cgroups-per-qos) must be set to true when {gostr.quote(key)} contained {flag}"
            )
    return [_invalid("config.enforce-node-allocatable", "enforceNodeAllocatable", e) for e in errors]


def reserved_cpus_cgroup(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    if cfg.get("reservedSystemCPUs") and (cfg.get("systemReservedCgroup") or cfg.get("kubeReservedCgroup")):
        text = (
            "can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup (--system-reserved-cgroup) "
            "or kubeReservedCgroup (--kube-reserved-cgroup)"
        )
        return [_invalid("cpu.reserved-cpus-cgroup", "reservedSystemCPUs", text)]
    return []


def reserved_cpus_parse(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    reserved = cfg.get("reservedSystemCPUs") or ""
    try:
        gostr.parse_cpu_ranges(reserved)
    except gostr.GoParseError as err:
        text = f"unable to parse reservedSystemCPUs (--reserved-cpus) {reserved}, error: {err}"
        return [_invalid("cpu.reserved-cpus-parse", "reservedSystemCPUs", text)]
    return []


def reserved_memory(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    """``validateReservedMemoryConfiguration``: per entry and limit, its type, a zero amount, a repeat."""
    errors, seen = [], set()
    for item in cfg.get("reservedMemory") or []:
        node = item["numaNode"]
        for name, text in (item.get("limits") or {}).items():
            if name != "memory" and not name.startswith("hugepages-"):
                why = (
                    f"the limit type {gostr.quote(name)} for NUMA node {node} is not supported, only "
                    "[memory hugepages-<HugePageSize>] is accepted"
                )
                errors.append(_invalid("memory.reserved-type", "reservedMemory", why))
            if quantity_of(text, f"reservedMemory[numaNode={node}].limits.{name}").is_zero():
                why = f"reserved memory may not be zero for NUMA node {node} and resource {gostr.quote(name)}"
                errors.append(_invalid("memory.reserved-zero", "reservedMemory", why))
            if (node, name) in seen:
                why = f"the reserved memory has a duplicate value for NUMA node {node} and resource {gostr.quote(name)}"
                errors.append(_invalid("memory.reserved-duplicate", "reservedMemory", why))
            seen.add((node, name))
    return errors


def memory_reservation_policy(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> list[Refusal]:
    """From 1.36, the minors that know the field."""
    if not kubelet.knows_field("memoryReservationPolicy"):
        return []
    value = cfg["memoryReservationPolicy"]
    errors = []
    if value == MEMORY_RESERVATION_POLICIES[1] and not kubelet.gate_on("MemoryQoS", cfg.get("featureGates")):
        errors.append(f"memoryReservationPolicy {gostr.quote(value)} requires MemoryQoS feature gate to be enabled")
    if value not in MEMORY_RESERVATION_POLICIES:
        none, tiered = (gostr.quote(v) for v in MEMORY_RESERVATION_POLICIES)
        errors.append(
            f"option {gostr.quote(value)} specified for memoryReservationPolicy. Valid options are {none} or {tiered}"
        )
    return [_invalid("memory.reservation-policy", "memoryReservationPolicy", e) for e in errors]


#: ``ValidateKubeletConfiguration``'s rules for the fields that shape resource management, in its order.
VALIDATION: tuple[Rule, ...] = (
    image_minimum_gc_age,
    max_pods,
    pods_per_core,
    topology_manager_policy,
    topology_manager_scope,
    enforce_node_allocatable,
    reserved_cpus_cgroup,
    reserved_cpus_parse,
    reserved_memory,
    memory_reservation_policy,
)


def validate(cfg: Mapping[str, Any], kubelet: KubeletProfile) -> None:
    """``ValidateKubeletConfiguration`` of ``kubelet``'s minor: all failures together, as its aggregate error."""
    errors = [refusal.text for rule in VALIDATION for refusal in rule(cfg, kubelet)]
    if errors:
        raise ConfigRejected(aggregate(errors))


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several in brackets, repeats once."""
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def quantity_of(text: object, where: str) -> GoQuantity:
    if isinstance(text, int) and not isinstance(text, bool):
        text = str(text)
    if not isinstance(text, str):
        raise InputError(f"expected a quantity string, got {text!r}", where=where)
    return GoQuantity.parse(text)
