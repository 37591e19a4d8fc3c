"""Conformance runner: ``python -m tmnb.kubelet.conformance < cases.jsonl > answers.jsonl``.

Reads one case a line (``{"id", "kind", "input", ...}``, as in tests/conformance/*.jsonl) and
answers every case with ``{"id", "expected"}`` in the shape of its kind. A case that cannot be
processed gets ``{"runner_error": ...}`` and the run goes on, so one malformed line never hides the
answers to thousands of others.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, TextIO

from tmnb.errors import ConfigRejected, InputError, TmnbError
from tmnb.kubelet.checkpoints.restore import StateFiles
from tmnb.kubelet.cpumanager.policy_static import CPUStaticPolicy, generate_cpu_hints
from tmnb.kubelet.cpumanager.topology import CPUTopology, mask_of_cpus
from tmnb.kubelet.devicemanager.manager import DeviceRestart, RuntimeContainer
from tmnb.kubelet.devicemanager.topology_hints import Device, generate_device_hints
from tmnb.kubelet.errors import AdmissionError
from tmnb.kubelet.memorymanager.hints import calculate_hints
from tmnb.kubelet.memorymanager.state import ModelMemoryTable, NUMANodeState
from tmnb.kubelet.names import SCOPE_CONTAINER
from tmnb.kubelet.node import ExistingAllocation, Machine, NodeModel, NodeSimulator, NUMANode, PodResult
from tmnb.kubelet.options import CPUManagerOptions, parse_cpu_manager_options, parse_topology_manager_options
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, parse_minor, profile
from tmnb.kubelet.startup.start import start_settings
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint, provider_from_json, provider_to_json
from tmnb.kubelet.topologymanager.topology_manager import TopologyManagerConfig, new_topology_manager

Handler = Callable[[Mapping[str, Any]], dict[str, Any]]


def _field(inp: Mapping[str, Any], name: str, kind: type | tuple[type, ...], default: Any = ...) -> Any:
    if name not in inp:
        if default is ...:
            raise InputError(f"missing field {name!r}", where="input")
        return default
    value = inp[name]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
        raise InputError(f"field {name!r} has the wrong type ({type(value).__name__})", where="input")
    return value


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def option_strings(options: Mapping[str, Any] | None) -> dict[str, str]:
    """Case files may write option values as JSON bools/ints; the kubelet only sees strings."""
    out: dict[str, str] = {}
    for name, value in (options or {}).items():
        if isinstance(value, bool):
            out[name] = "true" if value else "false"
        elif isinstance(value, int | str):
            out[name] = str(value)
        else:
            raise InputError(f"option {name!r} must be a string, bool or int", where="input.options")
    return out


def _kubelet(inp: Mapping[str, Any]) -> KubeletProfile:
    """``input.version``: the minor that answers the case; absent means the default (1.36)."""
    if "version" not in inp:
        return profile(DEFAULT_MINOR)
    return parse_minor(_field(inp, "version", str), where="input.version")


def _manager(inp: Mapping[str, Any], scope_default: str = SCOPE_CONTAINER) -> TopologyManagerConfig:
    return new_topology_manager(
        _field(inp, "policy", str),
        _field(inp, "scope", str, scope_default),
        option_strings(_field(inp, "options", dict, None)),
        _field(inp, "numa_nodes", list),
        _field(inp, "distances", (list, dict, type(None)), None),
        kubelet=_kubelet(inp),
    )


def run_merge(inp: Mapping[str, Any]) -> dict[str, Any]:
    providers = [provider_from_json(p, f"input.providers[{i}]") for i, p in enumerate(_field(inp, "providers", list))]
    try:
        manager = _manager(inp)
    except ConfigRejected as err:
        return {"error": err.message}
    hint, admit = manager.policy.merge(providers)
    return {"numa": hint.numa(), "preferred": hint.preferred, "admit": admit}


def run_options(inp: Mapping[str, Any]) -> dict[str, Any]:
    options = option_strings(_field(inp, "options", dict, None))
    options_error = None
    parsed = None
    try:
        parsed = parse_topology_manager_options(options, kubelet=_kubelet(inp))
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


def _cpu_ids(value: object, name: str) -> int:
    if not isinstance(value, list) or not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in value):
        raise InputError(f"field {name!r} must be a list of CPU ids", where="input")
    return mask_of_cpus(value)


#: Case files exercise every option; the kubelet's own tests switch the alpha/beta gates on for that.
ALL_OPTION_GATES = {"CPUManagerPolicyAlphaOptions": True, "CPUManagerPolicyBetaOptions": True}


def run_cpu_hints(inp: Mapping[str, Any]) -> dict[str, Any]:
    topo = CPUTopology.from_json(_field(inp, "cpus", list), "input.cpus")
    raw = _field(inp, "cpu_policy_options", dict, {})
    options = CPUManagerOptions(align_by_socket=bool(raw.get("align-by-socket", False)))
    hints = generate_cpu_hints(
        topo,
        options,
        _cpu_ids(_field(inp, "available", list), "available"),
        _cpu_ids(_field(inp, "reusable", list, []), "reusable"),
        _field(inp, "request", int),
    )
    return {"hints": [h.to_json() for h in hints]}


def run_cpu_provider(inp: Mapping[str, Any]) -> dict[str, Any]:
    topo = CPUTopology.from_json(_field(inp, "cpus", list), "input.cpus")
    pod = Pod.from_pod_dict(_field(inp, "pod", dict), where="input.pod")
    container_name = _field(inp, "container", str)
    assignments: dict[tuple[str, str], int] = {}
    for key, cpus in _field(inp, "assignments", dict, {}).items():
        uid, sep, name = key.partition("/")
        if not sep:
            raise InputError(f"assignment key {key!r} must be '<podUID>/<container>'", where="input.assignments")
        assignments[(uid, name)] = _cpu_ids(cpus, f"assignments.{key}")
    reserved = _cpu_ids(_field(inp, "reserved_cpus", list, []), "reserved_cpus")
    try:
        options = parse_cpu_manager_options(
            option_strings(_field(inp, "cpu_policy_options", dict, {})),
            kubelet=_kubelet(inp),
            feature_gates=ALL_OPTION_GATES,
        )
        policy = CPUStaticPolicy(
            topo,
            options=options,
            reserved_cpus=reserved,
            num_reserved_cpus=_field(inp, "num_reserved_cpus", int, None),
            skips_pod_level=_kubelet(inp).skips_pod_level_resources(None),
        )
    except ConfigRejected as err:
        return {"error": err.message}
    used = 0
    for cpus in assignments.values():
        used |= cpus
    default = inp.get("default_cpuset")
    policy.default = topo.all_mask & ~used if default is None else _cpu_ids(default, "default_cpuset")
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
    nodes = _field(inp, "numa_nodes", list)
    devices: dict[str, Device] = {}
    for i, raw in enumerate(_field(inp, "devices", list)):
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), str):
            raise InputError("a device must be {id, numa}", where=f"input.devices[{i}]")
        numa = raw.get("numa")
        if numa is not None and not (isinstance(numa, list) and all(isinstance(n, int) for n in numa)):
            raise InputError("numa must be a list of node ids or null", where=f"input.devices[{i}]")
        devices[raw["id"]] = Device(raw["id"], None if numa is None else tuple(numa))
    available = set(_field(inp, "available", list))
    reusable = set(_field(inp, "reusable", list, []))
    request = _field(inp, "request", int)
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
        over_device_nodes=_kubelet(inp).device_hints_over_device_nodes,
    )
    return {"aligned": True, "hints": [h.to_json() for h in hints]}


def run_memory_hints(inp: Mapping[str, Any]) -> dict[str, Any]:
    state: dict[int, NUMANodeState] = {}
    for key, raw in _field(inp, "nodes", dict).items():
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
    request = {str(k): int(v) for k, v in _field(inp, "request", dict).items()}
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
        for c in _field(inp, "init_containers", list, [])
    ]
    apps = [Container(str(c["name"])) for c in _field(inp, "containers", list)]
    pod = Pod(uid="pod", name="pod", containers=tuple(apps), init_containers=tuple(init))
    calls: list[str] = []
    providers = [_FixedProvider(i, raw, calls) for i, raw in enumerate(_field(inp, "providers", list))]
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


def _machine(inp: Mapping[str, Any]) -> Machine:
    cpus = CPUTopology.from_json(_field(inp, "cpus", list), "input.cpus").cpus
    nodes = []
    for i, raw in enumerate(_field(inp, "numa_nodes", list)):
        where = f"input.numa_nodes[{i}]"
        if not isinstance(raw, Mapping) or not isinstance(raw.get("id"), int):
            raise InputError("expected {id, memory, hugepages, distances}", where=where)
        hugepages = raw.get("hugepages") or {}
        distances = raw.get("distances")
        if not isinstance(hugepages, Mapping) or not all(isinstance(v, int) for v in hugepages.values()):
            raise InputError("hugepages must map resource name to bytes", where=where)
        nodes.append(
            NUMANode(
                raw["id"],
                int(raw.get("memory") or 0),
                {str(k): v for k, v in hugepages.items()},
                None if distances is None else tuple(int(d) for d in distances),
            )
        )
    return Machine(cpus, tuple(nodes))


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
    machine = _machine(inp)
    pods = [Pod.from_pod_dict(p, where=f"input.pods[{i}]") for i, p in enumerate(_field(inp, "pods", list))]
    try:
        settings = start_settings(_field(inp, "kubelet", dict), machine, kubelet=_kubelet(inp))
        sim = NodeSimulator(NodeModel("node", machine, settings))
    except ConfigRejected as err:
        return {"error": err.message}
    answers = [_answer(pod, sim.admit(pod)) for pod in pods]
    return {"pods": answers, "shared_pool": str(sim.shared_pool())}


def _statuses(raw_pods: list[Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Each container status of the pods (``initContainerStatuses``, then ``containerStatuses``), with
    its pod's uid."""
    for raw in raw_pods:
        if not isinstance(raw, Mapping):
            continue
        uid = str((raw.get("metadata") or {}).get("uid", ""))
        status = raw.get("status") or {}
        for key in ("initContainerStatuses", "containerStatuses"):
            for item in status.get(key) or ():
                if isinstance(item, Mapping):
                    yield uid, item


