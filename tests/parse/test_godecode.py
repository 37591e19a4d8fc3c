"""Go's json.Unmarshal into the checkpoint structs and checksum.New over them.

Expected checksums are those the kubelet's own tests write into their checkpoint fixtures
(cpumanager/state/state_checkpoint_test.go and memorymanager/state/state_checkpoint_test.go of
kubelet 1.36, TestCheckpointStateRestore), syntax errors are worked by hand from Go's
encoding/json scanner (stateBeginValue, stateEndValue, ..., quoteChar)."""

from __future__ import annotations

import pytest

from tmnb.kubelet.checkpoints.cpu_state import _CPU_TYPES
from tmnb.kubelet.checkpoints.memory_state import _MEMORY_TYPES
from tmnb.parse.godecode import GoJSONError, checksum, new_struct, scan, unmarshal


def _no_cpusets(text: str) -> tuple[int, ...]:
    raise AssertionError(text)


@pytest.mark.parametrize(
    ("text", "version", "type_name", "expected"),
    [
        # "Restore default cpu set"
        ('{"policyName": "none","defaultCPUSet": "4-6","entries": {},"checksum": 354655845}', "v2",
         "state.CPUManagerCheckpoint", 354655845),
        # "Restore valid checkpoint"
        ('{"policyName": "none","defaultCPUSet": "1-3","entries": {"pod": {"container1": "4-6","container2": "1-3"}},'
         '"checksum": 3610638499}', "v2", "state.CPUManagerCheckpoint", 3610638499),
        # "Restore checkpoint with invalid policy name"
        ('{"policyName": "other","defaultCPUSet": "1-3","entries": {},"checksum": 1394507217}', "v2",
         "state.CPUManagerCheckpoint", 1394507217),
        # "Restore checkpoint from checkpoint with v1 checksum": no entries at all
        ('{"policyName": "none","defaultCPUSet": "1-3","checksum": 1694838852}', "v1", "state.CPUManagerCheckpoint",
         1694838852),
        # "Restore checkpoint with migration"
        ('{"policyName": "none","defaultCPUSet": "1-3","entries": {"containerID1": "4-6","containerID2": "1-3"},'
         '"checksum": 3680390589}', "v1", "state.CPUManagerCheckpoint", 3680390589),
        # "Restore valid v3 checkpoint with PodLevelResourceManagers enabled"
        ('{"policyName": "none","defaultCPUSet": "1-3","entries": {"pod": {"container1": "4-6","container2": "1-3"}},'
         '"podEntries": {"pod": {"cpuSet": "4-6"}},"checksum": 2649431787}', "v3", "state.CPUManagerCheckpoint",
         2649431787),
    ],
)  # fmt: skip
def test_cpu_checksums_are_the_kubelets(text, version, type_name, expected):
    loaded = unmarshal(text, new_struct(_CPU_TYPES[version]), lambda s: (4, 5, 6) if s == "4-6" else ())
    assert checksum(loaded, type_name=type_name) == expected


MACHINE = (
    '"machineState":{"0":{"numberOfAssignments":0,"memoryMap":{"memory":{"total":2048,"systemReserved":512,'
    '"allocatable":1536,"reserved":512,"free":1024}},"cells":[]}}'
)


