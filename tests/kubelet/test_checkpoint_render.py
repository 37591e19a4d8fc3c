"""Checkpoint files as each minor writes them: the format ``restoreState`` reads first, the checksum
under the legacy type name. Checksums are the ones the kubelet's own TestCheckpointStateRestore
cases carry for the same values (cpumanager and memorymanager state_checkpoint_test.go, 1.36)."""

from __future__ import annotations

import json

import pytest

from tmnb.cpuset import CPUSet
from tmnb.kubelet.checkpoints.cpu_state import CPUState, render_cpu_state, restore_cpu_state
from tmnb.kubelet.checkpoints.files import render_state_files
from tmnb.kubelet.checkpoints.memory_state import MemoryState, render_memory_state, restore_memory_state
from tmnb.kubelet.checkpoints.restore import RestoreError, StateFiles
from tmnb.kubelet.memorymanager.state import MachineNode, ModelMemoryBlock
from tmnb.kubelet.profiles import CPU_STATE, MEMORY_STATE, profile
from tmnb.parse.state_files import CheckpointMemoryTable

GATE = {"PodLevelResourceManagers": True}
ENTRIES = {"pod": {"container1": CPUSet({4, 5, 6}), "container2": CPUSet({1, 2, 3})}}
MACHINE = {0: MachineNode(0, {"memory": CheckpointMemoryTable(2048, 512, 1536, 512, 1024)}, ())}
BLOCKS = {"pod": {"container1": (ModelMemoryBlock((0,), 512, "memory"),)}}


@pytest.mark.parametrize("minor", [33, 34, 35, 36])
def test_cpu_v2_carries_the_kubelets_checksums(minor: int) -> None:
    empty = json.loads(render_cpu_state(CPUState("none", CPUSet({4, 5, 6}), {}), profile(minor), {}))
    assert empty == {"policyName": "none", "defaultCpuSet": "4-6", "checksum": 354655845}  # "entries" omitted
    full = json.loads(render_cpu_state(CPUState("none", CPUSet({1, 2, 3}), ENTRIES), profile(minor), {}))
    assert full["checksum"] == 3610638499 and full["entries"] == {"pod": {"container1": "4-6", "container2": "1-3"}}
    assert "podEntries" not in full


def test_cpu_v3_with_pod_level_resource_managers() -> None:
    state = CPUState("none", CPUSet({1, 2, 3}), ENTRIES, {"pod": CPUSet({4, 5, 6})})
    text = render_cpu_state(state, profile(36), GATE)
    doc = json.loads(text)
    assert doc["podEntries"] == {"pod": {"cpuSet": "4-6"}} and doc["checksum"] == 2649431787
    assert list(doc) == ["policyName", "defaultCpuSet", "entries", "podEntries", "checksum"]  # struct order
    files = StateFiles(cpu_manager_state=text)
    restored = restore_cpu_state(files, policy="none", kubelet=profile(36), feature_gates=GATE)
    assert restored is not None and restored.version == "v3" and restored.pod_entries == {"pod": CPUSet({4, 5, 6})}


@pytest.mark.parametrize("minor", [33, 34, 35, 36])
def test_memory_v1_carries_the_kubelets_checksum(minor: int) -> None:
    doc = json.loads(render_memory_state(MemoryState("static", MACHINE, BLOCKS), profile(minor), {}))
    assert doc["checksum"] == 4215593881
    assert doc["machineState"]["0"] == {
        "numberOfAssignments": 0,
        "memoryMap": {"memory": {"total": 2048, "systemReserved": 512, "allocatable": 1536, "reserved": 512,
                                 "free": 1024}},
        "cells": [],
    }  # fmt: skip


@pytest.mark.parametrize(("minor", "gates"), [*((m, {}) for m in (33, 34, 35, 36, 37)), (36, GATE), (37, GATE)])
def test_each_minor_restores_what_it_wrote(minor: int, gates: dict[str, bool]) -> None:
    kubelet = profile(minor)
    cpu = CPUState("static", CPUSet({0, 7, 8, 9}), ENTRIES)
    files = render_state_files(kubelet, gates, cpu, MemoryState("Static", MACHINE, BLOCKS))
    restored = restore_cpu_state(files, policy="static", kubelet=kubelet, feature_gates=gates)
    assert restored is not None and (restored.default, restored.entries) == (cpu.default, ENTRIES)
    assert restored.version == kubelet.state_written(CPU_STATE, gates)
    memory = restore_memory_state(files, policy="Static", kubelet=kubelet, feature_gates=gates)
    assert memory is not None and memory.version == kubelet.state_written(MEMORY_STATE, gates)
    assert memory.entries == BLOCKS and memory.machine == MACHINE


def test_a_pod_level_checkpoint_stops_a_1_35_kubelet() -> None:
    """1.36 with PodLevelResourceManagers writes v3 with a v3 checksum; 1.35 knows only v1/v2 and its
    v2 checksum does not match: the downgrade refuses to start (#139069)."""
    state = CPUState("static", CPUSet({0, 7, 8, 9}), ENTRIES, {"pod": CPUSet({1, 2, 3, 4, 5, 6})})
    files = render_state_files(profile(36), GATE, state, None)
    with pytest.raises(RestoreError, match=r"^checkpoint is corrupted$"):
        restore_cpu_state(files, policy="static", kubelet=profile(35), feature_gates={})