def _runtime_id(value: object) -> str | None:
    """``containerd://abc`` is container ID ``abc``; None when there is no ID."""
    return value.split("://", 1)[-1] if isinstance(value, str) else None


def _container_ids(raw_pods: list[Any]) -> dict[str, tuple[str, str]]:
    """The runtime's containers, from the pods' container statuses: what migrates a v1 CPU checkpoint."""
    return {
        cid: (uid, str(item.get("name", "")))
        for uid, item in _statuses(raw_pods)
        if (cid := _runtime_id(item.get("containerID"))) is not None
    }


def _runtime_containers(raw_pods: list[Any]) -> tuple[RuntimeContainer, ...]:
    """The runtime's containers at the start, from the pods' container statuses: each ``containerID``
    (running when its ``state`` is ``running``) and, for a container that restarted, the exited
    instance in ``lastState.terminated.containerID``."""
    out: list[RuntimeContainer] = []
    for uid, item in _statuses(raw_pods):
        name = str(item.get("name", ""))
        if (cid := _runtime_id(item.get("containerID"))) is not None:
            out.append(RuntimeContainer(cid, uid, name, "running" in (item.get("state") or {})))
        last = _runtime_id(((item.get("lastState") or {}).get("terminated") or {}).get("containerID"))
        if last is not None:
            out.append(RuntimeContainer(last, uid, name, False))
    return tuple(out)


