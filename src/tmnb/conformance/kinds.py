"""The kinds of conformance case, one handler each (``HANDLERS``): ``merge``, ``options``, ``cpu_hints``,
``cpu_provider``, ``device_hints``, ``memory_hints`` and ``admit`` ask one piece of the model, the
whole-node ``node_replay`` and ``node_restart`` start a kubelet and admit pods. Each answers in the
shape its kind's ``expected`` has.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from tmnb.conformance.cases import (
    container_ids,
    cpu_ids,
    device_allocations,
    devices_of,
    kubelet_of,
    machine_of,
    option_strings,
    read_field,
    runtime_containers,
)
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.checkpoints.restore import StateFiles
from tmnb.kubelet.cpumanager.policy_static import CPUStaticPolicy, generate_cpu_hints
from tmnb.kubelet.cpumanager.topology import CPUTopology
from tmnb.kubelet.devicemanager.manager import DeviceRestart
from tmnb.kubelet.devicemanager.topology_hints import Device, generate_device_hints
from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.memorymanager.hints import calculate_hints
from tmnb.kubelet.memorymanager.state import ModelMemoryTable, NUMANodeState
from tmnb.kubelet.names import SCOPE_CONTAINER
from tmnb.kubelet.node import ExistingAllocation, NodeModel, NodeSimulator, PodResult
from tmnb.kubelet.options import CPUManagerOptions, parse_cpu_manager_options, parse_topology_manager_options
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.startup.start import start_settings
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint, provider_from_json, provider_to_json
from tmnb.kubelet.topologymanager.topology_manager import TopologyManagerConfig, new_topology_manager

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]


def _manager(inp: Mapping[str, Any], scope_default: str = SCOPE_CONTAINER) -> TopologyManagerConfig:
    return new_topology_manager(
        read_field(inp, "policy", str),
        read_field(inp, "scope", str, scope_default),
        option_strings(read_field(inp, "options", dict, None)),
        read_field(inp, "numa_nodes", list),
        read_field(inp, "distances", (list, dict, type(None)), None),
        kubelet=kubelet_of(inp),
    )


def run_merge(inp: Mapping[str, Any]) -> dict[str, Any]:
    providers = [
        provider_from_json(p, f"input.providers[{i}]") for i, p in enumerate(read_field(inp, "providers", list))
    ]
    try:
        manager = _manager(inp)
    except ConfigRejected as err:
        return {"error": err.message}
    hint, admit = manager.policy.merge(providers)
    return {"numa": hint.numa(), "preferred": hint.preferred, "admit": admit}


def run_options(inp: Mapping[str, Any]) -> dict[str, Any]:
    options = option_strings(read_field(inp, "options", dict, None))
    options_error = None
    parsed = None
    try:
        parsed = parse_topology_manager_options(options, kubelet=kubelet_of(inp))
    except ConfigRejected as err:
        options_error = err.message
    try:
        manager = _manager(inp)
    except ConfigRejected as err:
        out: dict[str, Any] = {
            "manager_error": err.message,
            "manager_created": False,
            "prefer_closest_numa": False,
            "max_allowable_numa_nodes": 0,
        }
        if options_error is not None:
            out["options_error"] = options_error
        return out
    out = {
        "prefer_closest_numa": parsed.prefer_closest_numa if parsed else False,
        "max_allowable_numa_nodes": parsed.max_allowable_numa_nodes if parsed else 0,
        "manager_created": True,
        "policy_name": manager.policy.name,
        "scope_name": manager.scope.name,
    }
    if options_error is not None:
        out["options_error"] = options_error
    return out


#: Case files exercise every option; the kubelet's own tests switch the alpha/beta gates on for that.
ALL_OPTION_GATES = {"CPUManagerPolicyAlphaOptions": True, "CPUManagerPolicyBetaOptions": True}


def run_cpu_hints(inp: Mapping[str, Any]) -> dict[str, Any]:
    topo = CPUTopology.from_json(read_field(inp, "cpus", list), "input.cpus")
    raw = read_field(inp, "cpu_policy_options", dict, {})
    options = CPUManagerOptions(align_by_socket=bool(raw.get("align-by-socket", False)))
    hints = generate_cpu_hints(
        topo,
        options,
        cpu_ids(read_field(inp, "available", list), "available"),
        cpu_ids(read_field(inp, "reusable", list, []), "reusable"),
        read_field(inp, "request", int),
    )
    return {"hints": [h.to_json() for h in hints]}


def run_cpu_provider(inp: Mapping[str, Any]) -> dict[str, Any]:
    topo = CPUTopology.from_json(read_field(inp, "cpus", list), "input.cpus")
    pod = Pod.from_pod_dict(read_field(inp, "pod", dict), where="input.pod")
    container_name = read_field(inp, "container", str)
    assignments: dict[tuple[str, str], int] = {}
    for key, cpus in read_field(inp, "assignments", dict, {}).items():
        uid, sep, name = key.partition("/")
        if not sep:
            raise InputError(f"assignment key {key!r} must be '<podUID>/<container>'", where="input.assignments")
        assignments[(uid, name)] = cpu_ids(cpus, f"assignments.{key}")
    reserved = cpu_ids(read_field(inp, "reserved_cpus", list, []), "reserved_cpus")
    try:
        options = parse_cpu_manager_options(
            option_strings(read_field(inp, "cpu_policy_options", dict, {})),
            kubelet=kubelet_of(inp),
            feature_gates=ALL_OPTION_GATES,
        )
        policy = CPUStaticPolicy(
            topo,
            options=options,
            reserved_cpus=reserved,
            num_reserved_cpus=read_field(inp, "num_reserved_cpus", int, None),
            skips_pod_level=kubelet_of(inp).skips_pod_level_resources(None),
        )
    except ConfigRejected as err:
        return {"error": err.message}
    used = 0
    for cpus in assignments.values():
        used |= cpus
    default = inp.get("default_cpuset")
    policy.default = topo.all_mask & ~used if default is None else cpu_ids(default, "default_cpuset")
    policy.assignments = assignments
    if container_name == "":
        hints = policy.get_pod_topology_hints(pod)
    else:
        container = next((c for c in pod.all_containers() if c.name == container_name), None)
        if container is None:
            raise InputError(f"container {container_name!r} is not in the pod", where="input.container")
        hints = policy.get_topology_hints(pod, container)
    return {"hints": provider_to_json(hints)}


def run_device_hints(inp: Mapping[str, Any]) -> dict[str, Any]:
    nodes = read_field(inp, "numa_nodes", list)
    devices: dict[str, Device] = {}
    for i, raw in enumerate(read_field(inp, "devices", list)):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            raise InputError("a device must be {id, numa}", where=f"input.devices[{i}]")
        numa = raw.get("numa")
        if numa is not None and not (isinstance(numa, list) and all(isinstance(n, int) for n in numa)):
            raise InputError("numa must be a list of node ids or null", where=f"input.devices[{i}]")
        devices[raw["id"]] = Device(raw["id"], None if numa is None else tuple(numa))
    available = set(read_field(inp, "available", list))
    reusable = set(read_field(inp, "reusable", list, []))
    request = read_field(inp, "request", int)
    if not any(d.numa for d in devices.values()):
        return {"aligned": False, "hints": None}
    if len(available | reusable) < request:
        return {"aligned": True, "hints": []}
    hints = generate_device_hints(
        nodes,
        devices,
        sorted(available),
        sorted(reusable),
        request,
        over_device_nodes=kubelet_of(inp).device_hints_over_device_nodes,
    )
    return {"aligned": True, "hints": [h.to_json() for h in hints]}


def run_memory_hints(inp: Mapping[str, Any]) -> dict[str, Any]:
    state: dict[int, NUMANodeState] = {}
    for key, raw in read_field(inp, "nodes", dict).items():
        where = f"input.nodes.{key}"
        try:
            node = int(key)
            tables = {
                res: ModelMemoryTable(
                    total=int(t["total"]),
                    system_reserved=int(t["system_reserved"]),
                    allocatable=int(t["allocatable"]),
                    reserved=int(t["reserved"]),
                    free=int(t["free"]),
                )
                for res, t in raw["memory"].items()
            }
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise InputError(
                f"expected {{memory: {{resource: {{allocatable, free, reserved, total, system_reserved}}}}}} ({err})",
                where=where,
            ) from None
        state[node] = NUMANodeState(tables, list(raw.get("cells") or [node]), int(raw.get("assignments", 0)))
    request = {str(k): int(v) for k, v in read_field(inp, "request", dict).items()}
    hints = calculate_hints(state, request, {})
    return {"hints": {res: [h.to_json() for h in lst] for res, lst in hints.items()}}


class _FixedProvider:
    """A provider answering fixed maps and recording every call, like the kubelet's table-test mocks."""

    def __init__(self, index: int, raw: Mapping[str, Any], calls: list[str]) -> None:
        where = f"input.providers[{index}]"
        self.name = f"p{index}"
        self.calls = calls
        containers = raw.get("containers") or {}
        if not isinstance(containers, Mapping):
            raise InputError("containers must map container name to a provider map", where=where)
        self.per_container = {k: provider_from_json(v, f"{where}.containers.{k}") for k, v in containers.items()}
        self.pod = provider_from_json(raw.get("pod"), f"{where}.pod")
        errors = raw.get("allocate_error") or {}
        if not isinstance(errors, Mapping):
            raise InputError("allocate_error must map container name to error text", where=where)
        self.errors = dict(errors)

    def get_topology_hints(self, pod: Pod, container: Container) -> ProviderHints:
        self.calls.append(f"{self.name}.GetTopologyHints({container.name})")
        return self.per_container.get(container.name)

    def get_pod_topology_hints(self, pod: Pod) -> ProviderHints:
        self.calls.append(f"{self.name}.GetPodTopologyHints")
        return self.pod

    def allocate(self, pod: Pod, container: Container, affinity: TopologyHint) -> None:
        self.calls.append(f"{self.name}.Allocate({container.name})")
        text = self.errors.get(container.name, self.errors.get("*"))
        if text is not None:
            raise AdmissionError(str(text))


