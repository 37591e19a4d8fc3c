"""The replay layer: one node's change plan and the snapshot-to-kubelet-model conversion.

Below ``analysis``, ``sources``, ``sandbox`` and ``rollout``, above ``kubelet``, ``settings`` and
``snapshot``; pandas-free, so every consumer replays a node through the same door.
"""

from tmnb.replay.drain import DrainSteps, MovedFile, drain_steps, minor_upgrade
from tmnb.replay.node_input import (
    ACTIVE_PHASES,
    Mode,
    ModelMode,
    config_refusal,
    machine_of,
    model_for,
    model_pod,
    node_model,
    replay_order,
    settings_of,
    written_state_files,
)
from tmnb.replay.plan import DEFAULTS, EMPTY_BY_DEFAULT, NodePlan, kubelet_version, plan_for, plans_for, show_value

__all__ = [
    "ACTIVE_PHASES",
    "DEFAULTS",
    "EMPTY_BY_DEFAULT",
    "DrainSteps",
    "Mode",
    "ModelMode",
    "MovedFile",
    "NodePlan",
    "config_refusal",
    "drain_steps",
    "kubelet_version",
    "machine_of",
    "minor_upgrade",
    "model_for",
    "model_pod",
    "node_model",
    "plan_for",
    "plans_for",
    "replay_order",
    "settings_of",
    "show_value",
    "written_state_files",
]
