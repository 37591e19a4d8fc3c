"""The kubelet's start-up, from its decoded configuration to the resource managers' inputs, in the
kubelet's order: decode (``config``), validation (``validation``), ``run()`` (``run``) and the Node
Allocatable reservation (``allocatable``). The first stage that fails raises ``ConfigRejected`` with
the kubelet's own text; what comes out is the ``ModelSettings`` that ``NodeSimulator`` creates and
starts the managers from.

Ports the order of ``NewKubeletCommand`` and ``run`` in cmd/kubelet/app/server.go (1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tmnb.kubelet.node import Machine, ModelSettings
from tmnb.kubelet.profiles import DEFAULT_MINOR, KubeletProfile, profile
from tmnb.kubelet.startup.allocatable import allocatable_reservation, capacity, reserved_cpu_count, reserved_memory_of
from tmnb.kubelet.startup.config import decode
from tmnb.kubelet.startup.run import reservations, run_checks
from tmnb.kubelet.startup.types import Hardware
from tmnb.kubelet.startup.validation import validate


def start_settings(
    config: Mapping[str, Any], machine: Machine, *, kubelet: KubeletProfile | None = None
) -> ModelSettings:
    """The managers' settings for ``kubelet``'s minor started with ``config`` on ``machine``: decode,
    validation (``VALIDATION``, all failures together), ``run()``'s checks (``RUN``, the first
    failure), as the kubelet stops at the first stage that fails."""
    kubelet = kubelet or profile(DEFAULT_MINOR)
    cfg = decode(config, kubelet)
    validate(cfg, kubelet)
    run_checks(cfg, kubelet, Hardware(online_cpus=frozenset(c.cpu for c in machine.cpus)))
    caps = capacity(machine)
    reservation = allocatable_reservation(caps, reservations(cfg))
    return ModelSettings(
        topology_manager_policy=cfg["topologyManagerPolicy"],
        topology_manager_scope=cfg["topologyManagerScope"],
        topology_manager_policy_options=dict(cfg.get("topologyManagerPolicyOptions") or {}),
        cpu_manager_policy=cfg["cpuManagerPolicy"],
        cpu_manager_policy_options=dict(cfg.get("cpuManagerPolicyOptions") or {}),
        reserved_system_cpus=cfg.get("reservedSystemCPUs") or None,
        reserved_cpu_count=reserved_cpu_count(reservation),
        memory_manager_policy=cfg["memoryManagerPolicy"],
        reserved_memory=reserved_memory_of(cfg),
        kubelet=kubelet,
        feature_gates=dict(cfg.get("featureGates") or {}),
        capacity=caps,
        allocatable_reservation=reservation,
    )
