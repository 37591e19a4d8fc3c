"""Names for the kubelet log messages that matter when the Topology Manager changes.

Structured messages are matched exactly (they are stable strings in the kubelet's source:
``scope_container.go`` "Best TopologyHint", ``allocation_manager.go``/``kubelet.go`` "Pod
admission denied", ``cpu_manager.go``/``memory_manager.go`` "Could not initialize checkpoint
manager, please drain node and remove policy state file", component-base ``run.go`` "command
failed", ``server.go`` "Kubelet version"); older unstructured ones (``[topologymanager] ...``,
1.16–1.20) and systemd's unit lines by their leading words. The name is the timeline's kind.
"""

from __future__ import annotations

import re
from typing import Any

#: name → what it means (the postmortem shows these)
NAMES: dict[str, str] = {
    "kubelet_start": "systemd started the kubelet unit",
    "kubelet_version": "the kubelet process started (its first lines name the version)",
    "kubelet_stop": "systemd stopped the kubelet unit",
    "kubelet_exit": "the kubelet process exited (systemd's exit status)",
    "config_invalid": "the kubelet refused its configuration at start-up",
    "command_failed": "the kubelet exited at start-up with an error",
    "cpu_checkpoint_failed": "the CPU manager could not restore cpu_manager_state",
    "memory_checkpoint_failed": "the memory manager could not restore memory_manager_state",
    "container_manager_failed": "the container manager (CPU, memory, device, topology managers) did not start",
    "topology_manager_created": "the Topology Manager started with its policy and scope",
    "topology_hints": "hints from the CPU, memory or device manager for a container or pod",
    "topology_best_hint": "the hint the Topology Manager policy merged for a container or pod",
    "topology_admit_check": "the Topology Manager began an admission",
    "topology_admit": "the Topology Manager admitted a container with its affinity",
    "topology_affinity_error": "a pod was rejected: TopologyAffinityError",
    "smt_alignment_error": "a pod was rejected: SMTAlignmentError (full-pcpus-only)",
    "admission_denied": "a pod was rejected at admission for another reason",
}

_CHECKPOINT = "Could not initialize checkpoint manager, please drain node and remove policy state file"
_EXACT = {
    "Kubelet version": "kubelet_version",
    "Creating topology manager with policy per scope": "topology_manager_created",
    "Creating topology manager with none policy": "topology_manager_created",
    "TopologyHints": "topology_hints",
    "ContainerTopologyHint": "topology_hints",
    "PodTopologyHint": "topology_hints",
    "TopologyHints generated": "topology_hints",
    "Hint Provider has no preference for NUMA affinity with any resource": "topology_hints",
    "Hint Provider has no preference for NUMA affinity with resource": "topology_hints",
    "Hint Provider has no possible NUMA affinities for resource": "topology_hints",
    "Best TopologyHint": "topology_best_hint",
    "Topology manager admission check": "topology_admit_check",
    "Topology Admit Handler": "topology_admit_check",
    "Topology Affinity": "topology_admit",
    "Failed to start ContainerManager": "container_manager_failed",
}
#: unstructured messages (old kubelets) and plain text, by their start
_LEADING = [
    (re.compile(r"^\[topologymanager\] Creating topology manager with"), "topology_manager_created"),
    (re.compile(r"^\[topologymanager\] (ContainerTopologyHint|PodTopologyHint|TopologyHints|Hint Provider)"),
     "topology_hints"),
    (re.compile(r"^\[topologymanager\] Best TopologyHint"), "topology_best_hint"),
    (re.compile(r"^\[topologymanager\] Topology Admit Handler"), "topology_admit_check"),
    (re.compile(r"^\[topologymanager\] Topology Affinity for"), "topology_admit"),
    (re.compile(r"^Version: v\d"), "kubelet_version"),
    (re.compile(r"^Failed to start ContainerManager"), "container_manager_failed"),
]  # fmt: skip
_SYSTEMD = [
    (re.compile(r"^Started kubelet\b"), "kubelet_start"),
    (re.compile(r"^Stopped kubelet\b"), "kubelet_stop"),
    (re.compile(r"^kubelet\.service: Main process exited"), "kubelet_exit"),
]
_AFFINITY = ("TopologyAffinityError", "Topology Affinity Error")


def systemd_name(message: str) -> str | None:
    """The name of one of systemd's lines about the kubelet unit (start, stop, exit), or None."""
    return next((name for pattern, name in _SYSTEMD if pattern.search(message)), None)


def _rejection(reason: str, text: str) -> str:
    if reason in _AFFINITY or "Resources cannot be allocated with Topology locality" in text:
        return "topology_affinity_error"
    if reason == "SMTAlignmentError" or "SMT Alignment Error" in text:
        return "smt_alignment_error"
    return "admission_denied"


def _checkpoint(source: str, text: str) -> str:
    if "memory_manager" in source or "memory manager" in text.lower() or "[memorymanager]" in text:
        return "memory_checkpoint_failed"
    return "cpu_checkpoint_failed"


def _failed_command(text: str) -> str:
    if "failed to validate kubelet configuration" in text or "invalid configuration:" in text:
        return "config_invalid"
    return "command_failed"


def recognise(message: str, values: dict[str, Any], *, source: str | None, ident: str | None, fmt: str) -> str | None:
    """The name of a record's message, or None for everything else the kubelet says."""
    err = str(values.get("err", ""))
    if fmt == "text" and ident == "systemd":
        return systemd_name(message)
    if message == "Pod admission denied":
        return _rejection(str(values.get("reason", "")), str(values.get("message", "")))
    if message == _CHECKPOINT:
        return _checkpoint(source or "", err)
    if message == "command failed":
        return _failed_command(err)
    if message in _EXACT:
        return _EXACT[message]
    for pattern, name in _LEADING:
        if pattern.search(message):
            return name
    if "failed to validate kubelet configuration" in message:
        return "config_invalid"
    if "could not restore state from checkpoint" in message:
        return _checkpoint(source or "", message)
    if "Topology Affinity Error" in message or "Resources cannot be allocated with Topology locality" in message:
        return "topology_affinity_error"
    if "SMT Alignment Error" in message:
        return "smt_alignment_error"
    return None
