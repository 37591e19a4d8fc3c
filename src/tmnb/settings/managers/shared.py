"""What the manager rules ask alike: the topology option-map feature gate, reserved quantities, and
the refusal of a policy name the manager does not have."""

from __future__ import annotations

from collections.abc import Mapping

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.profiles import TOPOLOGY_OPTIONS_GATE, KubeletProfile
from tmnb.parse.quantity import ZERO, Quantity
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings


def topology_map_gate(opts: Mapping[str, str], kubelet: KubeletProfile, gates: Mapping[str, bool]) -> None:
    """``run()`` checks the topology option-map gate before any manager exists, whatever the policy
    (reachable while the gate is GA but not locked, 1.33-1.35)."""
    if opts and not kubelet.gate_on(TOPOLOGY_OPTIONS_GATE, gates):
        raise ConfigRejected(
            f"topology manager policy options {gostr.format_string_map(opts)} require feature gates "
            f"{gostr.quote(TOPOLOGY_OPTIONS_GATE)} enabled"
        )


def reserved_quantity(settings: KubeletSettings, field: str, resource: str, out: Findings) -> Quantity:
    """``field[resource]`` (kubeReserved, systemReserved); a malformed one is a finding and counts zero."""
    text = (settings.value(field, {}) or {}).get(resource)
    if text is None:
        return ZERO
    try:
        return Quantity.parse(text)
    except InputError as err:
        out.add("config.invalid-quantity", field, "error", f"{field}.{resource}: {err.message}")
        return ZERO


def known_policy(policy: str, allowed: tuple[str, ...], manager: str, field: str, out: Findings) -> bool:
    """Whether the manager has this policy; if not, the kubelet's refusal is a finding."""
    if policy in allowed:
        return True
    out.add(
        f"{manager}.policy", field, "error", f'unknown policy: "{policy}"' + _case_hint(policy, allowed), kubelet=True
    )
    return False


def _case_hint(value: str, allowed: tuple[str, ...]) -> str:
    """The kubelet compares policy names case-sensitively; "Static" for the CPU manager earns a hint."""
    for candidate in allowed:
        if candidate.lower() == value.lower():
            return f" (values are case-sensitive: use {gostr.quote(candidate)})"
    return ""