def run_admit(inp: Mapping[str, Any]) -> dict[str, Any]:
    init = [
        Container(str(c["name"]), restart_policy="Always" if c.get("restartable") else None)
        for c in read_field(inp, "init_containers", list, [])
    ]
    apps = [Container(str(c["name"])) for c in read_field(inp, "containers", list)]
    pod = Pod(uid="pod", name="pod", containers=tuple(apps), init_containers=tuple(init))
    calls: list[str] = []
    providers = [_FixedProvider(i, raw, calls) for i, raw in enumerate(read_field(inp, "providers", list))]
    try:
        manager = _manager(inp)
    except ConfigRejected as err:
        return {"error": err.message}
    result = manager.scope.admit(providers, pod)
    out = {
        "admit": result.admit,
        "reason": result.reason,
        "message": result.message,
        "affinity": {name: hint.to_json() for name, hint in result.affinity.items()},
        "calls": calls,
    }
    if not result.admit:
        out["pod_status_message"] = result.pod_status_message
    return out


def _answer(pod: Pod, result: PodResult) -> dict[str, Any]:
    containers = {
        c.name: {
            "cpuset": str(c.cpuset) if c.cpuset else None,
            "memory_numa": sorted({n for b in c.memory for n in b.numa}) or None,
        }
        for c in result.containers
        if result.admitted
    }
    return {
        "name": pod.name,
        "admit": result.admitted,
        "reason": result.reason,
        "message": result.message,
        "containers": containers,
    }


