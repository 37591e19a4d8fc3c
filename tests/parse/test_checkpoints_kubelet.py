"""The kubelet's own test checkpoints, read with the values the kubelet restores from them.

The file contents are the ones the kubelet's TestCheckpointStateRestore cases write
(pkg/kubelet/cm/cpumanager/state/state_checkpoint_test.go and
pkg/kubelet/cm/memorymanager/state/state_checkpoint_test.go in kubernetes/kubernetes); the expected
values are what those cases assert the restored state holds, or the error they expect. Where the
kubelet's case puts deliberately wrong values in the legacy fields beside ``data``, the payload wins.
"""

from __future__ import annotations

import pytest

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.parse.gojson import fold, string_checksum
from tmnb.parse.state_files import (
    CheckpointMemoryBlock,
    CheckpointMemoryTable,
    parse_cpu_manager_state,
    parse_device_checkpoint,
    parse_memory_manager_state,
)

CPU_DATA_STATIC = (
    r"{\"policyName\":\"static\",\"defaultCPUSet\":\"7-9\","
    r"\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":\"1-3\"}}}"
)
CPU_LEGACY = (
    '"policyName": "static", "defaultCPUSet": "7-9", "entries": {"pod": {"container1": "4-6", "container2": "1-3"}}'
)


def cpu(text: str):
    return parse_cpu_manager_state(text, source="/var/lib/kubelet/cpu_manager_state")


def memory(text: str):
    return parse_memory_manager_state(text, source="/var/lib/kubelet/memory_manager_state")


# ---------------------------------------------------------------------------------------------
# cpu_manager_state v4: the data payload is authoritative


def test_v4_restores_the_payload_not_the_corrupted_legacy_copy() -> None:
    # "Restore default CPU set": the legacy fields say policy "other" and 1-9 with a bad checksum.
    state = cpu(
        '{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234,'
        r' "data": "{\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\"}", "dataChecksum": 657950972}'
    )
    assert (state.version, state.policy_name, state.default_cpuset, state.entries) == (
        "v4",
        "none",
        CPUSet({4, 5, 6}),
        {},
    )
    assert state.data_checksum == 657950972


def test_v4_valid_checkpoint_with_entries() -> None:
    state = cpu(
        f'{{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234, "data": "{CPU_DATA_STATIC}",'
        ' "dataChecksum": 1420829534}'
    )
    assert state.policy_name == "static" and state.default_cpuset == CPUSet({7, 8, 9})
    assert state.entries == {"pod": {"container1": CPUSet({4, 5, 6}), "container2": CPUSet({1, 2, 3})}}


def test_v4_pod_entries_and_unknown_payload_fields() -> None:
    data = (
        r"{\"policyName\":\"static\",\"defaultCPUSet\":\"1-3\",\"entries\":{\"pod\":{\"container1\":\"4-6\","
        r"\"container2\":\"7-9\"}},\"podEntries\":{\"pod\":{\"cpuSet\":\"4-10\"}},\"baselines\":{\"pod\":"
        r"{\"container1\":{\"baseline\":\"4-5\"},\"container2\":{\"baseline\":\"7-8\"}}}}"
    )
    state = cpu(
        f'{{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234, "data": "{data}",'
        ' "dataChecksum": 1032795074}'
    )
    assert state.default_cpuset == CPUSet({1, 2, 3})
    assert state.entries == {"pod": {"container1": CPUSet({4, 5, 6}), "container2": CPUSet({7, 8, 9})}}
    assert state.pod_entries == {"pod": CPUSet(range(4, 11))}
    assert state.assigned() == CPUSet(range(4, 11))


def test_v4_ignores_unknown_fields_in_the_payload() -> None:
    data = r"{\"policyName\":\"none\",\"defaultCPUSet\":\"4-6\",\"unknownField\":\"value\"}"
    state = cpu(
        f'{{"policyName": "other", "defaultCPUSet": "1-9", "checksum": 1234, "data": "{data}",'
        ' "dataChecksum": 3492408555}'
    )
    assert (state.policy_name, state.default_cpuset) == ("none", CPUSet({4, 5, 6}))


