"""cpu_manager_state, memory_manager_state and the device manager checkpoint."""

from __future__ import annotations

from pathlib import Path

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.state_files import (
    parse_cpu_manager_state,
    parse_device_checkpoint,
    parse_memory_manager_state,
)

STATE = Path(__file__).parents[1] / "fixtures" / "node" / "state"


def read(name: str) -> str:
    return (STATE / name).read_text()


def test_cpu_state_v2_static() -> None:
    state = parse_cpu_manager_state(read("cpu_manager_state.v2"))
    assert state.version == "v2" and state.policy_name == "static"
    assert state.entries == {"8c1f5a1e-3f0b-4d2a-9a7e-2b6f1c3d4e5f": {"dpdk-fwd": CPUSet.parse("2-3,34-35")}}
    assert state.default_cpuset | state.assigned() == CPUSet.parse("0-61")
    assert str(state.default_cpuset) == "0-1,4-33,36-61"


def test_cpu_state_pretty_printed_and_none_policy() -> None:
    state = parse_cpu_manager_state(read("cpu_manager_state.jq.json"))
    assert state.entries["d6a85864-cf3f-45a3-baee-a9b3d5c2c4bc"] == {"driver": CPUSet({128}), "registrar": CPUSet({1})}
    none = parse_cpu_manager_state(read("cpu_manager_state.none"))
    assert (none.policy_name, none.default_cpuset, none.entries, none.checksum) == ("none", CPUSet(), {}, 1353318690)


def test_cpu_state_v1_keys_by_container_id() -> None:
    state = parse_cpu_manager_state(read("cpu_manager_state.v1"))
    assert state.version == "v1" and state.entries == {}
    assert list(state.entries_v1.values()) == [CPUSet({2, 3})]
    assert state.assigned() == CPUSet({2, 3})


def test_cpu_state_tolerates_unknown_keys() -> None:
    text = '{"policyName":"static","defaultCpuSet":"0-3","entries":{},"podEntries":{"x":{}},"checksum":0}'
    assert parse_cpu_manager_state(text).default_cpuset == CPUSet.parse("0-3")


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        (read("cpu_manager_state.truncated"), "truncated or malformed JSON", None),
        ('{"policyName":"static","checksum":1}', "missing key 'defaultCpuSet'", None),
        ('{"policyName":"static","defaultCpuSet":"0-x","checksum":1}', "invalid CPU list", "defaultCpuSet"),
        ('{"policyName":"static","defaultCpuSet":"","checksum":-1}', r"integer \(uint64\) between 0 and", "checksum"),
        ('{"policyName":1,"defaultCpuSet":"","checksum":1}', "expected a string", "policyName"),
        (
            '{"policyName":"static","defaultCpuSet":"","entries":{"p":{"c":"1-"}},"checksum":1}',
            "invalid CPU list",
            "entries.p.c",
        ),
        ('{"policyName":"static","defaultCpuSet":"","entries":[],"checksum":1}', "JSON object", "entries"),
        ("[]", "JSON object", "$"),
    ],
)
def test_malformed_cpu_state(text: str, message: str, where: str | None) -> None:
    with pytest.raises(InputError, match=message) as err:
        parse_cpu_manager_state(text, source="/var/lib/kubelet/cpu_manager_state")
    assert err.value.source == "/var/lib/kubelet/cpu_manager_state"
    assert err.value.where == where


def test_memory_state_static_cells() -> None:
    state = parse_memory_manager_state(read("memory_manager_state"))
    assert state.policy_name == "Static" and sorted(state.machine_state) == [0, 1]
    node0 = state.machine_state[0]
    assert node0.cells == (0,) and node0.number_of_assignments == 1
    mem = node0.memory_map["memory"]
    assert mem.allocatable == mem.total - mem.system_reserved and mem.free == mem.allocatable - mem.reserved
    (block,) = state.entries["fa9bdd38-6df9-4cf9-aa67-8c4814da37a8"]["app"]
    assert (block.numa_affinity, block.type, block.size) == ((0,), "memory", 4294967296)


