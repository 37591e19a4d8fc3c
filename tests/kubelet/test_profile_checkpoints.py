"""Checkpoint formats per minor (docs/kubelet-minors.md, #134768, #139102, #139626): what each writes, with
and without PodLevelResourceManagers, and what each restores a file of another minor from."""

import pytest

from tmnb.kubelet.gates import merge_feature_gates, unmet_dependencies
from tmnb.kubelet.profiles import CPU_STATE, MEMORY_STATE, profile

PLRM = {"PodLevelResourceManagers": True}


@pytest.mark.parametrize(
    ("minor", "cpu", "cpu_gated", "memory", "memory_gated"),
    [
        (33, "v2", "v2", "v1", "v1"),
        (35, "v2", "v2", "v1", "v1"),
        (36, "v2", "v3", "v1", "v2"),
        (37, "v4", "v4", "v3", "v3"),
    ],
)
def test_formats_written(minor, cpu, cpu_gated, memory, memory_gated):
    p = profile(minor)
    gates = PLRM if "PodLevelResourceManagers" in p.gates else {}
    assert (p.state_written(CPU_STATE, {}), p.state_written(CPU_STATE, gates)) == (cpu, cpu_gated)
    assert (p.state_written(MEMORY_STATE, {}), p.state_written(MEMORY_STATE, gates)) == (memory, memory_gated)


@pytest.mark.parametrize(
    ("minor", "name", "written", "restored_from"),
    [
        (37, CPU_STATE, "v2", "v2"),  # newer reads older
        (36, CPU_STATE, "v4", "v2"),  # V4 keeps V2 inline
        (33, CPU_STATE, "v4", "v2"),
        (35, CPU_STATE, "v3", None),  # V3 (1.36 with PodLevelResourceManagers): checkpoint is corrupted
        (36, MEMORY_STATE, "v3", "v1"),  # memory V3 keeps V1 inline
        (35, MEMORY_STATE, "v2", None),
    ],
)
def test_what_a_minor_restores_a_file_from(minor, name, written, restored_from):
    assert profile(minor).reads_state(name, written) == restored_from


def test_dependency_check_can_be_left_out():
    """1.35 checks ProcMountType's dependency on UserNamespacesSupport; without the check the merge passes."""
    gates = {"UserNamespacesSupport": False}
    enabled = merge_feature_gates(profile(35), gates, dependencies=False)
    assert enabled["ProcMountType"] and not enabled["UserNamespacesSupport"]
    assert unmet_dependencies(profile(35), enabled) == [("ProcMountType", ["UserNamespacesSupport"])]
    assert unmet_dependencies(profile(34), merge_feature_gates(profile(34), gates)) == []
