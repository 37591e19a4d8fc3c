"""Findings: what validation reports, in the kubelet's words where the kubelet has words."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from tmnb.kubelet import gostr
from tmnb.versions import KubeVersion

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Finding:
    """One validation result. ``kubelet_text`` is true when ``message`` is the kubelet's own words."""

    code: str
    field: str
    severity: Severity
    message: str
    kubelet_version: str
    kubelet_text: bool = False


class Findings(list[Finding]):
    """Collects findings for one kubelet version."""

    def __init__(self, version: KubeVersion | None) -> None:
        super().__init__()
        self.version = str(version) if version is not None else "unknown"

    def add(self, code: str, field: str, severity: Severity, message: str, *, kubelet: bool = False) -> None:
        self.append(Finding(code, field, severity, message, self.version, kubelet))


def show(value: object) -> str:
    """A configuration value as a finding prints it: strings Go-quoted, maps inline."""
    if isinstance(value, str):
        return gostr.quote(value)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {show(v)}" for k, v in value.items()) + "}"
    return str(value).lower() if isinstance(value, bool) else str(value)
