"""What differs between kubelet minors, read from their profiles: the table 01-inventory shows for the
minors a fleet runs and 03-readiness for an upgrade (today's minors and the planned one).

Every value comes from ``tmnb.kubelet.profiles`` and its gate table; this module only lays them out,
one row per fact whose value is not the same in every minor shown (docs/kubelet-minors.md has the
whole table).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import partial

import pandas as pd

from tmnb.kubelet.profiles import (
    CPU_STATE,
    MEMORY_STATE,
    STAGE_GATES,
    STATE_INLINE,
    SUPPORTED_MINORS,
    TOPOLOGY_OPTIONS_GATE,
    Gate,
    KubeletProfile,
    Manager,
    PodLevelHandling,
    profile,
)
from tmnb.parse.kubelet_fields import FIELD_SINCE

PLRM = "PodLevelResourceManagers"
#: The gates a Topology Manager change meets, shown whenever they differ (besides the ones a fleet sets).
TOPOLOGY_GATES: tuple[str, ...] = (
    TOPOLOGY_OPTIONS_GATE,
    *dict.fromkeys(STAGE_GATES.values()),
    "MemoryManager",
    "PodLevelResources",
    PLRM,
    "PodLevelResourcesFixKubeletQOSClass",
)
_STAGE_WORDS = {"ALPHA": "alpha", "BETA": "beta", "GA": "GA", "DEPRECATED": "deprecated"}
_POD_LEVEL: dict[PodLevelHandling, str] = {
    "pinned": "pinned as the containers ask",
    "skipped-with-gate": "skipped while PodLevelResources is on",
    "skipped-unless-pod-level-managers": "skipped unless PodLevelResources and PodLevelResourceManagers are on",
}
_MATURITY = {"alpha": "alpha", "beta": "beta", "ga": "GA"}


def describe_gate(gate: Gate | None) -> str:
    """A gate as a minor registers it, in a few words ("GA, locked to true", "beta, off by default")."""
    if gate is None:
        return "–"
    go = "true" if gate.default else "false"
    state = f"locked to {go}" if gate.locked else f"{'on' if gate.default else 'off'} by default"
    return f"{_STAGE_WORDS[gate.stage]}, {state}"


def _yes(value: bool) -> str:
    return "yes" if value else "no"


def _format(name: str, written: str) -> str:
    inline = STATE_INLINE[name].get(written)
    return written.upper() + (f" ({inline.upper()} fields inline)" if inline else "")


def _written(p: KubeletProfile, name: str) -> str:
    plain = p.state_written(name, {})
    gated = p.state_written(name, {PLRM: True}) if PLRM in p.gates else plain
    shown = _format(name, plain)
    return shown if gated == plain else f"{shown} ({_format(name, gated)} with {PLRM})"


def _empty_best_effort(p: KubeletProfile) -> str:
    if not p.gate_on("PodLevelResources", None):
        return "(PodLevelResources off)"
    return _yes(p.empty_pod_resources_best_effort(None))


def _maturity(manager: Manager, name: str, p: KubeletProfile) -> str:
    return _MATURITY.get(p.option_maturity(manager, name) or "", "–")


def _gate(gate: str, p: KubeletProfile) -> str:
    return describe_gate(p.gates.get(gate))


def _field(name: str, p: KubeletProfile) -> str:
    return "known" if p.knows_field(name) else "–"


def facts(gates: Iterable[str] = ()) -> list[tuple[str, Callable[[KubeletProfile], str]]]:
    """Every fact shown, as (name, value in a profile); ``gates``: more gates to show (a fleet's)."""
    out: list[tuple[str, Callable[[KubeletProfile], str]]] = []
    managers: tuple[Manager, ...] = ("topology", "cpu")
    for manager in managers:
        names = dict.fromkeys(n for m in SUPPORTED_MINORS for n in profile(m).options(manager))
        for name in names:
            out.append((f"{manager} manager option {name}", partial(_maturity, manager, name)))
    for gate in dict.fromkeys((*TOPOLOGY_GATES, *sorted(gates))):
        out.append((f"{gate} gate", partial(_gate, gate)))
    out += [
        ("gate dependencies checked", lambda p: _yes(bool(p.gate_dependencies))),
        ("failCgroupV1 default", lambda p: "true" if p.fail_cgroup_v1 else "false"),
        ("static CPU / Memory managers and pod-level spec.resources", lambda p: _POD_LEVEL[p.pod_level_resources]),
        ("device hints only over the NUMA nodes holding the devices", lambda p: _yes(p.device_hints_over_device_nodes)),
        ("spec.resources: {} makes a pod BestEffort", _empty_best_effort),
        (f"{CPU_STATE} written", lambda p: _written(p, CPU_STATE)),
        (f"{CPU_STATE} read", lambda p: ", ".join(sorted(f.upper() for f in p.state_read(CPU_STATE)))),
        (f"{MEMORY_STATE} written", lambda p: _written(p, MEMORY_STATE)),
        (f"{MEMORY_STATE} read", lambda p: ", ".join(sorted(f.upper() for f in p.state_read(MEMORY_STATE)))),
        ("negative imageMinimumGCAge refused", lambda p: _yes(p.refuses_negative_image_gc_age)),
    ]
    for name in FIELD_SINCE:
        out.append((f"field {name}", partial(_field, name)))
    return out


def differences(profiles: Iterable[KubeletProfile], gates: Iterable[str] = ()) -> pd.DataFrame:
    """One row per fact whose value differs between ``profiles`` (a column per minor, in minor order);
    empty with fewer than two minors."""
    wanted = {p.minor for p in profiles}
    shown: Sequence[KubeletProfile] = [profile(m) for m in SUPPORTED_MINORS if m in wanted]
    columns = ["fact", *(p.name for p in shown)]
    rows = []
    for name, value in facts(gates) if len(shown) > 1 else ():
        values = [value(p) for p in shown]
        if len(set(values)) > 1:
            rows.append([name, *values])
    return pd.DataFrame(rows, columns=columns)
