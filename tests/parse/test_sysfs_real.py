"""sysfs and lscpu as real kernels write them, checked against lscpu on util-linux's machine dumps.

The dumps (tests/fixtures/node/util-linux, see its README) are whole /sys trees of real machines;
the expected lscpu output beside each says what is on the machine. A node root built from a dump
must be read whole, as the kubelet (through cadvisor) would see it, with what is missing as issues.
"""

from __future__ import annotations

import tarfile
from pathlib import Path

import pytest

from factories import layered_node, snapshot
from lscpu_tables import Row, table
from tmnb.cpuset import CPUSet
from tmnb.parse.lscpu import parse_lscpu_summary
from tmnb.parse.sysfs import read_numa_nodes
from tmnb.parse.sysfs_cpu import online_cpus, present_cpus
from tmnb.snapshot import from_dict, to_dict
from tmnb.sources.node_render import CPU_SYSFS, NODE_SYSFS, write_node_root
from tmnb.sources.node_root import read_node_root

DUMPS = Path(__file__).parents[1] / "fixtures" / "node" / "util-linux"


def dump(name: str, tmp_path: Path) -> Path:
    with tarfile.open(DUMPS / f"{name}.tar.gz") as tar:
        tar.extractall(tmp_path, filter="data")
    return tmp_path / name


def numa_nodes(rows: list[Row]) -> dict[int, CPUSet]:
    return {n: CPUSet(r.cpu for r in rows if r.numa == n) for n in sorted({r.numa for r in rows} - {None})}


def lscpu(name: str):
    """(summary, -p table, -p -y table) of the expected output."""
    parts = [p for p in (DUMPS / f"lscpu-{name}").read_text().split("\n\n") if p.strip()]
    summary = parse_lscpu_summary("Architecture: ppc64\n" + parts[0], source=name)
    return summary, *(table(p) for p in parts[1:])


def to_dict_of(node):
    return to_dict(snapshot([node], []))


def _issues(node, source: str) -> list[str]:
    return [i.message for i in node.issues if i.source == source]


# ---------------------------------------------------------------------------------------------
# util-linux dumps read whole, agreeing with lscpu


def test_power7_package_minus_one_and_cpumap_only(tmp_path: Path) -> None:
    node = read_node_root(dump("ppc64-POWER7", tmp_path), name="p7")
    summary, logical, physical = lscpu("ppc64-POWER7")
    assert {z.id: CPUSet.parse(z.cpus) for z in node.numa} == summary.numa_nodes == {0: CPUSet(range(16))}
    # physical_package_id is -1 on POWER: the kubelet (cadvisor) sees one socket numbered -1, lscpu -y prints "-"
    assert {c.socket for c in node.cpus} == {-1} and {c.socket for c in physical} == {None}
    assert [sorted(c.cpu for c in node.cpus if c.core == core) for core in (0, 4, 8, 12)] == [
        list(range(k, k + 4)) for k in (0, 4, 8, 12)
    ]
    assert {c.cpu for c in node.cpus} == {c.cpu for c in logical}
    # no meminfo and no distance on this kernel: memory 0 and no distances, as cadvisor reads them
    assert node.numa[0].memory_total == 0 and node.numa[0].distances == {}
    assert any("no meminfo" in m for m in _issues(node, "numa"))
    assert from_dict(to_dict_of(node)).nodes[0].cpus[0].socket == -1  # the snapshot accepts it


def test_s390_without_node_directory_and_offline_cpus(tmp_path: Path) -> None:
    root = dump("s390-lpar", tmp_path)
    summary, logical, _ = lscpu("s390-lpar")
    node = read_node_root(root, name="lpar")
    cpu_root = root / CPU_SYSFS
    online = online_cpus(cpu_root, present_cpus(cpu_root))
    assert online == summary.online and present_cpus(cpu_root) - online == summary.offline == CPUSet({0, 6, 7})
    # no sys/devices/system/node: one zone per physical package (cadvisor getCPUTopology); -1 counts as 0
    assert [(z.id, CPUSet.parse(z.cpus)) for z in node.numa] == [(0, summary.online)]
    assert any("getCPUTopology" in m and "-1" in m for m in _issues(node, "numa"))
    assert {c.cpu for c in node.cpus} == {c.cpu for c in logical}


