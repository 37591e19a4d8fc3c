"""What the manager rules ask alike: whether options are modelled for a version, the option-map
feature gate, reserved quantities, and the refusal of a policy name the manager does not have."""

from __future__ import annotations

from collections.abc import Mapping

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet import gostr, options
from tmnb.parse.quantity import ZERO, Quantity
from tmnb.settings.effective import KubeletSettings
from tmnb.settings.findings import Findings
from tmnb.versions import KubeVersion


def options_modelled(version: KubeVersion) -> bool:
    """Whether ``tmnb.kubelet.options`` knows this kubelet's options; older ones are not judged."""
    return version.major == 1 and version >= options.OLDEST_MODELLED


def map_gate(
    manager: options.Manager, opts: Mapping[str, str], version: KubeVersion, gates: Mapping[str, bool]
) -> None:
    """``run()`` checks the option-map gate before any manager exists, whatever the policy."""
    if not options.feature_gate_enabled(options.MAP_GATES[manager], version, gates):
        label = "topology manager policy options" if manager == "topology" else "CPU Manager policy options"
        extra = "" if manager == "topology" else '"CPUManager", '
        raise ConfigRejected(
            f"{label} {gostr.format_string_map(opts)} require feature gates {extra}"
            f"{gostr.quote(options.MAP_GATES[manager])} enabled"
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
