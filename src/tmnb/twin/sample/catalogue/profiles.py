"""Kubelet configuration profiles: the layers (file, drop-ins, flags), lowest first. The effective
values are never written here; the layers step computes them the way a real node is read."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Profile:
    """How a pool's kubelets are configured, as the layers an SRE would find on the node.

    ``reserve_cores`` (core ids, all their threads) becomes ``reservedSystemCPUs`` in the file, and
    the layer that turns the memory manager ``Static`` also gets the ``reservedMemory`` the kubelet
    demands (summing to kube + system reserved + the hard-eviction threshold)."""

    key: str
    file: Mapping[str, Any]
    dropins: tuple[tuple[str, Mapping[str, Any]], ...] = ()
    flags: Mapping[str, Any] = field(default_factory=dict)
    reserve_cores: tuple[int, ...] = ()
    configz_only: bool = False


_EVICTION = {
    "memory.available": "100Mi",
    "nodefs.available": "10%",
    "imagefs.available": "15%",
    "nodefs.inodesFree": "5%",
}
_BASE = {
    "kubeReserved": {"cpu": "500m", "memory": "1Gi", "ephemeral-storage": "1Gi"},
    "systemReserved": {"cpu": "500m", "memory": "1Gi"},
    "evictionHard": _EVICTION,
}
_TELCO_BASE = {
    "kubeReserved": {"cpu": "1", "memory": "2Gi", "ephemeral-storage": "1Gi"},
    "systemReserved": {"cpu": "1", "memory": "2Gi"},
    "evictionHard": {**_EVICTION, "memory.available": "500Mi"},
    "featureGates": {"KubeletPodResourcesGet": True},
}
_GPU_BASE = {
    "kubeReserved": {"cpu": "1", "memory": "4Gi", "ephemeral-storage": "10Gi"},
    "systemReserved": {"cpu": "1", "memory": "4Gi"},
    "evictionHard": {**_EVICTION, "memory.available": "1Gi"},
}
_STATIC = {"cpuManagerPolicy": "static"}

PROFILES: dict[str, Profile] = {
    p.key: p
    for p in (
        Profile("defaults", _BASE),
        Profile("best-effort-static", {**_BASE, **_STATIC, "topologyManagerPolicy": "best-effort"}),
        Profile(
            "restricted-full-pcpus",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted",
             "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}},
            reserve_cores=(0,),
        ),
        Profile(
            "single-numa-flag-override",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static"},
            flags={"topologyManagerPolicy": "single-numa-node"},
            reserve_cores=(0,),
        ),
        Profile(
            "single-numa-pod-dropin",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "best-effort"},
            dropins=(
                ("50-numa-alignment.conf", {
                    "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
                    "memoryManagerPolicy": "Static", "cpuManagerPolicyOptions": {"strict-cpu-reservation": "true"},
                }),
            ),
            reserve_cores=(0,),
        ),
        Profile(
            "telco-single-numa-pod",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "single-numa-node", "topologyManagerScope": "pod",
             "cpuManagerPolicyOptions": {"full-pcpus-only": "true"}, "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 1),
        ),
        Profile(
            "telco-restricted-closest",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "topologyManagerScope": "pod",
             "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}, "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 1),
        ),
        Profile(
            "telco-best-effort-configz",
            {**_TELCO_BASE, **_STATIC, "topologyManagerPolicy": "best-effort",
             "topologyManagerPolicyOptions": {"prefer-closest-numa-nodes": "true"}},
            reserve_cores=(0, 1),
            configz_only=True,
        ),
        Profile(
            "gpu-best-effort-pod",
            {**_GPU_BASE, **_STATIC, "topologyManagerPolicy": "best-effort", "topologyManagerScope": "pod"},
            reserve_cores=(0, 56),
        ),
        Profile(
            "gpu-single-numa",
            {**_GPU_BASE, **_STATIC, "topologyManagerPolicy": "single-numa-node"},
            reserve_cores=(0, 56),
        ),
        Profile(
            "bigmem-restricted",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static"},
            reserve_cores=(0, 64),
        ),
        Profile(
            "numa16-restricted",
            {**_BASE, **_STATIC, "topologyManagerPolicy": "restricted",
             "topologyManagerPolicyOptions": {"max-allowable-numa-nodes": "16"}},
            reserve_cores=(0, 60, 120, 180),
        ),
        Profile("gb200-none", {**_GPU_BASE, **_STATIC}, reserve_cores=(0, 72)),
    )
}  # fmt: skip