def test_old_kernel_without_online_file_or_core_id(tmp_path: Path) -> None:
    root = dump("x86_64-necem14", tmp_path)
    summary, _ = lscpu("x86_64-necem14")
    assert not (root / CPU_SYSFS / "online").exists()
    assert online_cpus(root / CPU_SYSFS, present_cpus(root / CPU_SYSFS)) == CPUSet({0, 1})
    node = read_node_root(root, name="em14")
    assert {z.id: CPUSet.parse(z.cpus) for z in node.numa} == summary.numa_nodes
    # cadvisor's getCoresInfo skips CPUs without core_id: the kubelet does not know them; said, not hidden
    assert node.cpus == []
    assert any("no core_id" in m and "0-1" in m for m in _issues(node, "cpu topology"))


# ---------------------------------------------------------------------------------------------
# kernels that differ from the tidy x86 layout


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return write_node_root(layered_node(), tmp_path / "w1")


def test_offline_cpus_come_from_present_not_possible(root: Path) -> None:
    cpu = root / CPU_SYSFS
    (cpu / "possible").write_text("0-255\n")
    (cpu / "present").write_text("0-15\n")
    (cpu / "online").write_text("0-14\n")
    node = read_node_root(root, name="w1")
    assert [c.cpu for c in node.cpus if not c.online] == [15]
    assert len(node.cpus) == 16


def test_without_cpu_online_each_cpus_own_online_file_says(root: Path) -> None:
    cpu = root / CPU_SYSFS
    (cpu / "online").unlink()
    (cpu / "cpu3").mkdir(exist_ok=True)
    (cpu / "cpu3" / "online").write_text("0\n")
    (cpu / "cpu4" / "online").write_text("1\n")
    node = read_node_root(root, name="w1")
    assert [c.cpu for c in node.cpus if not c.online] == [3]
    assert CPUSet(c.cpu for c in node.cpus if c.online) == CPUSet(range(16)) - {3}


def test_node_with_only_cpumap(root: Path) -> None:
    node1 = root / NODE_SYSFS / "node1"
    (node1 / "cpulist").unlink()
    (node1 / "cpumap").write_text("0000f0f0\n")
    node = read_node_root(root, name="w1")
    assert node.numa[1].cpus == "4-7,12-15"
    assert not _issues(node, "numa")


def test_numa_node_ids_above_63_are_kept(tmp_path: Path) -> None:
    # POWER9 numbers its GPU memory nodes 252-255; ia64 SGI boxes had up to 128 nodes
    base = tmp_path / "node"
    for n in (0, 8, 252, 253, 254, 255):
        (base / f"node{n}").mkdir(parents=True)
        (base / f"node{n}" / "cpulist").write_text("0-3\n" if n == 0 else "4-7\n" if n == 8 else "\n")
        (base / f"node{n}" / "meminfo").write_text(f"Node {n} MemTotal: 1024 kB\nNode {n} MemFree: 512 kB\n")
    (base / "online").write_text("0,8,252-255\n")
    nodes = read_numa_nodes(base, report=lambda err: None)
    assert [n.id for n in nodes] == [0, 8, 252, 253, 254, 255]
    assert nodes[2].cpus == CPUSet() and nodes[2].memory_total == 1 << 20


def test_snapshot_holds_numa_ids_above_63_and_sparse_distances(root: Path) -> None:
    doc = to_dict_of(read_node_root(root, name="w1"))
    zone = doc["nodes"][0]["numa"][1]
    doc["nodes"][0]["numa"][1] = {**zone, "id": 252, "distances": {"0": 21, "252": 10}}
    doc["nodes"][0]["numa"][0]["distances"] = {"0": 10, "252": 21}
    back = from_dict(doc).nodes[0].numa
    assert [z.id for z in back] == [0, 252] and back[1].distances == {0: 21, 252: 10}
    assert back[1].distance_row() == (21, 10)


