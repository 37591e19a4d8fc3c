"""What each supported kubelet minor knows and does: one profile per minor, read by every room.

A fleet runs several kubelet minors at once and the change is often the upgrade itself, so every
fact that differs between minors lives here, once: the configuration fields a minor knows, its
feature gates (default, maturity, lock) and their dependencies, the maturity of each policy option,
the defaults that moved, the checkpoint formats it reads and writes, which configuration changes
make its existing checkpoints unusable at start, and how its resource managers treat pod-level
``spec.resources``, device hints and empty pod resources; and how far a kubelet may lag its API
server (``kubelet_skew``). Nothing else in tmnb compares versions (``tests/kubelet/test_profiles.py``
looks for comparisons and differences of minors).

Sources: the kubelet trees of each minor (OpenShift's fork at 1.33.13, 1.34.9, 1.35.6, 1.36.3 with
its carries named where they matter; upstream for 1.37, from merged PRs and the kubelet staging
tree); see ``docs/kubelet-minors.md``.

A node whose kubelet is outside 1.33-1.37 is predicted with the nearest minor's profile and marked
not modelled (``resolve``): callers say so, never silently.

No kubelet file of its own: the facts of every file the other modules port, minor by minor.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from typing import Literal

from tmnb.errors import InputError
from tmnb.kubelet.names import CPU_STATIC, MEMORY_STATIC
from tmnb.parse.kubelet_fields import FIELD_SINCE
from tmnb.versions import KubeVersion

Manager = Literal["topology", "cpu"]
Maturity = Literal["alpha", "beta", "ga"]
Stage = Literal["ALPHA", "BETA", "GA", "DEPRECATED"]
#: How the static CPU and Memory managers treat a pod with pod-level ``spec.resources``.
PodLevelHandling = Literal[
    "pinned",  # 1.33: the managers do not look at pod-level resources
    "skipped-with-gate",  # 1.34, 1.35: no hints and no pinning while PodLevelResources is on
    "skipped-unless-pod-level-managers",  # 1.36+: ... unless PodLevelResources and PodLevelResourceManagers
]

#: The minor a case or a node without a version is answered as.
DEFAULT_MINOR = 36

#: The key of a target that changes the kubelet minor rather than a configuration field.
KUBELET_VERSION = "kubeletVersion"

CPU_STATE = "cpu_manager_state"
MEMORY_STATE = "memory_manager_state"


@dataclass(frozen=True)
class Gate:
    """A feature gate as a minor registers it."""

    default: bool
    stage: Stage
    locked: bool = False


# (first minor, maturity from then on): the history of each policy option, from each minor's
# cpumanager/policy_options.go and topologymanager/policy_options.go.
_OPTION_HISTORY: dict[Manager, dict[str, tuple[tuple[int, Maturity], ...]]] = {
    "topology": {
        "prefer-closest-numa-nodes": ((26, "alpha"), (28, "beta"), (32, "ga")),
        "max-allowable-numa-nodes": ((31, "beta"), (35, "ga")),
    },
    "cpu": {
        "full-pcpus-only": ((22, "alpha"), (23, "beta"), (33, "ga")),
        "distribute-cpus-across-numa": ((23, "alpha"), (33, "beta")),
        "align-by-socket": ((25, "alpha"),),
        "distribute-cpus-across-cores": ((31, "alpha"),),
        "strict-cpu-reservation": ((32, "alpha"), (33, "beta"), (35, "ga")),
        "prefer-align-cpus-by-uncorecache": ((32, "alpha"), (34, "beta"), (36, "ga")),
    },
}

#: The gate an option of each non-GA maturity needs (the same in every supported minor).
STAGE_GATES: dict[tuple[Manager, Maturity], str] = {
    ("topology", "alpha"): "TopologyManagerPolicyAlphaOptions",
    ("topology", "beta"): "TopologyManagerPolicyBetaOptions",
    ("cpu", "alpha"): "CPUManagerPolicyAlphaOptions",
    ("cpu", "beta"): "CPUManagerPolicyBetaOptions",
}
#: The gate ``run()`` checks before it hands a topology option map to the manager. The CPU
#: manager's map gate has been GA and locked since before 1.33, so ``run()`` no longer checks it.
TOPOLOGY_OPTIONS_GATE = "TopologyManagerPolicyOptions"

#: Which configuration fields, changed while a checkpoint exists, can make the kubelet refuse to
#: restore it or refuse its state at start (state_checkpoint.go's policy check, the static policies'
#: validateState), the same in 1.33-1.37: the CPU file's policy name, and under the static policy the
#: reserved set and strict-cpu-reservation (``not all reserved cpus ... are present in defaultCpuSet``,
#: ``some of strictly reserved cpus ...``); the memory file's policy name, and under Static the machine
#: state the reservation shapes (``the expected machine state is different from the real one``).
_CHECKPOINT_SPOILERS: dict[str, tuple[str, ...]] = {
    CPU_STATE: ("cpuManagerPolicy", "cpuManagerPolicyOptions", "reservedSystemCPUs"),
    MEMORY_STATE: ("memoryManagerPolicy", "reservedMemory"),
}
#: The older format a checkpoint keeps inline beside its authoritative ``data`` payload, for older
#: kubelets: cpu_manager_state V4 keeps the V2 fields (#139102), memory_manager_state V3 the V1 fields
#: (#139626). A kubelet that reads the inline format restores such a file without its pod-level entries.
STATE_INLINE: dict[str, dict[str, str]] = {CPU_STATE: {"v4": "v2"}, MEMORY_STATE: {"v3": "v1"}}
#: The policy field of each checkpoint, and the policy under which the file holds assignments.
CHECKPOINT_POLICIES: dict[str, tuple[str, str]] = {
    CPU_STATE: ("cpuManagerPolicy", CPU_STATIC),
    MEMORY_STATE: ("memoryManagerPolicy", MEMORY_STATIC),
}


@dataclass(frozen=True)
class StateFormat:
    """One checkpoint struct a minor's ``restoreState`` tries to load (its state/checkpoint.go):
    ``version`` names its shape (v1: CPU entries by container ID; v2: by pod and container; v3: v2 plus
    ``podEntries``; memory v1, v2 with ``podEntries``); a checksum is valid when it covers the struct
    dumped under one of ``type_names`` (the versioned name, or the legacy one older minors wrote), and
    ``zero_checksum`` accepts 0 as "no checksum"."""

    version: str
    type_names: tuple[str, ...]
    zero_checksum: bool = True


_CPU = "state.CPUManagerCheckpoint"
_MEMORY = "state.MemoryManagerCheckpoint"
#: restoreState's attempts, in order, by minor: without and with PodLevelResourceManagers (the last
#: attempt's error is the one returned). 1.33-1.35 try v1 then v2 (CPUManagerCheckpointV2 is an alias,
#: the memory checkpoint has no zero-checksum escape); 1.36 tries v2 (either name) then v1, and with the
#: gate v3 first; the memory manager reads v1 only, or v2 then v1 with the gate. 1.37 (from its PRs,
#: no tree read) tries its data-carrying v4 / memory v3 first, then as 1.36.
_V1 = StateFormat("v1", (_CPU,))
_OLD_V2 = StateFormat("v2", (_CPU,))
_OLD_MEMORY = (StateFormat("v1", (_MEMORY,), False),)
_STATE_FORMATS: dict[int, tuple[tuple[StateFormat, ...], ...]] = {
    33: ((_V1, _OLD_V2), (_V1, _OLD_V2), _OLD_MEMORY, _OLD_MEMORY),
}
_NEW_CPU = (
    (StateFormat("v2", (_CPU + "V2", _CPU)), _V1),
    (StateFormat("v3", (_CPU,), False), _OLD_V2, _V1),
)
_NEW_MEMORY = (
    (StateFormat("v1", (_MEMORY + "V1", _MEMORY)),),
    (StateFormat("v2", (_MEMORY,), False), StateFormat("v1", (_MEMORY,))),
)
_STATE_FORMATS[34] = _STATE_FORMATS[35] = _STATE_FORMATS[33]
_STATE_FORMATS[36] = (*_NEW_CPU, *_NEW_MEMORY)
_STATE_FORMATS[37] = (
    (StateFormat("v4", (_CPU,)), *_NEW_CPU[0]),
    (StateFormat("v4", (_CPU,)), *_NEW_CPU[1]),
    (StateFormat("v3", (_MEMORY,)), *_NEW_MEMORY[0]),
    (StateFormat("v3", (_MEMORY,)), *_NEW_MEMORY[1]),
)
#: How a v1 CPU checkpoint that names a container ID the runtime does not know fails (the inner text
#: is ``containerID '<id>' not found in initial containers list`` in every minor).
_V1_MIGRATION_ERROR = {
    33: "error migrating v1 checkpoint state to v2 checkpoint state: {}",
    34: "error migrating v1 checkpoint state to v2 checkpoint state: {}",
    35: "error migrating v1 checkpoint state to v2 checkpoint state: {}",
    36: "failed to migrate checkpoint from v1 to v2: {}",
    37: "failed to migrate checkpoint from v1 to v2: {}",
}


#: The first patch of each minor whose device manager, in the first batch after a start, counts a
#: container as running when any of its container IDs runs (#135485, backported as #138027 and #138042);
#: before it the kubelet takes one ID from its container map (Go map order) and only that one's state
#: counts, so a container that restarted before the kubelet did can be re-allocated and rejected. None:
#: no patch of the minor has it (the 1.33 tree, 1.33.13, does not).
_DEVICE_ANY_RUNNING_ID_SINCE: dict[int, int | None] = {33: None, 34: 7, 35: 4, 36: 0, 37: 0}


@dataclass(frozen=True)
class KubeletProfile:
    """Everything tmnb knows of one kubelet minor."""

    minor: int
    gates: Mapping[str, Gate]
    #: gate -> the gates it needs on (validated from 1.35; empty before)
    gate_dependencies: Mapping[str, tuple[str, ...]]
    #: ``failCgroupV1``'s v1beta1 default: from 1.35 a cgroup v1 host refuses to start
    fail_cgroup_v1: bool
    pod_level_resources: PodLevelHandling
    #: device hints only over the NUMA nodes that hold the resource's devices (#138244)
    device_hints_over_device_nodes: bool
    #: ``imageMinimumGCAge`` must not be negative (validation from 1.36)
    refuses_negative_image_gc_age: bool
    #: ``--config-dir`` drop-ins are read without an environment variable (beta, on, from 1.30)
    config_dir: bool = True
    checkpoint_spoilers: Mapping[str, tuple[str, ...]] = field(default_factory=lambda: _CHECKPOINT_SPOILERS)
    #: the static CPU policy's ``validateState`` compares the CPUs a checkpoint knows with every CPU of the
    #: machine even under strict-cpu-reservation (OpenShift's trees 1.33-1.36, whose workload-partitioning
    #: carry rewrote the check: a strict node's unchanged state, which lacks the reserved CPUs, is refused
    #: at restart), not with the CPUs less the reserved ones (upstream, so 1.37)
    state_check_counts_reserved: bool = False

    def cpu_state_formats(self, feature_gates: Mapping[str, object] | None) -> tuple[StateFormat, ...]:
        """The cpu_manager_state structs ``restoreState`` tries, in order."""
        without, with_gate = _STATE_FORMATS[self.minor][:2]
        return with_gate if self.gate_on("PodLevelResourceManagers", feature_gates) else without

    def memory_state_formats(self, feature_gates: Mapping[str, object] | None) -> tuple[StateFormat, ...]:
        """The memory_manager_state structs ``restoreState`` tries, in order."""
        without, with_gate = _STATE_FORMATS[self.minor][2:]
        return with_gate if self.gate_on("PodLevelResourceManagers", feature_gates) else without

    def state_reader(self, feature_gates: Mapping[str, object] | None) -> str:
        """The name of the checkpoint reader this kubelet runs with these gates (its minor, and whether
        PodLevelResourceManagers changes the formats it tries): the key of ``StateFile.refused_by``."""
        gated = self.gate_default("PodLevelResourceManagers") is not None and self.gate_on(
            "PodLevelResourceManagers", feature_gates
        )
        return f"{self.name}+PodLevelResourceManagers" if gated else self.name

    def device_counts_any_running_id(self, patch: int | None) -> bool:
        """Whether the device manager at a restart takes a container as running when any of its IDs runs
        (``_DEVICE_ANY_RUNNING_ID_SINCE``); ``patch`` None: the patch of the tree read (table above)."""
        since = _DEVICE_ANY_RUNNING_ID_SINCE[self.minor]
        return since is not None and (patch is None or patch >= since)

    def cpu_v1_migration_error(self, inner: str) -> str:
        return _V1_MIGRATION_ERROR[self.minor].format(inner)

    @property
    def version(self) -> KubeVersion:
        return KubeVersion(1, self.minor, 0)

    @property
    def name(self) -> str:
        return f"1.{self.minor}"

    def knows_field(self, name: str) -> bool:
        since = FIELD_SINCE.get(name)
        return since is not None and since <= self.minor

    def field_since(self, name: str) -> int | None:
        """The minor that introduced ``name`` when this minor predates it."""
        since = FIELD_SINCE.get(name)
        return since if since is not None and since > self.minor else None

    def option_maturity(self, manager: Manager, name: str) -> Maturity | None:
        """Maturity of a policy option in this minor; None when it does not know the option."""
        current: Maturity | None = None
        for since, maturity in _OPTION_HISTORY[manager].get(name, ()):
            if since <= self.minor:
                current = maturity
        return current

    def options(self, manager: Manager) -> tuple[str, ...]:
        """Every option name this minor accepts for ``manager``, at any maturity."""
        return tuple(n for n in _OPTION_HISTORY[manager] if self.option_maturity(manager, n) is not None)

    def _formats(self, name: str, feature_gates: Mapping[str, object] | None) -> tuple[StateFormat, ...]:
        return self.cpu_state_formats(feature_gates) if name == CPU_STATE else self.memory_state_formats(feature_gates)

    def state_written(self, name: str, feature_gates: Mapping[str, object] | None) -> str:
        """The format of checkpoint ``name`` (``CPU_STATE``, ``MEMORY_STATE``) this minor writes with these
        gates: the newest it reads (1.36 writes the next one while PodLevelResourceManagers is on, #134768)."""
        return max(f.version for f in self._formats(name, feature_gates))

    def state_read(self, name: str) -> frozenset[str]:
        """Every format of checkpoint ``name`` this minor restores, whatever its gates."""
        with_gate = {"PodLevelResourceManagers": True}
        return frozenset(f.version for gates in ({}, with_gate) for f in self._formats(name, gates))

    def reads_state(self, name: str, written: str) -> str | None:
        """The format this minor restores a ``name`` checkpoint written as ``written`` from: ``written``
        itself, the older format the file keeps inline (``STATE_INLINE``), or None: it refuses the file
        (``checkpoint is corrupted``) and does not start until the file is deleted."""
        if written in self.state_read(name):
            return written
        inline = STATE_INLINE[name].get(written)
        return inline if inline is not None and inline in self.state_read(name) else None

    def gate_default(self, gate: str) -> bool | None:
        spec = self.gates.get(gate)
        return None if spec is None else spec.default

    def gate_on(self, gate: str, feature_gates: Mapping[str, object] | None) -> bool:
        """The effective value of ``gate`` (the caller has checked the gates: see ``startup``)."""
        value = (feature_gates or {}).get(gate)
        if isinstance(value, bool):
            return value
        return bool(self.gate_default(gate))

    def empty_pod_resources_best_effort(self, feature_gates: Mapping[str, object] | None) -> bool:
        """Whether ``spec.resources: {}`` makes a pod BestEffort while PodLevelResources is on: until 1.37's
        PodLevelResourcesFixKubeletQOSClass (#137150)."""
        return not self.gate_on("PodLevelResourcesFixKubeletQOSClass", feature_gates)

    def skips_pod_level_resources(self, feature_gates: Mapping[str, object] | None) -> bool | None:
        """Whether the static CPU and Memory managers leave a pod with pod-level resources alone (no
        hints, no pinning); None where they allocate it as one pod-level block (PodLevelResources and
        PodLevelResourceManagers both on, 1.36+), which tmnb does not model."""
        on = self.gate_on("PodLevelResources", feature_gates)
        if self.pod_level_resources == "pinned":
            return False
        if self.pod_level_resources == "skipped-with-gate":
            return on
        return None if on and self.gate_on("PodLevelResourceManagers", feature_gates) else True


@cache
def _gate_table() -> dict[str, dict[str, Gate]]:
    raw = json.loads(resources.files("tmnb.kubelet").joinpath("data/feature_gates.json").read_text())
    return {
        minor: {name: Gate(bool(g["default"]), g["stage"], bool(g.get("locked", False))) for name, g in gates.items()}
        for minor, gates in raw["gates"].items()
    }


@cache
def _dependency_table() -> dict[str, dict[str, tuple[str, ...]]]:
    raw = json.loads(resources.files("tmnb.kubelet").joinpath("data/feature_gates.json").read_text())
    return {minor: {g: tuple(d) for g, d in deps.items()} for minor, deps in raw["dependencies"].items()}


#: The facts that move between minors, one row per minor (kubelet-versions research, docs/kubelet-minors.md):
#: failCgroupV1 default, pod-level resources, device hints over device NUMA nodes, negative
#: imageMinimumGCAge refused. Checkpoint formats are ``_STATE_FORMATS``.
_FACTS: dict[int, tuple[bool, PodLevelHandling, bool, bool]] = {
    33: (False, "pinned", False, False),
    34: (False, "skipped-with-gate", False, False),
    35: (True, "skipped-with-gate", False, False),
    36: (True, "skipped-unless-pod-level-managers", True, True),
    37: (True, "skipped-unless-pod-level-managers", True, True),
}


@cache
def profile(minor: int) -> KubeletProfile:
    """The profile of a supported minor (``SUPPORTED_MINORS``)."""
    if minor not in _FACTS:
        raise InputError(f"kubelet 1.{minor} is not supported: expected one of {supported_names()}")
    cgroup_v1, pod_level, device_nodes, gc_age = _FACTS[minor]
    key = f"1.{minor}"
    return KubeletProfile(
        minor=minor,
        gates=_gate_table()[key],
        gate_dependencies=_dependency_table().get(key, {}),
        fail_cgroup_v1=cgroup_v1,
        pod_level_resources=pod_level,
        device_hints_over_device_nodes=device_nodes,
        refuses_negative_image_gc_age=gc_age,
        state_check_counts_reserved=minor in _OPENSHIFT_TREES,
    )


SUPPORTED_MINORS: tuple[int, ...] = tuple(_FACTS)
#: The minors read from OpenShift's kubelet trees (1.37 comes from upstream).
_OPENSHIFT_TREES = frozenset({33, 34, 35, 36})


def supported_names() -> str:
    return ", ".join(f"1.{m}" for m in SUPPORTED_MINORS)


#: Gates that first appeared in a supported minor, for kubelets older than every profile: such a
#: kubelet does not have them (kube_features.go's first versioned spec).
GATE_FIRST_MINOR: dict[str, int] = {"DisableCPUQuotaWithExclusiveCPUs": 33}


@dataclass(frozen=True)
class Resolved:
    """The profile a node is predicted with, and whether it is the node's own minor."""

    profile: KubeletProfile
    modelled: bool
    #: the node's own version as reported (None when unknown)
    reported: KubeVersion | None

    def gate_on(self, gate: str, feature_gates: Mapping[str, object] | None) -> bool:
        """The gate's effective value on this node; off on a kubelet older than the gate."""
        first = GATE_FIRST_MINOR.get(gate)
        reported = self.reported
        if first is not None and reported is not None and reported.major == 1 and reported.minor < first:
            return False
        return self.profile.gate_on(gate, feature_gates)

    def note(self) -> str | None:
        """The finding every report shows when the prediction is not the node's own minor."""
        if self.modelled:
            return None
        if self.reported is None:
            return f"kubelet version unknown: predicted as kubelet {self.profile.name}"
        return (
            f"kubelet {self.reported} is outside the modelled minors ({supported_names()}): "
            f"predicted as kubelet {self.profile.name}, the nearest"
        )


def resolve(version: KubeVersion | None) -> Resolved:
    """The profile for a node's kubelet: its own minor when supported, else the nearest, not modelled."""
    if version is None:
        return Resolved(profile(DEFAULT_MINOR), False, None)
    if version.major == 1 and version.minor in SUPPORTED_MINORS:
        return Resolved(profile(version.minor), True, version)
    nearest = min(SUPPORTED_MINORS, key=lambda m: abs(m - version.minor) if version.major == 1 else -m)
    return Resolved(profile(nearest), False, version)


def parse_minor(text: object, *, where: str) -> KubeletProfile:
    """A user's ``--kubelet-version`` / ``kubeletVersion`` ("1.37", "v1.37.2") as a supported profile."""
    wrong = InputError(f"expected a kubelet minor, one of {supported_names()}; got {text!r}", where=where)
    if isinstance(text, bool) or not isinstance(text, str | int | float):
        raise wrong
    try:
        version = KubeVersion.parse(f"{text:.2f}" if isinstance(text, float) else str(text), source=where)
    except InputError:
        raise wrong from None
    if version.major != 1 or version.minor not in SUPPORTED_MINORS:
        raise InputError(f"kubelet {text} is not supported: expected one of {supported_names()}", where=where)
    return profile(version.minor)


#: A kubelet may lag its API server by this many minors, and never lead it (the version-skew policy, 1.28+:
#: "kubelet must not be newer than kube-apiserver", "kubelet may be up to three minor versions older than
#: kube-apiserver", kubernetes.io/releases/version-skew-policy).
MAX_KUBELET_LAG = 3
#: A kubelet against its API server: the same minor, behind within the supported skew, beyond it, or ahead.
Skew = Literal["same", "behind", "beyond", "ahead"]


def kubelet_skew(server: KubeVersion, kubelet: KubeVersion) -> tuple[Skew, int | None]:
    """Where ``kubelet`` stands against the API server ``server`` under the version-skew policy, and how
    many minors it lags (negative: it leads; None across majors, where no skew is supported)."""
    if kubelet.major != server.major:
        return ("ahead" if kubelet.major > server.major else "beyond"), None
    lag = server.minor - kubelet.minor
    if lag < 0:
        return "ahead", lag
    if lag > MAX_KUBELET_LAG:
        return "beyond", lag
    return ("behind" if lag else "same"), lag


def supported_kubelets(server: KubeVersion) -> tuple[int, ...]:
    """The kubelet minors the version-skew policy supports under API server ``server``, oldest first."""
    return tuple(range(max(server.minor - MAX_KUBELET_LAG, 0), server.minor + 1))


def upgrade_hops(today: KubeVersion, target: KubeletProfile) -> tuple[int, ...]:
    """The minors a kubelet at ``today`` passes on its way to ``target`` one minor at a time, ``target``
    last; empty when ``target`` is not a newer minor of the same major. More than one hop skips minors,
    which kubeadm's upgrade does not do ("Skipping MINOR versions when upgrading is unsupported",
    kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-upgrade)."""
    if today.major != target.version.major or target.minor <= today.minor:
        return ()
    return tuple(range(today.minor + 1, target.minor + 1))
