"""The embedded sample fleet: committed file = generator output, every issue requirement present, and
every cross-reference consistent. Checks are functions returning problems, so the mutation tests at
the end can show that each one fails on a broken fleet."""

from __future__ import annotations

import copy
import json
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from datetime import datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from kubernetes.utils import parse_quantity

import tmnb
from published_schema import schema_errors
from tmnb.cpuset import CPUSet
from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.topologymanager.topology_manager import new_topology_manager
from tmnb.parse.kubelet_fields import RESOURCE_MANAGER_FIELDS
from tmnb.parse.kubelet_flags import parse_kubelet_args
from tmnb.settings.defaults import defaults_for
from tmnb.snapshot import Container, Node, Pod, Snapshot, digest, from_dict, load, save, to_dict
from tmnb.sources.embedded import AFTER_FILE, DATA_FILE, load_sample, load_sample_after
from tmnb.twin import sample
from tmnb.twin.sample import POOL_LABEL, generate_after, generate_fleet
from tmnb.twin.sample.specs import apportion
from tmnb.versions import KubeVersion

TAE = "TopologyAffinityError"
CORDON = "node.kubernetes.io/unschedulable"
TAE_MESSAGE = "Resources cannot be allocated with Topology locality"
EVENT_TTL = timedelta(hours=1)
TRACKED = RESOURCE_MANAGER_FIELDS


@pytest.fixture(scope="module")
def committed() -> Snapshot:
    return load_sample()


@pytest.fixture(scope="module")
def generated() -> Snapshot:
    """A fresh run of the generator, so the hand-worked cases test the code, not the committed file."""
    return generate_fleet()


@pytest.fixture(scope="module")
def committed_after() -> Snapshot:
    return load_sample_after()


@pytest.fixture(scope="module")
def scaled() -> Snapshot:
    return generate_fleet(200)


@pytest.fixture(scope="module", params=["sample", "sample-after", "scaled-200"])
def fleet(request: pytest.FixtureRequest, committed: Snapshot, committed_after: Snapshot, scaled: Snapshot) -> Snapshot:
    return {"sample": committed, "sample-after": committed_after, "scaled-200": scaled}[request.param]


# ------------------------------------------------------------------------------------------- helpers
def q(text: str) -> Decimal:
    return Decimal(parse_quantity(text))


def setting(node: Node, name: str) -> Any:
    return node.kubelet.settings[name].value


def is_static(node: Node) -> bool:
    return setting(node, "cpuManagerPolicy") == "static"


def long_running(pod: Pod) -> list[Container]:
    return [*(c for c in pod.init_containers if c.restart_policy == "Always"), *pod.containers]


def expected_qos(pod: Pod) -> str:
    """The API's rule, written independently of the generator: cpu and memory of every container."""
    containers = [*pod.init_containers, *pod.containers]
    if not any(r in c.requests or r in c.limits for c in containers for r in ("cpu", "memory")):
        return "BestEffort"
    for c in containers:
        for r in ("cpu", "memory"):
            limit = c.limits.get(r)
            if limit is None or q(c.requests.get(r, limit)) != q(limit):
                return "Burstable"
    return "Guaranteed"


def integer_cpus(pod: Pod, c: Container) -> int:
    if pod.qos_class != "Guaranteed":
        return 0
    cpu = q(c.requests.get("cpu", "0"))
    return int(cpu) if cpu == cpu.to_integral_value() else 0


def pod_request(pod: Pod, resource: str) -> Decimal:
    """Scheduler view: max(apps + sidecars, max over init containers of sidecars-so-far + itself)."""

    def amount(c: Container) -> Decimal:
        text = c.requests.get(resource, c.limits.get(resource))
        return q(text) if text else Decimal(0)

    sidecars = peak = Decimal(0)
    for c in pod.init_containers:
        if c.restart_policy == "Always":
            sidecars += amount(c)
            peak = max(peak, sidecars)
        else:
            peak = max(peak, sidecars + amount(c))
    return max(peak, sidecars + sum((amount(c) for c in pod.containers), Decimal(0)))


