"""Would the kubelet restore its state files under these settings?

A policy change without deleting ``cpu_manager_state``/``memory_manager_state``, or a changed online
CPU set under the static policy, makes the kubelet refuse to start and crash-loop (the documented
fix is drain, stop, delete the file, start). The texts are those of ``state_checkpoint.go`` and
``policy_static.go`` ``validateState``.
"""

from __future__ import annotations

from tmnb.cpuset import CPUSet
from tmnb.errors import InputError
from tmnb.kubelet import gostr, options
from tmnb.kubelet.names import CPU_NONE, CPU_STATIC, MEMORY_NONE
from tmnb.parse.state_files import CpuManagerState, MemoryManagerState
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Finding, Findings
from tmnb.versions import KubeVersion


def validate_checkpoints(
    settings: KubeletSettings,
    *,
    version: KubeVersion,
    cpu_state: CpuManagerState | None = None,
    memory_state: MemoryManagerState | None = None,
    online_cpus: CPUSet | None = None,
) -> list[Finding]:
    out = Findings(version)
    root = settings.flags.root_dir if settings.flags is not None else "/var/lib/kubelet"
    if cpu_state is not None:
        _check_cpu_state(settings, version, cpu_state, online_cpus, f"{root}/cpu_manager_state", out)
    memory_policy = settings.value("memoryManagerPolicy", MEMORY_NONE)
    if memory_state is not None and memory_state.policy_name != memory_policy:
        inner = (
            f"[memorymanager] configured policy {gostr.quote(memory_policy)} differs from state checkpoint policy "
            f"{gostr.quote(memory_state.policy_name)}"
        )
        out.add(
            "state.memory-policy-mismatch",
            "memoryManagerPolicy",
            "error",
            f"could not restore state from checkpoint: {inner}, please drain this node and delete the memory manager "
            f"checkpoint file {gostr.quote(f'{root}/memory_manager_state')} before restarting Kubelet",
            kubelet=True,
        )
    return list(out)


def _check_cpu_state(
    settings: KubeletSettings,
    version: KubeVersion,
    state: CpuManagerState,
    online_cpus: CPUSet | None,
    path: str,
    out: Findings,
) -> None:
    policy = settings.value("cpuManagerPolicy", CPU_NONE)
    if state.policy_name != policy:
        out.add(
            "state.cpu-policy-mismatch",
            "cpuManagerPolicy",
            "error",
            f"could not restore state from checkpoint: configured policy {gostr.quote(policy)} differs from state "
            f"checkpoint policy {gostr.quote(state.policy_name)}, please drain this node and delete the "
            f"CPU manager checkpoint file {gostr.quote(path)} before restarting Kubelet",
            kubelet=True,
        )
        return
    if policy != CPU_STATIC or (not state.entries and not state.default_cpuset):
        return  # a fresh static state is initialised, not validated
    default = state.default_cpuset
    if not default:
        out.add("state.cpu-invalid", "cpuManagerPolicy", "error", "default cpuset cannot be empty", kubelet=True)
        return
    strict = _strict_cpu_reservation(settings, version)
    reserved = _reserved_cpus(settings)
    if reserved is not None:
        if strict and reserved & default:
            message = f'some of strictly reserved cpus: "{reserved}" are present in defaultCpuSet: "{default}"'
            out.add("state.cpu-invalid", "reservedSystemCPUs", "error", message, kubelet=True)
        elif not strict and not reserved <= default:
            message = f'not all reserved cpus: "{reserved}" are present in defaultCpuSet: "{default}"'
            out.add("state.cpu-invalid", "reservedSystemCPUs", "error", message, kubelet=True)
    for pod, containers in state.entries.items():
        for container, cpus in containers.items():
            if cpus & default:
                message = (
                    f'pod: {pod}, container: {container} cpuset: "{cpus}" overlaps with default cpuset "{default}"'
                )
                out.add("state.cpu-invalid", "cpuManagerPolicy", "error", message, kubelet=True)
    if online_cpus is None or (strict and reserved is None):
        return
    known = default | state.assigned() | (reserved if strict and reserved is not None else CPUSet())
    if known != online_cpus:
        out.add(
            "state.cpu-set-changed",
            "cpuManagerPolicy",
            "error",
            f'current set of available CPUs "{online_cpus}" doesn\'t match with CPUs in state "{known}"',
            kubelet=True,
        )


def _reserved_cpus(settings: KubeletSettings) -> CPUSet | None:
    """The reserved set when ``reservedSystemCPUs`` names it (otherwise the kubelet picks CPUs by topology)."""
    try:
        return CPUSet.parse(settings.value("reservedSystemCPUs", "")) or None
    except InputError:
        return None  # reported by validate_settings


def _strict_cpu_reservation(settings: KubeletSettings, version: KubeVersion) -> bool:
    try:
        parsed = options.parse_cpu_manager_options(
            settings.value("cpuManagerPolicyOptions", {}), version=version, feature_gates=settings.value("featureGates")
        )
    except InputError:  # ConfigRejected included: reported by validate_settings
        return False
    return parsed.strict_cpu_reservation
