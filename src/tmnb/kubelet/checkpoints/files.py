"""Both state files of a kubelet's root directory: written as a minor writes them, and which minors'
readers refuse the bytes of one.

What a kubelet of another minor, or with other gates, would make of the same files is what an
upgrade, a downgrade or a gate change meets at the next start. No kubelet file of its own: it runs
``cpu_state`` and ``memory_state`` as each minor (``profiles``) would.
"""

from __future__ import annotations

from collections.abc import Mapping

from tmnb.kubelet.checkpoints.cpu_state import CPUState, render_cpu_state, restore_cpu_state
from tmnb.kubelet.checkpoints.memory_state import MemoryState, render_memory_state, restore_memory_state
from tmnb.kubelet.checkpoints.restore import Manager, RestoreError, StateFiles
from tmnb.kubelet.profiles import SUPPORTED_MINORS, KubeletProfile, profile


def _readers() -> list[tuple[KubeletProfile, dict[str, object]]]:
    out: list[tuple[KubeletProfile, dict[str, object]]] = []
    for minor in SUPPORTED_MINORS:
        kubelet = profile(minor)
        out.append((kubelet, {}))
        if kubelet.gate_default("PodLevelResourceManagers") is not None:
            out.append((kubelet, {"PodLevelResourceManagers": True}))
    return out


def load_errors(manager: Manager, text: str | bytes, policy: str) -> dict[str, str]:
    """Per checkpoint reader (``KubeletProfile.state_reader``), the error its ``restoreState`` meets
    loading this file (the formats it tries, their checksums), for the readers that refuse it: what
    a kubelet of another minor, or with other gates, would say of the same bytes. ``policy``: the
    file's own, so only the load is judged, not the configured policy."""
    files = StateFiles(text, None) if manager == "cpu" else StateFiles(None, text)
    refused: dict[str, str] = {}
    for kubelet, gates in _readers():
        try:
            if manager == "cpu":
                restore_cpu_state(files, policy=policy, kubelet=kubelet, feature_gates=gates)
            else:
                restore_memory_state(files, policy=policy, kubelet=kubelet, feature_gates=gates)
        except RestoreError as err:
            if not err.inner.startswith(("configured policy", "[memorymanager] configured policy", "could not parse")):
                refused[kubelet.state_reader(gates)] = err.inner
    return refused


def render_state_files(
    kubelet: KubeletProfile,
    feature_gates: Mapping[str, object] | None,
    cpu: CPUState | None,
    memory: MemoryState | None,
    *,
    root_dir: str = "/var/lib/kubelet",
) -> StateFiles:
    """Both checkpoint files as ``kubelet`` writes them (None: no such file)."""
    return StateFiles(
        None if cpu is None else render_cpu_state(cpu, kubelet, feature_gates),
        None if memory is None else render_memory_state(memory, kubelet, feature_gates),
        root_dir,
    )
