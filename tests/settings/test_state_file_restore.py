"""State files as the kubelet's restoreState meets them at start: its words where it refuses one.

The expected texts are the kubelet's: its own state_checkpoint_test.go cases (cpumanager and
memorymanager, kubernetes/kubernetes) where they cover the case, else the format strings of
state_checkpoint.go, checkpoint.go and checkpointmanager.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from tmnb.parse.gojson import string_checksum
from tmnb.settings.checkpoints import read_state_file
from tmnb.snapshot import StateFile

CPU = "/var/lib/kubelet/cpu_manager_state"
MEMORY = "/var/lib/kubelet/memory_manager_state"


def v4(data: dict[str, object], *, corrupt: bool = False) -> str:
    text = json.dumps(data, separators=(",", ":"))
    return json.dumps({"policyName": "", "defaultCpuSet": "", "checksum": 0, "data": text,
                       "dataChecksum": string_checksum(text) + (1 if corrupt else 0)})  # fmt: skip


def cpu(tmp_path: Path, text: str) -> StateFile | None:
    path = tmp_path / "cpu_manager_state"
    path.write_text(text)
    return read_state_file(path, manager="cpu", shown=CPU)


def test_no_file_is_a_fresh_state(tmp_path: Path) -> None:
    assert read_state_file(tmp_path / "cpu_manager_state", manager="cpu", shown=CPU) is None
    (tmp_path / "cpu_manager_state").symlink_to(tmp_path / "gone")  # ReadFile: IsNotExist as well
    assert read_state_file(tmp_path / "cpu_manager_state", manager="cpu", shown=CPU) is None


def test_a_readable_checkpoint_gives_its_policy(tmp_path: Path) -> None:
    state = cpu(tmp_path, '{"policyName":"none","defaultCpuSet":"","checksum":1353318690}')
    assert state == StateFile(manager="cpu", path=CPU, policy="none", refused_by={})  # every minor reads it
    state = cpu(tmp_path, v4({"policyName": "static", "defaultCpuSet": "0-3", "entries": {"p": {"c": "4-5"}}}))
    assert state == StateFile(manager="cpu", path=CPU, policy="static", refused_by={})


@pytest.mark.parametrize(
    ("text", "error", "after_policy", "policy"),
    [
        (v4({"policyName": "none", "defaultCpuSet": "4-6"}, corrupt=True),
         "could not load v4 checkpoint: checkpoint is corrupted", False, None),
        ("", "unexpected end of JSON input", False, None),
        (" \n", "unexpected end of JSON input", False, None),
        # state_checkpoint_test.go "Restore checkpoint with unparsable default cpu set"
        ('{"policyName":"none","defaultCPUSet":"1.3","entries":{},"checksum":3021697696}',
         'could not parse default cpu set "1.3": strconv.Atoi: parsing "1.3": invalid syntax', True, "none"),
        # "Restore checkpoint with unparsable assignment entry"
        ('{"policyName":"none","defaultCPUSet":"1-3","entries":{"pod":{"container1":"4-6","container2":"asd"}},'
         '"checksum":962272150}',
         'could not parse cpuset "asd" for container "container2" in pod "pod": strconv.Atoi: parsing "asd": invalid '
         "syntax", True, "none"),
        # cpuset.Parse takes no spaces (tmnb's own cpu-list reader would) and no backwards range
        (v4({"policyName": "static", "defaultCpuSet": " 0-3"}), 'could not parse default cpu set " 0-3": strconv.Atoi: '
         'parsing " 0": invalid syntax', True, "static"),
        (v4({"policyName": "static", "defaultCpuSet": "5-3"}), 'could not parse default cpu set "5-3": invalid range '
         '"5-3" (5 > 3)', True, "static"),
    ],
)  # fmt: skip
def test_a_checkpoint_the_kubelet_refuses(tmp_path: Path, text, error, after_policy, policy) -> None:  # type: ignore[no-untyped-def]
    state = cpu(tmp_path, text)
    assert state is not None
    assert dataclasses.replace(state, refused_by=None) == StateFile(
        manager="cpu", path=CPU, policy=policy, error=error, error_after_policy=after_policy
    )
    # a bad v4 payload stops only the kubelets that read v4 (1.37); the older read the fields beside it.
    # An unloadable file stops every minor; a CPU list error comes after the load, for every minor alike.
    expected = {"1.37": error, "1.37+PodLevelResourceManagers": error} if error.startswith("could not load v4") else {}
    assert state.refused_by == (None if not text.strip() else expected)


def test_go_reads_a_plus_sign(tmp_path: Path) -> None:
    assert cpu(tmp_path, v4({"policyName": "static", "defaultCpuSet": "+3,5"})) == StateFile(
        manager="cpu", path=CPU, policy="static", refused_by={}
    )


def test_unreadable_in_gos_words(tmp_path: Path) -> None:
    (tmp_path / "cpu_manager_state").mkdir()
    state = read_state_file(tmp_path / "cpu_manager_state", manager="cpu", shown=CPU)
    assert state == StateFile(manager="cpu", path=CPU, error=f"read {CPU}: is a directory")


def test_memory_v3_without_data(tmp_path: Path) -> None:
    # memorymanager state_checkpoint_test.go: dataChecksum set, no data
    path = tmp_path / "memory_manager_state"
    path.write_text('{"policyName":"Static","machineState":{},"checksum":4215593881,"dataChecksum":1234}')
    assert read_state_file(path, manager="memory", shown=MEMORY) == StateFile(
        manager="memory",
        path=MEMORY,
        error="could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of "
        "JSON input",
        # the older minors read the v1 fields beside it, whose checksum is that of another machine state
        refused_by={
            **dict.fromkeys(
                ("1.33", "1.34", "1.35", "1.36", "1.36+PodLevelResourceManagers"), "checkpoint is corrupted"
            ),
            **dict.fromkeys(
                ("1.37", "1.37+PodLevelResourceManagers"),
                "could not load v3 checkpoint: failed to deserialize memory manager checkpoint data: unexpected end of "
                "JSON input",
            ),
        },
    )


def test_what_tmnb_cannot_tell_is_unknown(tmp_path: Path) -> None:
    v1 = cpu(tmp_path, '{"policyName":"static","defaultCpuSet":"0-1","entries":{"3f2b9c":"2-3"},"checksum":0}')
    assert v1 is not None and v1.policy == "static" and v1.error is None and "v1 checkpoint" in (v1.unknown or "")
    (tmp_path / "cpu_manager_state").write_bytes(b'{"policyName":"st\xe9tic"}')
    latin = read_state_file(tmp_path / "cpu_manager_state", manager="cpu", shown=CPU)
    assert latin is not None and latin.unknown == "not UTF-8 text"