def _devices(raw: Mapping[str, Any]) -> dict[str, tuple[Device, ...]]:
    """``devices``: resource -> [{id, numa: [ids] | null, healthy}], the devices the plugins list."""
    out = {}
    for resource, items in raw.items():
        if not isinstance(items, list):
            raise InputError("expected a list of {id, numa, healthy}", where=f"input.devices.{resource}")
        out[str(resource)] = tuple(
            Device(str(d["id"]), None if d.get("numa") is None else tuple(d["numa"]), bool(d.get("healthy", True)))
            for d in items
        )
    return out


def _device_allocations(raw: Mapping[str, Any]) -> tuple[ExistingAllocation, ...]:
    """``device_allocations``: pod UID -> container -> resource -> [device ids] (the device checkpoint)."""
    return tuple(
        ExistingAllocation(str(pod), str(container), devices={str(r): tuple(ids) for r, ids in resources.items()})
        for pod, containers in raw.items()
        for container, resources in containers.items()
    )


def run_node_restart(inp: Mapping[str, Any]) -> dict[str, Any]:
    """The kubelet restarts over its checkpoint files: start-up with the files restored, the pods as the
    first batch (clean-up deferred to its end), one clean-up pass, then the shared pool."""
    machine = _machine(inp)
    raw_pods = _field(inp, "pods", list)
    pods = [Pod.from_pod_dict(p, where=f"input.pods[{i}]") for i, p in enumerate(raw_pods)]
    checkpoints = _field(inp, "checkpoints", dict)
    texts = []
    for name in ("cpu_manager_state", "memory_manager_state"):
        text = checkpoints.get(name)
        if text is not None and not isinstance(text, str):
            raise InputError(f"{name} must be the file's text or null", where="input.checkpoints")
        texts.append(text)
    files = StateFiles(texts[0], texts[1], containers=_container_ids(raw_pods))
    held: tuple[ExistingAllocation, ...] = ()
    restart: DeviceRestart | None = None
    if "devices" in inp:
        machine = dataclasses.replace(machine, devices=_devices(_field(inp, "devices", dict)))
        held = _device_allocations(_field(inp, "device_allocations", dict, {}))
        registered = _field(inp, "device_plugins_registered", list, list(machine.devices))
        restart = DeviceRestart(
            _runtime_containers(raw_pods),
            _kubelet(inp).device_counts_any_running_id(None),
            frozenset(str(r) for r in registered),
        )
    try:
        settings = start_settings(_field(inp, "kubelet", dict), machine, kubelet=_kubelet(inp))
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


