"""KubeletConfiguration defaults for the fields tmnb reports, as the kubelet applies them.

From ``SetDefaults_KubeletConfiguration`` (pkg/kubelet/apis/config/v1beta1/defaults.go), whose
actual values differ from some types.go comments: ``cpuManagerPolicy`` defaults to lowercase
"none" while ``memoryManagerPolicy`` defaults to "None". ``evictionHard`` is filled in by
``loadConfigFile`` only when the file leaves it unset (see ``effective``).
"""

from __future__ import annotations

import copy
from typing import Any

from tmnb.kubelet.names import CPU_NONE, MEMORY_NONE, SCOPE_CONTAINER, TOPOLOGY_NONE
from tmnb.kubelet.profiles import resolve
from tmnb.kubelet.startup import config
from tmnb.parse.duration import parse_go_duration
from tmnb.parse.kubelet_fields import DURATION_FIELDS, FIELD_TYPES
from tmnb.versions import KubeVersion

#: eviction.DefaultEvictionHard, which every supported minor writes to /configz when the file has none.
DEFAULT_EVICTION_HARD: dict[str, str] = dict(config.DEFAULT_EVICTION_HARD)
_DEFAULTS: dict[str, Any] = {
    "cpuManagerPolicy": CPU_NONE,
    "cpuManagerReconcilePeriod": "10s",
    "memoryManagerPolicy": MEMORY_NONE,
    "topologyManagerPolicy": TOPOLOGY_NONE,
    "topologyManagerScope": SCOPE_CONTAINER,
    "evictionHard": DEFAULT_EVICTION_HARD,
    "mergeDefaultEvictionSettings": False,
    "enforceNodeAllocatable": ["pods"],
    "cgroupDriver": "cgroupfs",
    "cgroupsPerQOS": True,
    "containerRuntimeEndpoint": "unix:///run/containerd/containerd.sock",
    "failSwapOn": True,
    "maxPods": 110,
    "podPidsLimit": -1,
}

#: Non-pointer fields that SetDefaults fills when they hold their zero value: kubeadm writes
#: ``cpuManagerReconcilePeriod: 0s`` and ``containerRuntimeEndpoint: ""`` and means the default.
_ZERO_IS_DEFAULT = frozenset(
    {
        "cpuManagerPolicy",
        "cpuManagerReconcilePeriod",
        "memoryManagerPolicy",
        "topologyManagerPolicy",
        "topologyManagerScope",
        "cgroupDriver",
        "containerRuntimeEndpoint",
        "maxPods",
    }
)

#: Defaults certain enough that a /configz value differing from them means real drift.
RELIABLE_DEFAULTS = frozenset(
    {"cpuManagerPolicy", "memoryManagerPolicy", "topologyManagerPolicy", "topologyManagerScope"}
)


def defaults_for(version: KubeVersion | None) -> dict[str, Any]:
    """Defaults of the fields that exist in ``version`` (all of them when the version is unknown)."""
    kubelet = None if version is None else resolve(version).profile  # once: a profile is built per call
    return {
        # a fresh copy of each mapping or list, for a caller that changes it; scalars are shared
        name: copy.deepcopy(value) if isinstance(value, dict | list) else value
        for name, value in _DEFAULTS.items()
        if kubelet is None or kubelet.knows_field(name)
    }


def is_zero_default(name: str, value: object) -> bool:
    """True when the kubelet replaces ``value`` with the field's default. For fields tmnb does not
    model, an empty string or zero duration is taken as "the default" too (SetDefaults fills those,
    or their default is that zero value), so kubeadm's ``syncFrequency: 0s`` is not reported as 0s."""
    if name in DURATION_FIELDS and isinstance(value, str):
        return (name in _ZERO_IS_DEFAULT or name not in FIELD_TYPES) and parse_go_duration(value) == 0
    if name in _ZERO_IS_DEFAULT:
        return value in ("", 0) and not isinstance(value, bool)
    return name not in FIELD_TYPES and value == ""