def test_v4_payload_policy_is_what_the_kubelet_compares() -> None:
    # "Fail to restore checkpoint with invalid policy name": the kubelet loads policy "other" from data
    # and then refuses to start with "none"; the file itself is sound.
    data = CPU_DATA_STATIC.replace("static", "other")
    state = cpu(f'{{{CPU_LEGACY}, "checksum": 1942532442, "data": "{data}", "dataChecksum": 1432271708}}')
    assert state.policy_name == "other"


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        # without data section: dataChecksum set, data absent
        (
            f'{{{CPU_LEGACY}, "checksum": 1942532442, "dataChecksum": 1234}}',
            "data",
            "dataChecksum is set but data is empty",
        ),
        # without dataChecksum section
        (
            f'{{{CPU_LEGACY}, "checksum": 1942532442, "data": "{CPU_DATA_STATIC}"}}',
            "dataChecksum",
            "checksum is 1420829534",
        ),
        # invalid checksum
        (
            f'{{{CPU_LEGACY}, "checksum": 1942532442, "data": "{CPU_DATA_STATIC}", "dataChecksum": 1234}}',
            "dataChecksum",
            "dataChecksum 1234 does not match the data payload",
        ),
        # unparsable default CPU set
        (
            r'{"policyName": "none", "defaultCPUSet": "7-9", "checksum": 98002435,'
            r' "data": "{\"policyName\":\"none\",\"defaultCPUSet\":\"1.3\"}", "dataChecksum": 3033143655}',
            "data.defaultCPUSet",
            "invalid CPU list '1.3'",
        ),
        # unparsable assignment entry
        (
            r'{"policyName": "static", "defaultCPUSet": "1-3", "checksum": 1659543133, "data": "{\"policyName\":'
            r"\"static\",\"defaultCPUSet\":\"1-3\",\"entries\":{\"pod\":{\"container1\":\"4-6\",\"container2\":"
            r'\"asd\"}}}", "dataChecksum": 3794806925}',
            "data.entries.pod.container2",
            "invalid CPU list 'asd'",
        ),
        ("{", None, "truncated or malformed JSON"),
    ],
)
def test_v4_refusals(text: str, where: str | None, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        cpu(text)
    assert err.value.where == where
    assert err.value.source == "/var/lib/kubelet/cpu_manager_state"


def test_v3_migration_keeps_pod_entries() -> None:
    state = cpu(
        '{"policyName": "static", "defaultCPUSet": "1-2", "entries": {"pod1": {"container1": "5-6",'
        ' "container2": "3-4"}}, "podEntries": {"pod2": {"cpuSet":"7-9"}}, "checksum": 766259872}'
    )
    assert state.version == "v3" and state.default_cpuset == CPUSet({1, 2})
    assert state.entries == {"pod1": {"container1": CPUSet({5, 6}), "container2": CPUSet({3, 4})}}
    assert state.pod_entries == {"pod2": CPUSet({7, 8, 9})}


def test_v2_with_the_kubelets_capitalisation_loads() -> None:
    # encoding/json matches "defaultCPUSet" to the field tagged "defaultCpuSet"
    state = cpu(f'{{{CPU_LEGACY}, "checksum": 1942532442}}')
    assert state.version == "v2" and state.default_cpuset == CPUSet({7, 8, 9})
    assert state.entries["pod"]["container2"] == CPUSet({1, 2, 3})


# ---------------------------------------------------------------------------------------------
# Go's key matching


def test_keys_match_case_insensitively_and_the_last_wins() -> None:
    state = cpu('{"POLICYNAME":"none","policyName":"static","DefaultCpuSet":"0-1","defaultcpuset":"2-3","CHECKSUM":7}')
    assert (state.policy_name, state.default_cpuset, state.checksum) == ("static", CPUSet({2, 3}), 7)


def test_null_leaves_a_string_field_as_it_was() -> None:
    state = cpu('{"policyName":"static","defaultCPUSet":"0-1","defaultCpuSet":null,"checksum":0}')
    assert state.default_cpuset == CPUSet({0, 1})


def test_kelvin_sign_and_long_s_fold_like_go() -> None:
    assert fold("chec\u212asum") == fold("checksum") == fold("CHECKSUM")
    assert fold("\u017fize") == fold("size")
    assert cpu('{"policyName":"none","defaultCpuSet":"","chec\u212a\u017fum":5}').checksum == 5


def test_device_checkpoint_keys_match_case_insensitively_too() -> None:
    # The device manager's checkpoint has no json tags: Go field names, matched the same way.
    cp = parse_device_checkpoint('{"data":{"podDeviceEntries":null,"registereddevices":{"r":["d1"]}},"checksum":3}')
    assert (cp.registered, cp.checksum) == ({"r": ("d1",)}, 3)


def test_data_checksum_is_fnv32a_of_the_dumped_string() -> None:
    assert string_checksum(r'{"policyName":"none","defaultCPUSet":"4-6"}') == 657950972


# ---------------------------------------------------------------------------------------------
# memory_manager_state v3

MEM_DATA = (
    r"{\"policyName\":\"static\",\"machineState\":{\"0\":{\"numberOfAssignments\":0,\"memoryMap\":{\"memory\":"
    r"{\"total\":2048,\"systemReserved\":512,\"allocatable\":1536,\"reserved\":512,\"free\":1024}},\"cells\":[]}},"
    r"\"entries\":{\"pod\":{\"container1\":[{\"numaAffinity\":[0],\"type\":\"memory\",\"size\":512}]}}}"
)
MEM_LEGACY_BAD = (
    '"policyName":"other","machineState":{"0":{"numberOfAssignments":5,"memoryMap":{"memory":{"total":1024,'
    '"systemReserved":256,"allocatable":768,"reserved":256,"free":512}},"cells":[]}},'
    '"entries":{"pod":{"containerX":[{"numaAffinity":[0],"type":"memory","size":128}]}},"checksum": 1234'
)
MEM_LEGACY = (
    '"policyName":"static","machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,'
    '"systemReserved":512,"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}},'
    '"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory","size":512}]}}'
)


def _restored_static(state) -> None:
    assert state.policy_name == "static"
    assert state.entries == {"pod": {"container1": (CheckpointMemoryBlock((0,), "memory", 512),)}}
    node0 = state.machine_state[0]
    assert node0.memory_map == {
        "memory": CheckpointMemoryTable(total=2048, system_reserved=512, allocatable=1536, reserved=512, free=1024)
    }
    assert (node0.number_of_assignments, node0.cells) == (0, ())


def test_memory_v3_restores_the_payload() -> None:
    state = memory(f'{{{MEM_LEGACY_BAD}, "data": "{MEM_DATA}", "dataChecksum": 1849615440}}')
    assert state.version == "v3" and state.data_checksum == 1849615440
    _restored_static(state)


def test_memory_v3_ignores_unknown_payload_fields() -> None:
    data = r"{\"unknownField\":\"value\"," + MEM_DATA[1:]
    state = memory(f'{{{MEM_LEGACY_BAD}, "data": "{data}", "dataChecksum": 2100279793}}')
    _restored_static(state)


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        (f'{{{MEM_LEGACY}, "checksum": 4215593881, "dataChecksum": 1234}}', "data", "data is empty"),
        (f'{{{MEM_LEGACY}, "checksum": 4215593881, "data": "{MEM_DATA}"}}', "dataChecksum", "checksum is 1849615440"),
        (
            f'{{{MEM_LEGACY}, "checksum": 4215593881, "data": "{MEM_DATA}", "dataChecksum": 1234}}',
            "dataChecksum",
            "corrupted",
        ),
        (
            f'{{{MEM_LEGACY}, "checksum": 4215593881, "data": "{{", "dataChecksum": 1234}}',
            "data",
            "truncated or malformed",
        ),
    ],
)
def test_memory_v3_refusals(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError, match=message) as err:
        memory(text)
    assert err.value.where == where


@pytest.mark.parametrize("checksum", [4215593881, 0])
def test_memory_v1_migration(checksum: int) -> None:
    state = memory(f'{{{MEM_LEGACY}, "checksum": {checksum}}}')
    assert state.version == "v1" and state.checksum == checksum
    _restored_static(state)


def test_memory_v2_pod_entries() -> None:
    state = memory(
        f'{{{MEM_LEGACY}, "podEntries":{{"pod":{{"memoryBlocks":'
        '[{"numaAffinity":[0],"type":"memory","size":512}]}},'
        ' "checksum": 1278640530}'
    )
    assert state.version == "v2"
    assert state.pod_entries == {"pod": (CheckpointMemoryBlock((0,), "memory", 512),)}
    _restored_static(state)