def run_node_replay(inp: Mapping[str, Any]) -> dict[str, Any]:
    """From kubelet start to the last pod; the pods' answers in input order, then the shared pool."""
    machine = machine_of(inp)
    pods = [Pod.from_pod_dict(p, where=f"input.pods[{i}]") for i, p in enumerate(read_field(inp, "pods", list))]
    try:
        settings = start_settings(read_field(inp, "kubelet", dict), machine, kubelet=kubelet_of(inp))
        sim = NodeSimulator(NodeModel("node", machine, settings))
    except ConfigRejected as err:
        return {"error": err.message}
    answers = [_answer(pod, sim.admit(pod)) for pod in pods]
    return {"pods": answers, "shared_pool": str(sim.shared_pool())}


def run_node_restart(inp: Mapping[str, Any]) -> dict[str, Any]:
    """The kubelet restarts over its checkpoint files: start-up with the files restored, the pods as the
    first batch (clean-up deferred to its end), one clean-up pass, then the shared pool."""
    machine = machine_of(inp)
    raw_pods = read_field(inp, "pods", list)
    pods = [Pod.from_pod_dict(p, where=f"input.pods[{i}]") for i, p in enumerate(raw_pods)]
    checkpoints = read_field(inp, "checkpoints", dict)
    texts = []
    for name in ("cpu_manager_state", "memory_manager_state"):
        text = checkpoints.get(name)
        if text is not None and not isinstance(text, str):
            raise InputError(f"{name} must be the file's text or null", where="input.checkpoints")
        texts.append(text)
    files = StateFiles(texts[0], texts[1], containers=container_ids(raw_pods))
    held: tuple[ExistingAllocation, ...] = ()
    restart: DeviceRestart | None = None
    if "devices" in inp:
        machine = dataclasses.replace(machine, devices=devices_of(read_field(inp, "devices", dict)))
        held = device_allocations(read_field(inp, "device_allocations", dict, {}))
        registered = read_field(inp, "device_plugins_registered", list, list(machine.devices))
        restart = DeviceRestart(
            runtime_containers(raw_pods),
            kubelet_of(inp).device_counts_any_running_id(None),
            frozenset(str(r) for r in registered),
        )
    try:
        settings = start_settings(read_field(inp, "kubelet", dict), machine, kubelet=kubelet_of(inp))
        sim = NodeSimulator(NodeModel("node", machine, settings, held, state_files=files, device_restart=restart))
    except ConfigRejected as err:
        return {"error": err.message}
    answers = [_answer(pod, result) for pod, result in zip(pods, sim.restart(pods), strict=True)]
    return {"pods": answers, "shared_pool": str(sim.shared_pool())}


HANDLERS: dict[str, Handler] = {
    "node_replay": run_node_replay,
    "node_restart": run_node_restart,
    "admit": run_admit,
    "memory_hints": run_memory_hints,
    "device_hints": run_device_hints,
    "cpu_hints": run_cpu_hints,
    "cpu_provider": run_cpu_provider,
    "merge": run_merge,
    "options": run_options,
}
