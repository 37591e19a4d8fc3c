"""One validator: the settings validator's kubelet refusals are the model's start-up steps, no copy.

A table of bad configurations, at least one per kubelet check (``kubelet.startup.checks.STEPS``), each with
the refusal a hand reading of the kubelet expects. For each: the validator (given the machine) lists
exactly the errors the start-up steps give, each step run on its own, so a check written a second
time in ``settings/`` (its own text, its own condition) shows up as a difference; and the first of
them, as the kubelet stops at it, is what the model's start (``start_settings``, then
``NodeSimulator``) raises.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from tmnb.errors import ConfigRejected
from tmnb.kubelet.cpumanager.topology import CPUInfo
from tmnb.kubelet.node import Machine, NodeModel, NodeSimulator, NUMANode
from tmnb.kubelet.profiles import profile
from tmnb.kubelet.startup.checks import STAGES, STEPS, Start
from tmnb.kubelet.startup.start import start_settings
from tmnb.kubelet.startup.types import Hardware
from tmnb.kubelet.startup.validation import aggregate
from tmnb.parse.kubelet_config import parse_kubelet_config
from tmnb.settings.effective import effective_settings
from tmnb.settings.validate import validate_settings
from tmnb.versions import KubeVersion

GI = 1 << 30
HEADER = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\n"


def machine(
    numa: tuple[int, ...] = (0, 1), *, sockets_per_numa: int = 1, distances: bool = True, cpus_per_numa: int = 4
) -> Machine:
    """``cpus_per_numa`` CPUs on each NUMA node (two threads a core), 8Gi each; ``sockets_per_numa``
    2 spreads one node's cores over two sockets."""
    cpus, cpu = [], 0
    for node in numa:
        for i in range(cpus_per_numa):
            socket = node * sockets_per_numa + (i * sockets_per_numa) // cpus_per_numa
            cpus.append(CPUInfo(cpu, cpu // 2, socket, node))
            cpu += 1
    rows = tuple(10 if a == b else 20 for a in range(len(numa)) for b in range(len(numa)))
    nodes = tuple(
        NUMANode(n, 8 * GI, {}, rows[i * len(numa) : (i + 1) * len(numa)] if distances else None)
        for i, n in enumerate(numa)
    )
    return Machine(tuple(cpus), nodes)


TWO = machine()  # 8 CPUs (0-7), two NUMA nodes, two sockets, 16Gi
STATIC = {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "1"}}
PREFER_CLOSEST = {
    "topologyManagerPolicy": "best-effort",
    "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
}
ALIGN = {
    **STATIC,
    "cpuManagerPolicyOptions": {"align-by-socket": "true"},
    "featureGates": {"CPUManagerPolicyAlphaOptions": True},
}
WRAPPED = "new static policy error: "

#: (minor, machine, configuration, the code of one refusal, its text); the texts from the kubelet's
#: sources as docs/kubelet-minors.md lists them, worked by hand.
CASES: dict[str, tuple[int, Machine, dict[str, Any], str, str]] = {
    "unknown gate": (
        36,
        TWO,
        {"featureGates": {"NoSuchGate": True}},
        "config.feature-gates",
        "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
        "unrecognized feature gate: NoSuchGate",
    ),
    "negative image GC age": (
        36,
        TWO,
        {"imageMinimumGCAge": "-1m"},
        "config.image-gc-age",
        "invalid configuration: imageMinimumGCAge -1m0s must not be negative",
    ),
    "negative maxPods": (
        36,
        TWO,
        {"maxPods": -1},
        "config.max-pods",
        "invalid configuration: maxPods (--max-pods) -1 must not be a negative number",
    ),
    "negative podsPerCore": (
        36,
        TWO,
        {"podsPerCore": -2},
        "config.pods-per-core",
        "invalid configuration: podsPerCore (--pods-per-core) -2 must not be a negative number",
    ),
    "topology policy": (
        33,
        TWO,
        {"topologyManagerPolicy": "single-numa"},
        "topology.policy",
        'invalid configuration: topologyManagerPolicy (--topology-manager-policy) "single-numa" must be one of: '
        '["none" "best-effort" "restricted" "single-numa-node"]',
    ),
    "topology scope": (
        36,
        TWO,
        {"topologyManagerScope": "Pod"},
        "topology.scope",
        'invalid configuration: topologyManagerScope (--topology-manager-scope) "Pod" must be one of: '
        '"container", or "pod"',
    ),
    "enforcement twice": (
        36,
        TWO,
        {"enforceNodeAllocatable": ["pods", "pods"]},
        "config.enforce-node-allocatable",
        'invalid configuration: duplicated enforcements "pods" in enforceNodeAllocatable (--enforce-node-allocatable)',
    ),
    "reserved CPUs with a cgroup": (
        36,
        TWO,
        {"reservedSystemCPUs": "0", "kubeReservedCgroup": "/kube.slice"},
        "cpu.reserved-cpus-cgroup",
        "invalid configuration: can't use reservedSystemCPUs (--reserved-cpus) with systemReservedCgroup "
        "(--system-reserved-cgroup) or kubeReservedCgroup (--kube-reserved-cgroup)",
    ),
    "reserved CPUs unparsable": (
        36,
        TWO,
        {"reservedSystemCPUs": "0-a"},
        "cpu.reserved-cpus-parse",
        "invalid configuration: unable to parse reservedSystemCPUs (--reserved-cpus) 0-a, error: strconv.Atoi: "
        'parsing "a": invalid syntax',
    ),
    "reserved memory type": (
        36,
        TWO,
        {"reservedMemory": [{"numaNode": 0, "limits": {"cpu": "1"}}]},
        "memory.reserved-type",
        'invalid configuration: the limit type "cpu" for NUMA node 0 is not supported, only '
        "[memory hugepages-<HugePageSize>] is accepted",
    ),
    "reserved memory zero": (
        36,
        TWO,
        {"reservedMemory": [{"numaNode": 0, "limits": {"memory": "0"}}]},
        "memory.reserved-zero",
        'invalid configuration: reserved memory may not be zero for NUMA node 0 and resource "memory"',
    ),
    "reserved memory twice": (
        36,
        TWO,
        {
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "1Gi"}},
                {"numaNode": 0, "limits": {"memory": "1Gi"}},
            ]
        },
        "memory.reserved-duplicate",
        'invalid configuration: the reserved memory has a duplicate value for NUMA node 0 and resource "memory"',
    ),
    "memory reservation policy": (
        36,
        TWO,
        {"memoryReservationPolicy": "Tiered"},
        "memory.reservation-policy",
        'invalid configuration: option "Tiered" specified for memoryReservationPolicy. Valid options are "None" or '
        '"TieredReservation"',
    ),
    "reserved CPUs offline": (
        36,
        TWO,
        {"reservedSystemCPUs": "0,64"},
        "cpu.reserved-cpus-offline",
        "reserved-cpus: 0,64 is not a subset of online-cpus: 0-7",
    ),
    "kubeReserved resource": (
        36,
        TWO,
        {"kubeReserved": {"gpu": "1"}},
        "config.kube-reserved",
        '--kube-reserved value failed to parse: cannot reserve "gpu" resource',
    ),
    "systemReserved negative": (
        36,
        TWO,
        {"systemReserved": {"cpu": "-1"}},
        "config.system-reserved",
        '--system-reserved value failed to parse: resource quantity for "cpu" cannot be negative: -1',
    ),
    "eviction signal": (
        36,
        TWO,
        {"evictionHard": {"memory.free": "1Gi"}},
        "config.eviction-hard",
        "unsupported eviction signal memory.free",
    ),
    # run() checks the option-map gate whatever the policy: none here, and the kubelet still refuses
    "option-map gate off": (
        35,
        TWO,
        {
            "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"},
            "featureGates": {"TopologyManagerPolicyOptions": False},
        },
        "kubelet.rejects",
        "topology manager policy options map[prefer-closest-numa-nodes:true] require feature gates "
        '"TopologyManagerPolicyOptions" enabled',
    ),
    "topology option": (
        36,
        TWO,
        {"topologyManagerPolicy": "restricted", "topologyManagerPolicyOptions": {"bogus": "1"}},
        "kubelet.rejects",
        'unknown Topology Manager Policy option: "bogus"',
    ),
    "no NUMA distances": (
        36,
        machine(distances=False),
        PREFER_CLOSEST,
        "topology.numa-distances",
        "cannot discover NUMA topology: error getting NUMA distances from cadvisor",
    ),
    "sparse NUMA ids": (
        36,
        machine((0, 2)),
        PREFER_CLOSEST,
        "topology.sparse-numa-ids",
        "the kubelet would panic (runtime error: index out of range [2] with length 2) in CalculateAverageFor: "
        "prefer-closest-numa-nodes indexes the sysfs distance row by node id, and NUMA node ids [0, 2] are sparse",
    ),
    "nine NUMA nodes": (
        36,
        machine(tuple(range(9)), cpus_per_numa=2),
        {"topologyManagerPolicy": "restricted"},
        "topology.too-many-numa-nodes",
        "unsupported on machines with more than 8 NUMA Nodes",
    ),
    "CPU options under none": (
        36,
        TWO,
        {"cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
        "cpu.options-with-none",
        "new none policy error: None policy: received unsupported options=map[full-pcpus-only:true]",
    ),
    "CPU policy": (36, TWO, {"cpuManagerPolicy": "Static"}, "cpu.policy", 'unknown policy: "Static"'),
    "static without a reservation": (
        36,
        TWO,
        {"cpuManagerPolicy": "static"},
        "cpu.static-no-reservation",
        "[cpumanager] unable to determine reserved CPU resources for static policy",
    ),
    "CPU option": (
        36,
        TWO,
        {**STATIC, "cpuManagerPolicyOptions": {"spread": "true"}},
        "kubelet.rejects",
        WRAPPED + 'unknown CPU Manager Policy option: "spread"',
    ),
    "align-by-socket under single-numa-node": (
        36,
        TWO,
        {**ALIGN, "topologyManagerPolicy": "single-numa-node"},
        "cpu.align-by-socket-single-numa",
        WRAPPED
        + "Topolgy manager single-numa-node policy is incompatible with CPUManager align-by-socket policy option",
    ),
    "align-by-socket with two sockets a NUMA node": (
        36,
        machine((0,), sockets_per_numa=2),
        ALIGN,
        "cpu.align-by-socket-hardware",
        WRAPPED
        + "Align by socket is not compatible with hardware where number of sockets are more than number of NUMA",
    ),
    "more reserved CPUs than the machine has": (
        36,
        TWO,
        {"cpuManagerPolicy": "static", "kubeReserved": {"cpu": "10"}},
        "cpu.reserve",
        WRAPPED + "[cpumanager] unable to reserve the required amount of CPUs (size of  did not equal 10)",
    ),
    "memory policy": (36, TWO, {"memoryManagerPolicy": "static"}, "memory.policy", 'unknown policy: "static"'),
    "reserved memory on a missing NUMA node": (
        36,
        TWO,
        {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 3, "limits": {"memory": "100Mi"}}]},
        "memory.reserved-unknown-numa",
        "the reserved memory configuration references a NUMA node 3 that does not exist on this machine",
    ),
    "reserved memory sum": (
        36,
        TWO,
        {"memoryManagerPolicy": "Static", "reservedMemory": [{"numaNode": 0, "limits": {"memory": "1Gi"}}]},
        "memory.reserved-sum",
        'the total amount "1Gi" of type "memory" is not equal to the value "100Mi" determined by Node Allocatable '
        "feature",
    ),
    # entries naming one NUMA node add up (the model kept only the last entry of a node, and said
    # "the total amount "0" of type "memory"")
    "reserved memory of one node in two entries": (
        36,
        TWO,
        {
            "memoryManagerPolicy": "Static",
            "reservedMemory": [
                {"numaNode": 0, "limits": {"memory": "100Mi"}},
                {"numaNode": 0, "limits": {"hugepages-2Mi": "2Mi"}},
            ],
        },
        "memory.reserved-sum",
        'the total amount "2Mi" of type "hugepages-2Mi" is not equal to the value "0" determined by Node '
        "Allocatable feature",
    ),
    # no memory threshold and no memory reserved: the sum matches (0), NewPolicyStatic refuses
    "no reserved memory": (
        36,
        TWO,
        {"memoryManagerPolicy": "Static", "evictionHard": {"nodefs.available": "10%"}},
        "memory.reserved-missing",
        "[memorymanager] you should specify the system reserved memory",
    ),
    # 100Gi + the default 100Mi threshold against MemTotal 16Gi; validateNodeAllocatable prints the
    # quantities with %v, Go's dump of the struct (value, scale, cached string, format)
    "reservation above capacity": (
        36,
        TWO,
        {"systemReserved": {"memory": "100Gi"}},
        "config.node-allocatable",
        'invalid Node Allocatable configuration. Resource "memory" has a reservation of '
        "{{107479040000 0} {<nil>}  BinarySI} but capacity of {{17179869184 0} {<nil>}  BinarySI}. "
        "Expected capacity >= reservation.",
    ),
    # several stages fail: the kubelet stops at validation, reporting both of its errors
    "several at once": (
        36,
        TWO,
        {"maxPods": -1, "podsPerCore": -1, "kubeReserved": {"gpu": "1"}, "cpuManagerPolicy": "Static"},
        "config.pods-per-core",
        "invalid configuration: podsPerCore (--pods-per-core) -1 must not be a negative number",
    ),
}


