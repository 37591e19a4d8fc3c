"""The configuration as the kubelet holds it once decoded: the file's feature gates merged into the
kubelet's, the v1beta1 defaults of the fields the start-up reads, and the command line's evictionHard
default.

Ports ``SetDefaults_KubeletConfiguration`` of pkg/kubelet/apis/config/v1beta1/defaults.go,
``loadConfigFile`` of cmd/kubelet/app/server.go and ``DefaultEvictionHard`` of
pkg/kubelet/eviction/defaults_linux.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tmnb.kubelet.gates import merge_feature_gates
from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE, SCOPE_CONTAINER, TOPOLOGY_NONE
from tmnb.kubelet.profiles import KubeletProfile

#: ``eviction.DefaultEvictionHard`` (pkg/kubelet/eviction/defaults_linux.go), which ``loadConfigFile``
#: puts in when the file has no evictionHard at all.
DEFAULT_EVICTION_HARD = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "nodefs.inodesFree": "5%",
    "imagefs.available": "15%",
    "imagefs.inodesFree": "5%",
}
#: The v1beta1 defaults (SetDefaults_KubeletConfiguration) of the fields the start-up reads.
V1BETA1_DEFAULTS: Mapping[str, Any] = {
    "topologyManagerPolicy": TOPOLOGY_NONE,
    "topologyManagerScope": SCOPE_CONTAINER,
    "cpuManagerPolicy": CPU_NONE,
    "memoryManagerPolicy": MEMORY_NONE,
    "enforceNodeAllocatable": ["pods"],
    "cgroupsPerQOS": True,
    "maxPods": 110,
    "podsPerCore": 0,
    "imageMinimumGCAge": "2m",
}
#: memoryReservationPolicy's values, the first its default (in the minors that know the field).
MEMORY_RESERVATION_POLICIES = ("None", "TieredReservation")


def decode(config: Mapping[str, Any], kubelet: KubeletProfile) -> dict[str, Any]:
    """The configuration as ``loadConfigFile`` leaves it: the file's feature gates merged into the
    kubelet's (a panic on a gate it cannot merge, ``merge_feature_gates``), then ``defaults``."""
    merge_feature_gates(kubelet, config.get("featureGates"))
    return defaults(config, kubelet)


def defaults(config: Mapping[str, Any], kubelet: KubeletProfile) -> dict[str, Any]:
    """v1beta1 defaults filled in, and the command line's evictionHard default when the file has
    none (or its missing signals, with ``mergeDefaultEvictionSettings``)."""
    decoded = {**V1BETA1_DEFAULTS, **config}
    if kubelet.knows_field("memoryReservationPolicy") and not decoded.get("memoryReservationPolicy"):
        decoded["memoryReservationPolicy"] = MEMORY_RESERVATION_POLICIES[0]
    if decoded.get("evictionHard") is None:
        decoded["evictionHard"] = dict(DEFAULT_EVICTION_HARD)
    elif decoded.get("mergeDefaultEvictionSettings") and kubelet.knows_field("mergeDefaultEvictionSettings"):
        decoded["evictionHard"] = {**DEFAULT_EVICTION_HARD, **decoded["evictionHard"]}
    return decoded
