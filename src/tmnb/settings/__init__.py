"""Effective kubelet settings with provenance, and their version-aware validation."""

from tmnb.settings.effective import Drift, KubeletSettings, Layer, Setting, effective_settings, without_configz
from tmnb.settings.validate import Finding, validate_checkpoints, validate_settings

__all__ = [
    "Drift",
    "Finding",
    "KubeletSettings",
    "Layer",
    "Setting",
    "effective_settings",
    "validate_checkpoints",
    "validate_settings",
    "without_configz",
]