def first_refusal(start: Start) -> str | None:
    """Where the kubelet stops: the first stage with a refusal, all of validation's together."""
    for stage in STAGES:
        refusals = [r.text for step in stage.steps for r in step.check(start)]
        if refusals:
            return aggregate(refusals) if stage.aggregate else refusals[0]
    return None


def model_refusal(config: dict[str, Any], m: Machine, minor: int) -> str | None:
    """What the model's start raises: ``start_settings``, then the managers' creation and start."""
    try:
        settings = start_settings(config, m, kubelet=profile(minor))
        NodeSimulator(NodeModel("node", m, settings))
    except ConfigRejected as err:
        return err.message
    return None


def validator_errors(config: dict[str, Any], m: Machine, minor: int) -> set[tuple[str, str, str, bool]]:
    version = KubeVersion(1, minor, 0)
    doc = parse_kubelet_config(HEADER + yaml.safe_dump(config), source="config.yaml")
    findings = validate_settings(effective_settings(file=doc, version=version), version=version, machine=m)
    return {(f.code, f.field, f.message, f.kubelet_text) for f in findings if f.severity == "error"}


def step_refusals(config: dict[str, Any], m: Machine, minor: int) -> set[tuple[str, str, str, bool]]:
    start = Start.of(config, profile(minor), Hardware.of(m))
    out = set()
    for step in STEPS:
        for r in step.check(start):
            assert r.code in step.codes, (step.name, r.code)
            out.add((r.code, r.field, r.text, r.kubelet_text))
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_the_validator_lists_exactly_what_the_start_up_steps_refuse(name: str) -> None:
    minor, m, config, code, text = CASES[name]
    refused = step_refusals(config, m, minor)
    assert (code, text) in {(c, t) for c, _, t, _ in refused}
    assert validator_errors(config, m, minor) == refused


