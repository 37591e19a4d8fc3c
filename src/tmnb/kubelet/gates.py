"""The configuration file's ``featureGates`` merged as each kubelet minor merges them.

``SetDefaults_KubeletConfiguration`` copies the kubelet's gate set and applies the file's map with
``SetFromMap``; any error there is a Go panic while the file is decoded, before validation:
``panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: ...``
(kubernetes #140848). ``SetFromMap`` walks the map and stops at the first unknown gate; it refuses a
locked gate set to the other value; ``AllAlpha``/``AllBeta`` set every alpha/beta gate the map does
not name; from 1.35 it then checks every enabled gate's dependencies (sorted lists) and reports each
failing gate. The kubelet walks Go maps in random order, so with several errors its order varies
from start to start: here the file's key order is used for the map and the gates' names for the
dependencies.

Ports ``SetFromMap`` of k8s.io/component-base/featuregate/feature_gate.go as
``SetDefaults_KubeletConfiguration`` (pkg/kubelet/apis/config/v1beta1/defaults.go) calls it
(1.33–1.37).
"""

from __future__ import annotations

from collections.abc import Mapping

from tmnb.errors import ConfigRejected, InputError
from tmnb.kubelet.profiles import KubeletProfile

PANIC = "panic: failed to merge global and in-flight KubeletConfiguration while setting defaults, error: "
_STAGE_SWITCHES = {"AllAlpha": "ALPHA", "AllBeta": "BETA"}


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def _aggregate(errors: list[str]) -> str:
    unique = list(dict.fromkeys(errors))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def dependency_error(gate: str, disabled: list[str]) -> str:
    return f"{gate} is enabled, but depends on features that are disabled: [{' '.join(disabled)}]"


def unmet_dependencies(profile: KubeletProfile, enabled: Mapping[str, bool]) -> list[tuple[str, list[str]]]:
    """Every enabled gate whose dependencies ``profile`` checks and finds off, by gate name, with those
    dependencies (none before 1.35, which does not check them)."""
    out = []
    for name, needs in sorted(profile.gate_dependencies.items()):
        disabled = [need for need in needs if not enabled.get(need, False)]
        if enabled.get(name, False) and disabled:
            out.append((name, disabled))
    return out


def merge_feature_gates(
    profile: KubeletProfile, feature_gates: Mapping[str, object] | None, *, dependencies: bool = True
) -> dict[str, bool]:
    """Every gate of ``profile`` with the file's values applied, or ``ConfigRejected`` with the panic
    the kubelet of that minor dies with (``dependencies=False``: without the dependency check)."""
    wanted: dict[str, bool] = {}
    for name, value in (feature_gates or {}).items():
        if not isinstance(value, bool):
            raise InputError(f"feature gate {name} must be true or false, got {value!r}", where="featureGates")
        wanted[name] = value
    enabled = {name: gate.default for name, gate in profile.gates.items()}
    errors: list[str] = []
    for name, value in wanted.items():
        gate = profile.gates.get(name)
        if gate is None:
            errors.append(f"unrecognized feature gate: {name}")
            break  # SetFromMap returns at the first unknown gate
        if gate.locked and value != gate.default:
            errors.append(
                f"cannot set feature gate {name} to {_go_bool(value)}, feature is locked to {_go_bool(gate.default)}"
            )
            continue
        stage = _STAGE_SWITCHES.get(name)
        if stage is not None:
            for other, spec in profile.gates.items():
                if spec.stage == stage and other not in wanted:
                    enabled[other] = value
        enabled[name] = value
    if not errors and dependencies:
        errors = [dependency_error(name, disabled) for name, disabled in unmet_dependencies(profile, enabled)]
    if errors:
        raise ConfigRejected(PANIC + _aggregate(errors))
    return enabled