def test_legacy_distance_lists_are_keyed_by_zone_id_on_load() -> None:
    from factories import node as make_node

    doc = to_dict(snapshot([make_node("a")], []))
    for zone, row in zip(doc["nodes"][0]["numa"], ([10, 21], [21, 10]), strict=True):
        zone["distances"] = row
    assert [z.distances for z in from_dict(doc).nodes[0].numa] == [{0: 10, 1: 21}, {0: 21, 1: 10}]


# ---------------------------------------------------------------------------------------------
# lscpu as util-linux prints it


def test_strided_numa_lists_of_a_sparse_machine() -> None:
    summary, logical, _ = lscpu("x86_64-64cpu")
    assert summary.numa_nodes == {
        0: CPUSet(range(0, 63, 2)),
        2: CPUSet(range(1, 62, 4)),
        3: CPUSet(range(3, 64, 4)),
    }
    assert numa_nodes(logical) == summary.numa_nodes


def test_heterogeneous_arm_counts_every_model_block() -> None:
    summary, *_ = lscpu("arm-A510-A710-A715-X3")
    assert [m.name for m in summary.models] == ["Cortex-A510", "Cortex-A710", "Cortex-A715", "Cortex-X3"]
    assert [m.cores_per_socket for m in summary.models] == [3, 2, 2, 1]
    assert (summary.sockets, summary.cores_per_socket, summary.threads_per_core) == (1, 8, 1)
    assert summary.sockets * summary.cores_per_socket * summary.threads_per_core == summary.cpus == 8


def test_sandbox_nrt_costs_name_the_real_node_ids(tmp_path: Path) -> None:
    # a guest with NUMA nodes 0 and 2 (node 1 absent): costs must name node-2, not node-1
    from factories import node as make_node
    from tmnb.snapshot import NumaZone
    from tmnb.twin.sandbox.cluster import Cluster

    base = make_node("w1")
    zones = [
        NumaZone(id=0, cpus=base.numa[0].cpus, memory_total=1 << 30, distances={0: 10, 2: 20}),
        NumaZone(id=2, cpus=base.numa[1].cpus, memory_total=1 << 30, distances={0: 20, 2: 10}),
    ]
    cpus = [c.__class__(cpu=c.cpu, core=c.core, socket=c.socket, numa=2 if c.numa == 1 else 0) for c in base.cpus]
    w1 = base.__class__(**{**base.__dict__, "numa": zones, "cpus": cpus})
    (nrt,) = Cluster(snapshot([w1], []), None).nrt_objects()
    assert [(z["name"], {c["name"]: c["value"] for c in z["costs"]}) for z in nrt["zones"]] == [
        ("node-0", {"node-0": 10, "node-2": 20}),
        ("node-2", {"node-0": 20, "node-2": 10}),
    ]


def test_prefer_closest_on_sparse_node_ids_follows_the_kubelet() -> None:
    # NUMADistances.CalculateAverageFor indexes the sysfs row (one entry per online node) by node id
    from tmnb.errors import ConfigRejected
    from tmnb.kubelet.topologymanager.topology_manager import new_topology_manager

    options = {"prefer-closest-numa-nodes": "true"}
    rows = {0: (10, 20), 2: (20, 10)}
    with pytest.raises(ConfigRejected, match=r"would panic \(runtime error: index out of range \[2\] with length 2\)"):
        new_topology_manager("best-effort", "container", options, [0, 2], rows)
    assert new_topology_manager("best-effort", "container", {}, [0, 2], rows).scope.name == "container"
    assert new_topology_manager("restricted", "pod", options, [0, 1], {0: (10, 20), 1: (20, 10)}).scope.name == "pod"