@pytest.mark.parametrize("name", list(CASES))
def test_the_first_refusal_is_where_the_models_start_stops(name: str) -> None:
    minor, m, config, _, _ = CASES[name]
    first = first_refusal(Start.of(config, profile(minor), Hardware.of(m)))
    assert first is not None
    assert model_refusal(config, m, minor) == first


def test_several_validation_errors_stop_the_kubelet_together() -> None:
    minor, m, config, _, _ = CASES["several at once"]
    assert model_refusal(config, m, minor) == (
        "[invalid configuration: maxPods (--max-pods) -1 must not be a negative number, "
        "invalid configuration: podsPerCore (--pods-per-core) -1 must not be a negative number]"
    )
    codes = {c for c, *_ in validator_errors(config, m, minor)}
    assert codes == {"config.max-pods", "config.pods-per-core", "config.kube-reserved", "cpu.policy"}


def test_every_check_has_a_case() -> None:
    declared = {code for step in STEPS for code in step.codes}
    assert declared == {code for _, _, _, code, _ in CASES.values()}


def test_a_good_configuration_is_refused_by_no_step() -> None:
    config = {
        **STATIC,
        "topologyManagerPolicy": "single-numa-node",
        "memoryManagerPolicy": "Static",
        "reservedMemory": [{"numaNode": 0, "limits": {"memory": "100Mi"}}],
    }
    assert step_refusals(config, TWO, 36) == set() == validator_errors(config, TWO, 36)
    assert model_refusal(config, TWO, 36) is None