def test_memory_state_docs_spelling_nodes_and_extra_keys() -> None:
    state = parse_memory_manager_state(read("memory_manager_state.docs.json"))
    assert state.machine_state[1].cells == (0, 1)
    assert parse_memory_manager_state(read("memory_manager_state.none")).machine_state == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (read("memory_manager_state")[:300], "truncated or malformed JSON"),
        ('{"policyName":"Static","machineState":{"zero":{}},"checksum":1}', "NUMA node id as key"),
        ('{"policyName":"Static","machineState":{"0":{"memoryMap":{}}},"checksum":1}', "under 'cells'"),
        (
            '{"policyName":"Static","machineState":{"0":{"memoryMap":{"memory":{"total":1}},"cells":[0]}},"checksum":1}',
            "missing key 'systemReserved'",
        ),
        ('{"policyName":"Static","entries":{"p":{"c":{}}},"checksum":1}', "list of memory blocks"),
        ('{"policyName":"Static","entries":{"p":{"c":[{"type":"memory","size":1}]}},"checksum":1}', "numaAffinity"),
        ('{"machineState":{},"checksum":1}', "missing key 'policyName'"),
    ],
)
def test_malformed_memory_state(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_memory_manager_state(text)


def test_device_checkpoint_numa_keys_and_no_topology() -> None:
    cp = parse_device_checkpoint(read("kubelet_internal_checkpoint"))
    assert cp.version == "v2" and cp.checksum == 2231718384
    gpu, nic, fpga = cp.entries
    assert (gpu.pod_uid, gpu.container, gpu.resource) == (
        "6b1c0c2e-8a7e-4f38-9d7b-2a9a3c1e5f10",
        "trainer",
        "nvidia.com/gpu",
    )
    assert gpu.devices == {1: ("GPU-7d8429d5-531d-d6a6-6510-3b662081a75a",)}
    assert nic.devices == {1: ("0000:af:02.1",)}
    assert fpga.devices == {-1: ("fpga-3",)}  # no topology
    assert cp.registered["intel.com/sriov_netdevice"] == ("0000:af:02.0", "0000:af:02.1", "0000:3b:02.0")


def test_device_checkpoint_null_entries_boot_id_and_v1() -> None:
    empty = parse_device_checkpoint(read("kubelet_internal_checkpoint.empty"))
    assert empty.entries == () and list(empty.registered) == ["nvidia.com/gpu"]
    v1 = parse_device_checkpoint(read("kubelet_internal_checkpoint.v1"))
    assert v1.version == "v1" and v1.entries[0].devices == {0: ("GPU-7d8429d5-531d-d6a6-6510-3b662081a75a",)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (read("kubelet_internal_checkpoint")[:500], "truncated or malformed JSON"),
        ('{"Checksum":1}', "missing key 'Data'"),
        ('{"Data":{"PodDeviceEntries":{}},"Checksum":1}', "list or null"),
        (
            '{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":{"one":[]}}]},"Checksum":1}',
            "NUMA id key",
        ),
        (
            '{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":{"0":"d"}}]},"Checksum":1}',
            "list of device IDs",
        ),
        (
            '{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","DeviceIDs":{}}]},"Checksum":1}',
            "missing key 'ResourceName'",
        ),
        (
            '{"Data":{"PodDeviceEntries":[{"PodUID":"p","ContainerName":"c","ResourceName":"r","DeviceIDs":"d"}]},"Checksum":1}',
            "map of NUMA id",
        ),
        ('{"Data":{"RegisteredDevices":{"r":"d"}},"Checksum":1}', "list of device IDs"),
    ],
)
def test_malformed_device_checkpoint(text: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_device_checkpoint(text)


@pytest.mark.parametrize(
    ("text", "where", "expected"),
    [
        ('{"policyName":"static","defaultCpuSet":"0-3","checksum":' + "9" * 5000 + "}", "checksum", "5000-digit"),
        ('{"policyName":"static","defaultCpuSet":"0-3","checksum":' + "1" + "0" * 400 + "}", "checksum", "between"),
        ('{"policyName":"static","defaultCpuSet":"0-3","checksum":-1}', "checksum", "between 0 and"),
    ],
)
def test_cpu_state_numbers_out_of_uint64(text: str, where: str, expected: str) -> None:
    with pytest.raises(InputError) as err:
        parse_cpu_manager_state(text, source="cpu_manager_state")
    assert err.value.where == where
    assert expected in str(err.value)


def test_memory_state_size_beyond_uint64_names_the_path() -> None:
    big = str(2**64)
    text = (
        '{"policyName":"Static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":'
        f'{{"total":{big},"systemReserved":0,"allocatable":0,"reserved":0,"free":0}}}},"cells":[0]}}}},"checksum":0}}'
    )
    with pytest.raises(InputError) as err:
        parse_memory_manager_state(text, source="memory_manager_state")
    assert err.value.where == "machineState.0.memoryMap.memory.total"
    assert f"between 0 and {2**64 - 1}, got {big}" in str(err.value)