def created(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


# ------------------------------------------------------------------------------------------- checks
def qos_problems(s: Snapshot) -> list[str]:
    return [f"{p.name}: {p.qos_class} != {expected_qos(p)}" for p in s.pods if p.qos_class != expected_qos(p)]


def cpuset_problems(s: Snapshot) -> list[str]:
    """Static-policy invariants: exclusive sets disjoint, sized as requested, off the reserved CPUs and
    the shared pool, whole cores with full-pcpus-only; pool + exclusive = every CPU (less reserved when strict)."""
    out = []
    pods = {p.uid: p for p in s.pods}
    for node in s.nodes:
        if not is_static(node):
            continue
        every = CPUSet(c.cpu for c in node.cpus)
        reserved = CPUSet.parse(setting(node, "reservedSystemCPUs"))
        options = setting(node, "cpuManagerPolicyOptions")
        strict = options.get("strict-cpu-reservation") == "true"
        pool = CPUSet.parse(node.shared_pool or "")
        cores = defaultdict(set)
        for c in node.cpus:
            cores[c.core].add(c.cpu)
        taken: set[int] = set()
        for a in node.allocations:
            cpus = CPUSet.parse(a.cpuset)
            where = f"{node.name} {a.pod}/{a.container}"
            if not a.exclusive:
                if cpus != pool:
                    out.append(f"{where}: shared container not on the shared pool")
                continue
            spec = next(c for c in long_running(pods[a.pod_uid]) if c.name == a.container)
            if len(cpus) != integer_cpus(pods[a.pod_uid], spec):
                out.append(f"{where}: {len(cpus)} CPUs pinned for a request of {spec.requests.get('cpu')}")
            for problem, bad in (
                ("outside the node", cpus - every),
                ("overlaps another container", cpus & taken),
                ("uses reserved CPUs", cpus & reserved),
                ("overlaps the shared pool", cpus & pool),
            ):
                if bad:
                    out.append(f"{where}: {problem}: {bad}")
            if options.get("full-pcpus-only") == "true" and any(
                not cores[c.core] <= cpus for c in node.cpus if c.cpu in cpus
            ):
                out.append(f"{where}: not whole cores under full-pcpus-only")
            taken |= cpus
        expected = every - reserved if strict else every
        if pool | CPUSet(taken) != expected:
            out.append(f"{node.name}: shared pool + exclusive CPUs != {expected}")
        if not strict and not reserved <= pool:
            out.append(f"{node.name}: reserved CPUs missing from the shared pool")
    return out


def alignment_problems(s: Snapshot) -> list[str]:
    """single-numa-node: every container's pinned CPUs, devices and memory blocks sit on one NUMA node."""
    out = []
    for node in s.nodes:
        if setting(node, "topologyManagerPolicy") != "single-numa-node":
            continue
        for a in node.allocations:
            zones = set(a.numa) if a.exclusive else set()
            zones |= {n for d in a.devices for n in d.numa or ()}
            zones |= {n for b in a.memory for n in b.numa}
            if len(zones) > 1:
                out.append(f"{node.name} {a.pod}/{a.container}: spans NUMA {sorted(zones)}")
    return out


def allocation_problems(s: Snapshot) -> list[str]:
    """Allocations belong to running pods on that node; static nodes list every long-running container."""
    out = []
    pods = {p.uid: p for p in s.pods}
    running = defaultdict(list)
    for p in s.pods:
        if p.phase == "Running":
            running[p.node].append(p)
    for node in s.nodes:
        numa_of = {c.cpu: c.numa for c in node.cpus}
        seen = Counter((a.pod_uid, a.container) for a in node.allocations)
        out += [f"{node.name}: {key} listed twice" for key, n in seen.items() if n > 1]
        for a in node.allocations:
            pod = pods.get(a.pod_uid)
            if pod is None or pod.node != node.name or pod.phase != "Running" or pod.name != a.pod:
                out.append(f"{node.name}: allocation for {a.pod} which does not run here")
            elif a.container not in {c.name for c in long_running(pod)}:
                out.append(f"{node.name}: {a.pod} has no long-running container {a.container}")
            numa = sorted({numa_of[c] for c in CPUSet.parse(a.cpuset)})
            if numa != a.numa:
                out.append(f"{node.name} {a.pod}/{a.container}: numa {a.numa} != zones of its cpuset {numa}")
        if is_static(node):
            out += [f"{node.name}: {pod.name}/{c.name} has no allocation" for pod in running[node.name]
                    for c in long_running(pod) if (pod.uid, c.name) not in seen]  # fmt: skip
    return out


def pinning_problems(s: Snapshot) -> list[str]:
    """Exactly the Guaranteed integer-CPU containers on static nodes get exclusive CPUs."""
    out = []
    pods = {p.uid: p for p in s.pods}
    for node in s.nodes:
        for a in node.allocations:
            pod = pods[a.pod_uid]
            spec = next((c for c in long_running(pod) if c.name == a.container), None)
            want = spec is not None and is_static(node) and integer_cpus(pod, spec) > 0
            if a.exclusive != want:
                out.append(f"{node.name} {a.pod}/{a.container}: exclusive={a.exclusive}, expected {want}")
    return out


def memory_problems(s: Snapshot) -> list[str]:
    """Static memory manager: reservedMemory adds up to the node reservation, blocks only for
    Guaranteed containers, sized as their limits, and within each zone's allocatable memory."""
    out = []
    pods = {p.uid: p for p in s.pods}
    for node in s.nodes:
        blocks = [(a, b) for a in node.allocations for b in a.memory]
        if setting(node, "memoryManagerPolicy") != "Static":
            out += [f"{node.name}: memory block without the Static policy" for _ in blocks]
            continue
        reserved_total = sum(q(e["limits"]["memory"]) for e in setting(node, "reservedMemory"))
        parts = [setting(node, "kubeReserved").get("memory", "0"), setting(node, "systemReserved").get("memory", "0")]
        parts.append(setting(node, "evictionHard").get("memory.available", "0"))
        if reserved_total != sum(q(p) for p in parts):
            out.append(f"{node.name}: reservedMemory {reserved_total} != kube + system + eviction")
        used: Counter[tuple[int, str]] = Counter()
        for a, b in blocks:
            pod = pods[a.pod_uid]
            spec = next(c for c in long_running(pod) if c.name == a.container)
            if pod.qos_class != "Guaranteed" or b.size != int(q(spec.limits[b.type])):
                out.append(f"{node.name} {a.pod}/{a.container}: block {b.type} {b.size} does not match the pod")
            for n in b.numa:
                used[(n, b.type)] += b.size // len(b.numa)
        reserved = {e["numaNode"]: q(e["limits"]["memory"]) for e in setting(node, "reservedMemory")}
        for zone in node.numa:
            hugepages = sum(h.total * int(q(h.size)) for h in zone.hugepages)
            if used[(zone.id, "memory")] > zone.memory_total - reserved.get(zone.id, 0) - hugepages:
                out.append(f"{node.name} NUMA {zone.id}: memory blocks exceed allocatable")
            for h in zone.hugepages:
                if h.total - h.free != used[(zone.id, f"hugepages-{h.size}")] // int(q(h.size)):
                    out.append(f"{node.name} NUMA {zone.id}: hugepages-{h.size} free count disagrees with blocks")
    return out


def device_problems(s: Snapshot) -> list[str]:
    out = []
    pods = {p.uid: p for p in s.pods}
    for node in s.nodes:
        known = {d.id: d for d in node.devices}
        given = Counter(i for a in node.allocations for d in a.devices for i in d.ids)
        out += [f"{node.name}: device {i} given {n} times" for i, n in given.items() if n > 1]
        for a in node.allocations:
            spec = next(c for c in long_running(pods[a.pod_uid]) if c.name == a.container)
            for d in a.devices:
                if len(d.ids) != int(q(spec.limits[d.resource])):
                    out.append(
                        f"{node.name} {a.pod}: {len(d.ids)} x {d.resource} for a limit of {spec.limits[d.resource]}"
                    )
                for i in d.ids:
                    if (
                        i not in known
                        or known[i].resource != d.resource
                        or not set(known[i].numa or []) <= set(d.numa or [])
                    ):
                        out.append(f"{node.name} {a.pod}: device {i} unknown or misfiled")
    return out


def capacity_problems(s: Snapshot) -> list[str]:
    """allocatable <= capacity; the running pods' requests fit allocatable; capacity matches the hardware."""
    out = []
    for node in s.nodes:
        if set(node.allocatable) != set(node.capacity):
            out.append(f"{node.name}: allocatable and capacity list different resources")
        out += [f"{node.name}: allocatable {r} > capacity" for r in node.allocatable
                if r in node.capacity and q(node.allocatable[r]) > q(node.capacity[r])]  # fmt: skip
        running = [p for p in s.pods_on(node.name) if p.phase == "Running"]
        for r, limit in node.allocatable.items():
            total = len(running) if r == "pods" else sum(pod_request(p, r) for p in running)
            if total > q(limit):
                out.append(f"{node.name}: running pods request {total} {r} > allocatable {limit}")
        if q(node.capacity["cpu"]) != len(node.cpus):
            out.append(f"{node.name}: capacity cpu != CPU rows")
        if q(node.capacity["memory"]) != sum(z.memory_total for z in node.numa):
            out.append(f"{node.name}: capacity memory != sum of NUMA MemTotal")
        pages = sum(h.total for z in node.numa for h in z.hugepages if h.size == "1Gi")
        if q(node.capacity["hugepages-1Gi"]) != pages * (1 << 30):
            out.append(f"{node.name}: hugepages-1Gi capacity != NUMA hugepages")
        for resource, n in Counter(d.resource for d in node.devices).items():
            if q(node.capacity[resource]) != n:
                out.append(f"{node.name}: {resource} capacity != devices")
    return out


def rejection_problems(s: Snapshot) -> list[str]:
    """Each pod rejected by the Topology Manager carries the kubelet's texts, and has its Warning event
    unless it is older than the apiserver's event TTL (one hour)."""
    out = []
    warnings = {(e.namespace, e.name): e for e in s.events if e.type == "Warning" and e.kind == "Pod"}
    fresh = created(s.captured_at) - EVENT_TTL
    for p in s.pods:
        if p.reason != TAE:
            continue
        if p.phase != "Failed" or p.message != f"Pod was rejected: {TAE_MESSAGE}" or p.node is None:
            out.append(f"{p.name}: not Failed with the kubelet's message")
        e = warnings.get((p.namespace, p.name))
        if e is None and created(p.created) < fresh:
            continue
        if e is None or (e.reason, e.message, e.component, e.node) != (TAE, TAE_MESSAGE, "kubelet", p.node):
            out.append(f"{p.name}: no matching Warning event from the kubelet on {p.node}")
    names = {(p.namespace, p.name) for p in s.pods}
    out += [
        f"event for unknown pod {e.name}" for e in s.events if e.kind == "Pod" and (e.namespace, e.name) not in names
    ]
    return out


def time_problems(s: Snapshot) -> list[str]:
    out = []
    captured = created(s.captured_at)
    order = [(created(p.created), p.namespace, p.name) for p in s.pods]
    if order != sorted(order):
        out.append("pods are not listed in creation order")
    out += [f"{p.name} created after the capture" for p in s.pods if created(p.created) > captured]
    for e in s.events:
        seen = created(e.last_seen or "")
        if not captured - EVENT_TTL <= seen <= captured:
            out.append(f"event {e.reason} {e.name} outside the last hour")
    return out


def _tolerated(pod: Pod, key: str, value: str, effect: str) -> bool:
    """Kubernetes' rule, written from its docs: an empty effect matches all, an empty key with Exists
    every taint, Exists any value, Equal (or no operator) the same value."""
    return any(
        (t.effect in (None, effect))
        and (not t.key or t.key == key)
        and (t.operator == "Exists" or (t.operator in ("Equal", "") and t.value == value))
        for t in pod.tolerations
    )


def scheduling_problems(s: Snapshot) -> list[str]:
    """Every pod runs where its tolerations let it (the scheduler and the DaemonSet controller both check
    NoSchedule and NoExecute taints); a cordon carries its taint, with the time, and nothing created after
    it was bound there."""
    out = []
    nodes = {n.name: n for n in s.nodes}
    for p in s.pods:
        node = nodes.get(p.node or "")
        if node is None or p.phase == "Pending":
            continue
        for t in node.taints:
            if t.effect != "PreferNoSchedule" and t.key != CORDON and not _tolerated(p, t.key, t.value, t.effect):
                out.append(f"{p.namespace}/{p.name} on {node.name} does not tolerate {t.key}={t.value}:{t.effect}")
        cordon = next((t for t in node.taints if t.key == CORDON), None)
        if cordon is not None and cordon.time_added and created(p.created) >= created(cordon.time_added):
            out.append(f"{p.namespace}/{p.name} created after {node.name} was cordoned, and bound there")
    for n in s.nodes:
        cordons = [t for t in n.taints if t.key == CORDON and t.effect == "NoSchedule" and t.time_added]
        if bool(cordons) != n.unschedulable:
            out.append(f"{n.name}: unschedulable {n.unschedulable} but {len(cordons)} cordon taint(s)")
    return out


CHECKS: dict[str, Callable[[Snapshot], list[str]]] = {
    "qos": qos_problems,
    "cpusets": cpuset_problems,
    "alignment": alignment_problems,
    "allocations": allocation_problems,
    "pinning": pinning_problems,
    "memory": memory_problems,
    "devices": device_problems,
    "capacity": capacity_problems,
    "rejections": rejection_problems,
    "times": time_problems,
    "scheduling": scheduling_problems,
}


# ------------------------------------------------------------------------------------------- the file
def test_committed_sample_equals_a_fresh_generation(committed: Snapshot, generated: Snapshot) -> None:
    assert digest(committed) == digest(generated), (
        "the committed sample is stale: python -m tmnb.twin.sample --out src/tmnb/sources/data/sample-fleet.json"
    )


def test_committed_sample_after_equals_a_fresh_generation(committed_after: Snapshot) -> None:
    assert digest(committed_after) == digest(generate_after()), (
        "the committed sample-after is stale: python -m tmnb.twin.sample --after "
        "--out src/tmnb/sources/data/sample-fleet-after.json"
    )


@pytest.mark.parametrize("data_file", [DATA_FILE, AFTER_FILE], ids=["sample", "sample-after"])
def test_sample_is_package_data_with_its_manifest(data_file: Path) -> None:
    package = Path(tmnb.__file__).parent
    assert data_file.is_relative_to(package) and data_file.exists()
    assert data_file.with_name(data_file.name + ".manifest.json").exists()


def test_the_seed_changes_identities(committed: Snapshot) -> None:
    """Same arguments, same bytes is covered above (another process wrote the file); the seed matters."""
    other = generate_fleet(seed=8)
    assert digest(other) != digest(committed)
    assert [n.name for n in other.nodes] == [n.name for n in committed.nodes]
    assert {p.uid for p in other.pods}.isdisjoint(p.uid for p in committed.pods)


def test_cli_writes_a_loadable_scaled_snapshot(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "fleet.json.gz"
    assert sample.main(["--out", str(out), "--nodes", "12", "--seed", "3"]) == 0
    assert "12 nodes" in capsys.readouterr().out
    assert digest(load(out)) == digest(generate_fleet(12, seed=3))


# ------------------------------------------------------------------------------------------- the published schema
@pytest.mark.parametrize("data_file", [DATA_FILE, AFTER_FILE], ids=["sample", "sample-after"])
def test_committed_file_validates_against_the_published_schema(data_file: Path) -> None:
    """The file as shipped, read as plain JSON: the published schema, not the model that wrote it."""
    assert schema_errors(json.loads(data_file.read_text())) == []


def test_scaled_fleet_validates_against_the_published_schema(scaled: Snapshot, tmp_path: Path) -> None:
    save(scaled, tmp_path / "fleet.json")
    assert schema_errors(json.loads((tmp_path / "fleet.json").read_text())) == []


def break_a_cpuset(data: dict[str, Any]) -> None:
    first(data["nodes"], lambda n: n["allocations"])["allocations"][0]["cpuset"] = "0-3;5"


def invent_a_qos_class(data: dict[str, Any]) -> None:
    data["pods"][0]["qos_class"] = "Premium"


def drop_a_required_field(data: dict[str, Any]) -> None:
    del data["captured_at"]


def add_an_unknown_field(data: dict[str, Any]) -> None:
    data["nodes"][0]["numa"][0]["temperature"] = 41


def count_hugepages_below_zero(data: dict[str, Any]) -> None:
    zone = first((z for n in data["nodes"] for z in n["numa"]), lambda z: z["hugepages"])
    zone["hugepages"][0]["free"] = -1


@pytest.mark.parametrize(
    "breakage", [break_a_cpuset, invent_a_qos_class, drop_a_required_field, add_an_unknown_field,
                 count_hugepages_below_zero],
)  # fmt: skip
def test_the_published_schema_rejects_a_broken_file(breakage: Callable[[dict[str, Any]], None]) -> None:
    data = json.loads(DATA_FILE.read_text())
    breakage(data)
    assert schema_errors(data)


@pytest.mark.parametrize("check", CHECKS)
def test_fleet_is_internally_consistent(fleet: Snapshot, check: str) -> None:
    assert CHECKS[check](fleet) == []


# ------------------------------------------------------------------------------------------- worked by hand
# Expected cpusets worked out on paper from the node's shape and the kubelet's rules, not by any
# simulator: Linux numbers thread 0 of every core first, so core c holds CPUs c and c + cores; the
# Topology Manager takes the narrowest NUMA mask that fits, the lowest one among equals; the static
# CPU manager takes whole cores inside that mask, lowest core first, never from reservedSystemCPUs;
# pods are admitted in creation order and none has left.
def pinned_in_creation_order(s: Snapshot, node: str) -> list[tuple[str, str, list[int]]]:
    """(workload, cpuset, NUMA zones) of the node's exclusive containers, oldest pod first."""
    created_at = {p.uid: (p.created, p.name) for p in s.pods}
    pods = {p.uid: p for p in s.pods}
    pinned = sorted((a for a in s.node(node).allocations if a.exclusive), key=lambda a: created_at[a.pod_uid])
    return [(pods[a.pod_uid].labels["app.kubernetes.io/name"], a.cpuset, a.numa) for a in pinned]


def test_telco_nodes_pin_the_ptp_daemon_to_the_first_free_core(generated: Snapshot) -> None:
    """EPYC NPS4: 64 cores, NUMA n = cores 16n..16n+15, core c = CPUs c, c+64. reservedSystemCPUs
    holds cores 0 and 1 (0-1,64-65). linuxptp (2 CPUs, the oldest Guaranteed pod, a DaemonSet) fits
    NUMA 0, whose first free core is core 2: CPUs 2 and 66, whatever the policy."""
    for node in ("tel-epyc-01", "tel-epyc-02", "tel-epyc-03"):
        assert pinned_in_creation_order(generated, node)[0] == ("ptp-daemon", "2,66", [0]), node


def test_hugepages_push_the_second_dataplane_pod_to_the_other_nic(generated: Snapshot) -> None:
    """tel-epyc-01, single-numa-node per pod: VFs sit on NUMA 1 and 3 only, 16 x 1 GiB hugepages each.
    cu-up (6 CPUs, 4 GiB pages, 1 VF) takes cores 16-18 of NUMA 1; upf (8 CPUs, 8 GiB, 2 VFs) cores
    19-22; the next cu-up cores 23-25. NUMA 1 still has cores 26-31 and 12 VFs but 16 - 4 - 8 - 4 = 0
    hugepages, so the second upf goes to NUMA 3 (cores 48-63): cores 48-51; then cu-up cores 52-54."""
    assert pinned_in_creation_order(generated, "tel-epyc-01")[1:] == [
        ("cu-up", "16-18,80-82", [1]),
        ("upf-dataplane", "19-22,83-86", [1]),
        ("cu-up", "23-25,87-89", [1]),
        ("upf-dataplane", "48-51,112-115", [3]),
        ("cu-up", "52-54,116-118", [3]),
    ]
    upf = first(generated.node("tel-epyc-01").allocations, lambda a: a.cpuset == "48-51,112-115")
    blocks = [(b.type, b.size, b.numa) for b in upf.memory]
    assert blocks == [("memory", 16 << 30, [3]), ("hugepages-1Gi", 8 << 30, [3])]


def test_sixteen_numa_nodes_take_one_solver_each(generated: Snapshot) -> None:
    """spr-snc4-01: 4 sockets x 60 cores, SNC4 gives NUMA n = cores 15n..15n+14, core c = CPUs c, c+240.
    Reserved: cores 0, 60, 120, 180. Each 28-CPU solver fits one NUMA node: NUMA 0 has exactly 14 free
    cores (1-14); NUMA 1 is then the lowest with room (cores 15-28 of 15-29), then NUMA 2 and 3."""
    assert pinned_in_creation_order(generated, "spr-snc4-01") == [
        ("cfd-solver", "1-14,241-254", [0]),
        ("cfd-solver", "15-28,255-268", [1]),
        ("cfd-solver", "30-43,270-283", [2]),
        ("cfd-solver", "45-58,285-298", [3]),
    ]


def test_without_a_topology_policy_the_trainer_spans_both_sockets(generated: Snapshot) -> None:
    """gb200-01: 2 x 72 cores without SMT, reserved CPUs 0 and 72, policy none (no NUMA mask). 128 CPUs:
    neither socket is whole, so single cores in socket order: 1-71 (71), then 73-129 (the other 57)."""
    assert pinned_in_creation_order(generated, "gb200-01") == [("gb200-train", "1-71,73-129", [0, 1])]


def test_single_numa_node_rejects_the_serving_pod_that_cannot_have_cpus_and_gpu_together(generated: Snapshot) -> None:
    """gpu-h100-01, single-numa-node: 2 x 56 cores, core c = CPUs c, c+112, GPUs 0-3 on NUMA 0, 4-7 on
    NUMA 1, reserved cores 0 and 56. The 48-CPU, 4-GPU trainer takes NUMA 0's GPUs and cores 1-24; the
    80-CPU, 2-GPU encoder must go to NUMA 1: cores 57-96; the first 24-CPU, 1-GPU vllm: cores 97-108.
    That leaves NUMA 0 62 CPUs and no GPU, NUMA 1 one GPU and 112 - 2 - 80 - 24 = 6 CPUs: the next
    vllm fits no single NUMA node, so it and each replacement (the sample keeps three) are rejected."""
    assert pinned_in_creation_order(generated, "gpu-h100-01") == [
        ("llm-pretrain", "1-24,113-136", [0]),
        ("embeddings", "57-96,169-208", [1]),
        ("llm-serving", "97-108,209-220", [1]),
    ]
    admitted = max(p.created for p in generated.pods_on("gpu-h100-01") if p.phase == "Running")
    later = [p for p in generated.pods_on("gpu-h100-01") if p.created > admitted]
    assert [(p.labels["app.kubernetes.io/name"], p.phase, p.reason) for p in later] == [
        ("llm-serving", "Failed", TAE)
    ] * 3


def test_best_effort_admits_the_same_pod_with_its_gpu_on_the_other_numa_node(generated: Snapshot) -> None:
    """gpu-h100-02 holds the same first three pods as gpu-h100-01 under best-effort, pod scope. No NUMA
    node has both 24 CPUs and a GPU, so no hint is preferred; the narrowest, lowest that the CPUs fit
    is NUMA 0 (cores 25-36), and the GPU comes from NUMA 1, the only one with a GPU left."""
    pinned = pinned_in_creation_order(generated, "gpu-h100-02")
    assert pinned == [
        ("llm-pretrain", "1-24,113-136", [0]),
        ("embeddings", "57-96,169-208", [1]),
        ("llm-serving", "97-108,209-220", [1]),
        ("llm-serving", "25-36,137-148", [0]),
    ]
    split = first(generated.node("gpu-h100-02").allocations, lambda a: a.cpuset == "25-36,137-148")
    assert [(d.resource, len(d.ids), d.numa) for d in split.devices] == [("nvidia.com/gpu", 1, [1])]


def test_scaled_fleet_has_the_requested_size_and_every_pool(scaled: Snapshot) -> None:
    assert len(scaled.nodes) == 200
    assert len({n.name for n in scaled.nodes}) == 200
    assert {n.labels[POOL_LABEL] for n in scaled.nodes} == set(sample.POOLS)
    assert len(scaled.pods) > 15 * len(scaled.nodes)


def test_a_scaled_fleet_needs_a_node_per_pool() -> None:
    with pytest.raises(InputError, match="at least 7 nodes"):
        generate_fleet(6)


@pytest.mark.parametrize("total", [7, 8, 13, 99, 200, 5000])
def test_pools_are_apportioned_exactly(total: int) -> None:
    counts = apportion(total)
    assert sum(counts.values()) == total and min(counts.values()) >= 1


# ------------------------------------------------------------------------------------------- the issue's list
def hardware(node: Node) -> tuple[Any, ...]:
    return (
        len({c.socket for c in node.cpus}),
        len(node.cpus),
        len(node.numa),
        tuple(sorted(Counter(d.resource for d in node.devices).items())),
    )


def siblings_are_i_and_i_plus_cores(node: Node) -> bool:
    cores = len({c.core for c in node.cpus})
    by_cpu = {c.cpu: c.core for c in node.cpus}
    return all(by_cpu[i] == by_cpu[i + cores] for i in range(cores))


def test_size_and_shapes(committed: Snapshot) -> None:
    assert len(committed.nodes) >= 12
    assert len({hardware(n) for n in committed.nodes}) >= 4
    assert len(committed.pods) >= 150


def test_two_socket_intel_with_smt(committed: Snapshot) -> None:
    nodes = [
        n
        for n in committed.nodes
        if hardware(n)[:3] == (2, 64, 2)
        and n.labels["feature.node.kubernetes.io/cpu-model.vendor_id"] == "Intel"
        and siblings_are_i_and_i_plus_cores(n)
        and {z.distance_row() for z in n.numa} == {(10, 21), (21, 10)}
    ]
    assert nodes


def test_amd_epyc_nps4(committed: Snapshot) -> None:
    nodes = [
        n
        for n in committed.nodes
        if n.labels["feature.node.kubernetes.io/cpu-model.vendor_id"] == "AMD"
        and hardware(n)[0] == 1
        and len({c.numa for c in n.cpus}) == 4
        and n.numa[0].distances == {0: 10, 1: 11, 2: 12, 3: 12}
    ]
    assert nodes


def test_eight_gpu_node_with_numa_local_devices(committed: Snapshot) -> None:
    def ok(n: Node) -> bool:
        gpus = [d for d in n.devices if d.resource == "nvidia.com/gpu"]
        vfs = [d for d in n.devices if "sriov" in d.resource]
        return (
            len(n.numa) == 2
            and [d.numa for d in gpus] == [[0]] * 4 + [[1]] * 4
            and {tuple(d.numa or ()) for d in vfs} == {(0,), (1,)}
            and all(d.id.startswith("0000:") for d in vfs)
        )

    gpu_nodes = [n for n in committed.nodes if ok(n)]
    assert gpu_nodes
    holders = [a for n in gpu_nodes for a in n.allocations if any(d.resource == "nvidia.com/gpu" for d in a.devices)]
    assert holders, "no running GPU pods"


def test_node_with_more_than_eight_numa_nodes_is_configured_to_start(committed: Snapshot) -> None:
    big = [n for n in committed.nodes if len(n.numa) > 8]
    assert big
    for node in big:
        limit = int(setting(node, "topologyManagerPolicyOptions").get("max-allowable-numa-nodes", 8))
        assert setting(node, "topologyManagerPolicy") == "none" or limit >= len(node.numa)
        with pytest.raises(ConfigRejected, match="unsupported on machines with more than 8 NUMA Nodes"):
            new_topology_manager("restricted", "container", {}, [z.id for z in node.numa])


def test_every_policy_scope_and_manager_mode_is_present(committed: Snapshot) -> None:
    values = defaultdict(set)
    for node in committed.nodes:
        for name in ("topologyManagerPolicy", "topologyManagerScope", "cpuManagerPolicy", "memoryManagerPolicy"):
            values[name].add(setting(node, name))
    assert values["topologyManagerPolicy"] == {"none", "best-effort", "restricted", "single-numa-node"}
    assert values["topologyManagerScope"] == {"container", "pod"}
    assert values["cpuManagerPolicy"] == {"none", "static"}
    assert values["memoryManagerPolicy"] == {"None", "Static"}


def test_settings_carry_provenance(fleet: Snapshot) -> None:
    for node in fleet.nodes:
        assert set(node.kubelet.settings) == set(TRACKED)
        for name, s in node.kubelet.settings.items():
            if s.source == "file":
                assert s.detail == node.kubelet.config_file
            if s.source == "dropin":
                assert node.kubelet.config_dir and (s.detail or "").startswith(node.kubelet.config_dir)
            if s.source == "configz":
                assert node.issues and not node.kubelet.flags, name
    sources = {s.source for n in fleet.nodes for s in n.kubelet.settings.values()}
    assert sources == {"default", "file", "dropin", "flag", "configz"}


def test_a_flag_overrides_the_config_file(committed: Snapshot) -> None:
    found = [
        (node, name, s)
        for node in committed.nodes
        for name, s in node.kubelet.settings.items()
        if s.source == "flag" and any(layer.source == "file" and layer.value != s.value for layer in s.overridden)
    ]
    assert found
    for node, _, s in found:
        assert f"{s.detail}={s.value}" in node.kubelet.flags


def test_settings_are_what_the_nodes_own_files_and_flags_say(fleet: Snapshot) -> None:
    """The command line parses as the kubelet's; it names the config file and drop-in directory the
    settings cite, and a setting decided by a flag holds that flag's value. Every default that lost
    to a layer is the kubelet's own default."""
    for node in fleet.nodes:
        version = KubeVersion.parse(node.versions.kubelet or "")
        defaults = defaults_for(version)
        for name, s in node.kubelet.settings.items():
            beaten = [layer for layer in s.overridden if layer.source == "default"]
            assert all(layer.value == defaults[name] for layer in beaten), (node.name, name)
        if not node.kubelet.flags:
            continue
        flags = parse_kubelet_args(node.kubelet.flags, source=node.name)
        assert (flags.config_file, flags.config_dir) == (node.kubelet.config_file, node.kubelet.config_dir)
        for name, s in node.kubelet.settings.items():
            if s.source == "flag":
                assert (flags.field_flags[name], flags.config_fields[name]) == (s.detail, s.value)


def test_one_kubelet_behind_the_control_plane_and_none_ahead(committed: Snapshot) -> None:
    server = KubeVersion.parse(committed.cluster.server_version or "")
    kubelets = [KubeVersion.parse(n.versions.kubelet or "") for n in committed.nodes]
    assert any(k.minor < server.minor for k in kubelets)
    assert all(k <= server for k in kubelets)
    assert all(n.versions.container_runtime and n.versions.kernel for n in committed.nodes)
    assert {n.kubelet.kubeadm_managed for n in committed.nodes} == {True, False}


def test_node_metadata_looks_like_a_real_cluster(fleet: Snapshot) -> None:
    for node in fleet.nodes:
        assert node.labels["kubernetes.io/hostname"] == node.name
        for key in ("node.kubernetes.io/instance-type", POOL_LABEL, "kubernetes.io/arch", "kubernetes.io/os"):
            assert node.labels[key]
        for zone in node.numa:
            assert CPUSet.parse(zone.cpus) == CPUSet(c.cpu for c in node.cpus if c.numa == zone.id)
            assert zone.distances[zone.id] == 10 and sorted(zone.distances) == sorted(o.id for o in node.numa)
            assert all(zone.distances[o.id] == o.distances[zone.id] for o in node.numa)


def test_workloads_cover_the_cases_the_tools_must_handle(committed: Snapshot) -> None:
    pods = committed.pods
    assert {p.qos_class for p in pods} == {"Guaranteed", "Burstable", "BestEffort"}
    assert {"kube-system", "monitoring", "payments", "ml-training", "telco-dpdk"} <= {p.namespace for p in pods}
    owners = {(p.owner.kind, p.owner.controller_kind) for p in pods if p.owner}
    assert {("ReplicaSet", "Deployment"), ("DaemonSet", None), ("StatefulSet", None), ("Job", None)} <= owners
    assert any(c.restart_policy == "Always" for p in pods for c in p.init_containers)
    pinned = [a for n in committed.nodes for a in n.allocations if a.exclusive]
    assert len(pinned) >= 10


def test_daemonsets_run_once_per_node(fleet: Snapshot) -> None:
    per = Counter((p.owner.name, p.node) for p in fleet.pods if p.owner and p.owner.kind == "DaemonSet")
    assert per and max(per.values()) == 1
    proxies = {p.node for p in fleet.pods if p.owner and p.owner.name == "kube-proxy"}
    assert proxies == {n.name for n in fleet.nodes}


def test_pdb_selects_exactly_its_deployment(fleet: Snapshot) -> None:
    assert fleet.disruption_budgets
    for pdb in fleet.disruption_budgets:
        selected = {
            p.name for p in fleet.pods if p.namespace == pdb.namespace and pdb.selector.items() <= p.labels.items()
        }
        owners = {p.owner.controller_kind for p in fleet.pods if p.name in selected and p.owner}
        deployment = {p.owner.controller_name for p in fleet.pods if p.name in selected and p.owner}
        assert selected and owners == {"Deployment"} and len(deployment) == 1
        members = {p.name for p in fleet.pods if p.owner and p.owner.controller_name in deployment}
        assert selected == members


def test_rejected_pods_flap_and_are_explained(committed: Snapshot) -> None:
    failed = [p for p in committed.pods if p.phase == "Failed" and p.reason == TAE]
    assert failed
    warned = {e.name for e in committed.events if e.reason == TAE}
    assert all(p.name in warned for p in failed), "every rejected pod of the sample has its event"
    assert max(Counter(p.owner.name for p in failed if p.owner).values()) >= 2, "no replica flapping"
    node = committed.node(failed[0].node or "")
    assert setting(node, "topologyManagerPolicy") in ("restricted", "single-numa-node")


# ------------------------------------------------------------------------------------------- the checks can fail
def mutate(s: Snapshot, change: Callable[[dict[str, Any]], None]) -> Snapshot:
    data = copy.deepcopy(to_dict(s))
    change(data)
    return from_dict(data)


def first(items: Iterable[Any], test: Callable[[Any], bool]) -> Any:
    return next(i for i in items if test(i))


def overlap_two_exclusive_sets(data: dict[str, Any]) -> None:
    node = first(data["nodes"], lambda n: sum(a["exclusive"] for a in n["allocations"]) >= 2)
    a, b = [a for a in node["allocations"] if a["exclusive"]][:2]
    b["cpuset"] = a["cpuset"]


def flip_a_qos_class(data: dict[str, Any]) -> None:
    first(data["pods"], lambda p: p["qos_class"] == "Guaranteed")["qos_class"] = "Burstable"


def drop_the_warning_events(data: dict[str, Any]) -> None:
    data["events"] = [e for e in data["events"] if e["type"] != "Warning"]


def inflate_allocatable(data: dict[str, Any]) -> None:
    data["nodes"][0]["allocatable"]["cpu"] = str(int(data["nodes"][0]["capacity"]["cpu"]) + 1)


def shrink_reserved_memory(data: dict[str, Any]) -> None:
    node = first(data["nodes"], lambda n: n["kubelet"]["settings"]["memoryManagerPolicy"]["value"] == "Static")
    node["kubelet"]["settings"]["reservedMemory"]["value"][0]["limits"]["memory"] = "1Mi"


def give_a_device_twice(data: dict[str, Any]) -> None:
    node = first(data["nodes"], lambda n: sum(bool(a["devices"]) for a in n["allocations"]) >= 2)
    a, b = [a for a in node["allocations"] if a["devices"]][:2]
    b["devices"][0]["ids"][0] = a["devices"][0]["ids"][0]


def untolerate_the_gpu_taint(data: dict[str, Any]) -> None:
    gpu = {n["name"] for n in data["nodes"] if n["labels"].get(POOL_LABEL) == "gpu"}
    first(data["pods"], lambda p: p["node"] in gpu and p["phase"] == "Running")["tolerations"] = []


def uncordon_without_the_taint(data: dict[str, Any]) -> None:
    first(data["nodes"], lambda n: n["unschedulable"])["unschedulable"] = False


def pin_a_shared_container(data: dict[str, Any]) -> None:
    node = first(data["nodes"], lambda n: n["shared_pool"] and any(not a["exclusive"] for a in n["allocations"]))
    first(node["allocations"], lambda a: not a["exclusive"])["exclusive"] = True


@pytest.mark.parametrize(
    ("check", "breakage"),
    [
        ("cpusets", overlap_two_exclusive_sets),
        ("qos", flip_a_qos_class),
        ("rejections", drop_the_warning_events),
        ("capacity", inflate_allocatable),
        ("memory", shrink_reserved_memory),
        ("devices", give_a_device_twice),
        ("pinning", pin_a_shared_container),
        ("scheduling", untolerate_the_gpu_taint),
        ("scheduling", uncordon_without_the_taint),
    ],
)
def test_checks_catch_a_broken_fleet(committed: Snapshot, check: str, breakage: Callable[[dict], None]) -> None:
    assert CHECKS[check](mutate(committed, breakage))


def test_pools_are_tainted_as_their_owners_set_them_and_gen_icx_02_is_cordoned(committed: Snapshot) -> None:
    taints = {n.name: {(t.key, t.value, t.effect) for t in n.taints} for n in committed.nodes}
    assert taints["gpu-h100-01"] == taints["gpu-h100-02"] == {("nvidia.com/gpu", "present", "NoSchedule")}
    assert taints["gb200-01"] == {("nvidia.com/gpu", "present", "NoSchedule")}
    assert all(taints[f"lat-icx-0{i}"] == {("dedicated", "latency", "NoSchedule")} for i in (1, 2, 3))
    assert taints["big-epyc-01"] == {("dedicated", "bigmem", "PreferNoSchedule")}  # a preference, not a wall
    assert taints["gen-icx-01"] == taints["gen-icx-03"] == set()
    cordoned = [n.name for n in committed.nodes if n.unschedulable]
    assert cordoned == ["gen-icx-02"] and taints["gen-icx-02"] == {(CORDON, "", "NoSchedule")}
    (cordon,) = committed.node("gen-icx-02").taints
    assert cordon.time_added is not None and created(cordon.time_added) < created(committed.captured_at)


def test_pod_names_are_unique_per_namespace_at_scale():
    fleet = generate_fleet(1500)
    names = [(p.namespace, p.name) for p in fleet.pods]
    assert len(names) == len(set(names))
