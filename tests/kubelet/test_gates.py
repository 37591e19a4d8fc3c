"""The config file's featureGates merged as each minor's SetDefaults_KubeletConfiguration merges them.

Expectations are worked by hand from component-base's featuregate ``unsafeSetFromMap`` (unknown gate:
early return; locked gate set to the other value; from 1.35 the dependency check over every enabled
gate, the disabled dependencies in sorted order) and from each minor's kube_features.go, with the
panic text of pkg/kubelet/apis/config/v1beta1/defaults.go (kubernetes #140848).
"""

from __future__ import annotations

import pytest

from tmnb.errors import ConfigRejected
from tmnb.kubelet.gates import merge_feature_gates
from tmnb.kubelet.profiles import profile

PANIC = "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "


def panic(minor: int, gates: dict[str, bool]) -> str:
    with pytest.raises(ConfigRejected) as info:
        merge_feature_gates(profile(minor), gates)
    return info.value.message


def test_a_gate_the_minor_removed_stops_the_kubelet():
    # MemoryManager was removed in 1.36; CPUManager in 1.33
    assert panic(36, {"MemoryManager": True}) == PANIC + "unrecognized feature gate: MemoryManager"
    assert panic(33, {"CPUManager": True}) == PANIC + "unrecognized feature gate: CPUManager"


def test_the_first_unknown_gate_ends_the_walk():
    assert panic(36, {"NoSuchA": True, "NoSuchB": True}) == PANIC + "unrecognized feature gate: NoSuchA"


def test_a_locked_gate_keeps_its_value():
    assert panic(35, {"MemoryManager": False}) == (
        PANIC + "cannot set feature gate MemoryManager to false, feature is locked to true"
    )
    merge_feature_gates(profile(35), {"MemoryManager": True})  # its own value is accepted


def test_topology_options_gate_locked_only_from_1_36():
    merge_feature_gates(profile(35), {"TopologyManagerPolicyOptions": False})
    assert panic(36, {"TopologyManagerPolicyOptions": False}) == (
        PANIC + "cannot set feature gate TopologyManagerPolicyOptions to false, feature is locked to true"
    )


def test_dependencies_from_1_35():
    # 1.36: InPlacePodLevelResourcesVerticalScaling (beta, on) depends on PodLevelResources
    assert panic(36, {"PodLevelResources": False}) == PANIC + (
        "InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: "
        "[PodLevelResources]"
    )
    # 1.35: that gate is alpha and off, so nothing depends on PodLevelResources being on
    merge_feature_gates(profile(35), {"PodLevelResources": False})
    # 1.34 has no dependency check at all
    merge_feature_gates(profile(34), {"PodLevelResources": False})
    # turning the dependent gate off too is accepted
    merge_feature_gates(profile(36), {"PodLevelResources": False, "InPlacePodLevelResourcesVerticalScaling": False})


def test_several_dependency_errors_aggregate():
    # 1.37: three default-on gates depend on PodLevelResources; Go's aggregate in brackets
    assert panic(37, {"PodLevelResources": False}) == PANIC + (
        "[InPlacePodLevelResourcesVerticalScaling is enabled, but depends on features that are disabled: "
        "[PodLevelResources], PodLevelResourcesFixDefaulting is enabled, but depends on features that are "
        "disabled: [PodLevelResources], PodLevelResourcesFixKubeletQOSClass is enabled, but depends on features "
        "that are disabled: [PodLevelResources]]"
    )


def test_all_alpha_sets_every_alpha_gate_the_map_does_not_name():
    merged = merge_feature_gates(profile(36), {"AllAlpha": True, "PodLevelResourceManagers": False})
    assert merged["TopologyManagerPolicyAlphaOptions"] is True
    assert merged["PodLevelResourceManagers"] is False
    # 1.37: alpha gates that need GenericWorkload (beta, off) fail the dependency check
    assert "depends on features that are disabled: [GenericWorkload]" in panic(37, {"AllAlpha": True})


def test_no_gates_is_the_defaults():
    merged = merge_feature_gates(profile(36), None)
    assert merged["PodLevelResources"] is True
    assert merged["PodLevelResourceManagers"] is False