def answer(case: object) -> dict[str, Any]:
    """One answer line for one decoded case; never raises."""
    case_id = case.get("id") if isinstance(case, Mapping) else None
    try:
        if not isinstance(case, Mapping):
            raise InputError("a case must be a JSON object")
        kind = case.get("kind")
        handler = HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            raise InputError(f"unknown kind {kind!r}; expected one of {sorted(HANDLERS)}")
        inp = case.get("input")
        if not isinstance(inp, Mapping):
            raise InputError("missing or non-object 'input'")
        expected = handler(inp)
    except TmnbError as err:
        expected = {"runner_error": str(err)}
    except Exception as err:  # a bug or an input shape we did not foresee: report it, keep going
        expected = {"runner_error": f"{type(err).__name__}: {err}"}
    return {"id": case_id, "expected": expected}


def run_lines(lines: Iterable[str]) -> Iterator[dict[str, Any]]:
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as err:
            yield {"id": None, "expected": {"runner_error": f"line {number}: invalid JSON: {err.msg}"}}
            continue
        yield answer(case)


def main(stdin: TextIO | None = None, stdout: TextIO | None = None) -> int:
    out = stdout or sys.stdout
    for result in run_lines(stdin or sys.stdin):
        out.write(json.dumps(result, separators=(",", ":")) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
