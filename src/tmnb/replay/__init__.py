"""The replay layer: one node's change plan and the snapshot-to-kubelet-model conversion.

Below ``analysis``, ``sources``, ``sandbox`` and ``rollout``, above ``kubelet``, ``settings`` and
``snapshot``; pandas-free, so every consumer replays a node through the same door.
"""

from tmnb.replay.node_input import (
    Mode,
    ModelMode,
    config_refusal,
    machine_of,
    model_for,
    model_pod,
    node_model,
    settings_of,
    written_state_files,
)
from tmnb.replay.plan import DEFAULTS, EMPTY_BY_DEFAULT, NodePlan, kubelet_version, plan_for, plans_for, show_value

__all__ = [
    "DEFAULTS",
    "EMPTY_BY_DEFAULT",
    "Mode",
    "ModelMode",
    "NodePlan",
    "config_refusal",
    "kubelet_version",
    "machine_of",
    "model_for",
    "model_pod",
    "node_model",
    "plan_for",
    "plans_for",
    "settings_of",
    "show_value",
    "written_state_files",
]