@pytest.mark.parametrize(
    ("text", "version", "expected"),
    [
        ('{"policyName":"static",' + MACHINE + ',"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory",'
         '"size":512}]}},"checksum": 4215593881}', "v1", 4215593881),
        ('{"policyName":"static",' + MACHINE + ',"entries":{"pod":{"container1":[{"numaAffinity":[0],"type":"memory",'
         '"size":512}]}},"podEntries":{"pod":{"memoryBlocks":[{"numaAffinity":[0],"type":"memory","size":512}]}},'
         '"checksum": 1278640530}', "v2", 1278640530),
    ],
)  # fmt: skip
def test_memory_checksums_are_the_kubelets(text, version, expected):
    loaded = unmarshal(text, new_struct(_MEMORY_TYPES[version]), _no_cpusets)
    assert checksum(loaded, type_name="state.MemoryManagerCheckpoint") == expected


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("", "unexpected end of JSON input"),
        ("{", "unexpected end of JSON input"),
        ('{"a": tru', "unexpected end of JSON input"),
        ("x", "invalid character 'x' looking for beginning of value"),
        ('{"a" 1}', "invalid character '1' after object key"),
        ('{"a": 1 "b": 2}', "invalid character '\"' after object key:value pair"),
        ("[1 2]", "invalid character '2' after array element"),
        ("{} {}", "invalid character '{' after top-level value"),
        ("{'a': 1}", "invalid character '\\'' looking for beginning of object key string"),
        ('{"a": trux}', "invalid character 'x' in literal true (expecting 'e')"),
        ('{"a": nul}', "invalid character '}' in literal null (expecting 'l')"),
        ('{"a": -x}', "invalid character 'x' in numeric literal"),
        ('{"a": 1.}', "invalid character '}' after decimal point in numeric literal"),
        ('{"a": 1e}', "invalid character '}' in exponent of numeric literal"),
        ('{"a": "\\q"}', "invalid character 'q' in string escape code"),
        ('{"a": "\\u12g4"}', "invalid character 'g' in \\u hexadecimal character escape"),
        ('{"a": "x\ny"}', "invalid character '\\n' in string literal"),
        (b'{"a": 1}\xc3\xa9', "invalid character '\u00c3' after top-level value"),
        ("01", "invalid character '1' after top-level value"),
    ],
)
def test_syntax_errors_are_gos(text, error):
    with pytest.raises(GoJSONError) as caught:
        scan(text)
    assert str(caught.value) == error


@pytest.mark.parametrize(
    ("text", "error"),
    [
        # a v2 file read as v1 (1.36 falls back to v1 and returns its error)
        ('{"entries": {"pod": {"c": "1"}}}',
         "json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string"),
        ('{"policyName": 5}', "json: cannot unmarshal number into Go struct field CPUManagerCheckpointV1.policyName "
         "of type string"),
        ('{"checksum": -1}', "json: cannot unmarshal number -1 into Go struct field CPUManagerCheckpointV1.checksum "
         "of type checksum.Checksum"),
        ('{"checksum": "1"}', "json: cannot unmarshal string into Go struct field CPUManagerCheckpointV1.checksum "
         "of type checksum.Checksum"),
        ("[]", "json: cannot unmarshal array into Go value of type state.CPUManagerCheckpointV1"),
        # the first type error is kept, decoding goes on
        ('{"policyName": 1, "defaultCpuSet": 2}', "json: cannot unmarshal number into Go struct field "
         "CPUManagerCheckpointV1.policyName of type string"),
    ],
)  # fmt: skip
def test_type_errors_are_gos(text, error):
    with pytest.raises(GoJSONError) as caught:
        unmarshal(text, new_struct(_CPU_TYPES["v1"]), _no_cpusets)
    assert str(caught.value) == error


def test_go_decoding_details():
    # keys fold case-insensitively and the last duplicate wins; null keeps a string, empties a map;
    # maps of duplicated keys merge
    text = (
        '{"POLICYNAME": "a", "policyName": "b", "defaultCpuSet": null, "entries": {"p": {"x": "1"}}, '
        '"Entries": {"q": {}}}'
    )
    loaded = unmarshal(text, new_struct(_CPU_TYPES["v2"]), _no_cpusets)
    assert loaded.get("PolicyName") == "b"
    assert loaded.get("DefaultCPUSet") == ""
    assert loaded.get("Entries") == {"p": {"x": "1"}, "q": {}}
    nil = unmarshal('{"entries": null}', new_struct(_CPU_TYPES["v2"]), _no_cpusets)
    assert nil.get("Entries") is None
    # invalid UTF-8 and a lone surrogate become U+FFFD
    odd = unmarshal(b'{"policyName": "a\xffb\\ud800c"}', new_struct(_CPU_TYPES["v2"]), _no_cpusets)
    assert odd.get("PolicyName") == "a\ufffdb\ufffdc"
    # a machineState key that is not an int: the entry is dropped, the error names the map's field
    with pytest.raises(GoJSONError) as caught:
        unmarshal('{"machineState": {"x": {}}}', new_struct(_MEMORY_TYPES["v1"]), _no_cpusets)
    assert str(caught.value) == (
        "json: cannot unmarshal number x into Go struct field MemoryManagerCheckpointV1.machineState of type int"
    )
