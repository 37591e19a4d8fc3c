"""A rollout's arguments checked before anything loads: ``tmnb rollout``'s flags (through
``session.prepare``) and 04-rollout's parameters (through ``report.checks``, before a kernel starts)
meet the same checks, in the same words, so a typo costs a second in either.

Only what the arguments alone tell is checked here (and the nodes of a snapshot file); what needs
the cluster, such as a kubelet flag that overrides the target, is found when the plan is built.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from tmnb.errors import InputError
from tmnb.settings.target import check_target_fields

_DNS1123 = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")

#: What 04-rollout's ``options`` may set, with its defaults: how the change is carried out and what
#: it tolerates (the same knobs ``tmnb rollout`` takes as flags).
NOTEBOOK_OPTIONS: dict[str, object] = {
    "drain_timeout": 300.0,
    "ready_timeout": 180.0,
    "auto_rollback": True,
    "allow_emptydir": False,
    "override": [],
    "test_namespace": "default",
    "test_image": "busybox:1.37",
    "node_files": "",
    "soak": {},
}


def validate_change_id(change_id: str) -> str:
    """Change ids name files and lock files: DNS-1123 keeps them safe everywhere."""
    if not isinstance(change_id, str) or len(change_id) > 63 or not _DNS1123.match(change_id):
        shown = change_id if not isinstance(change_id, str) or len(change_id) <= 80 else f"{change_id[:80]}…"
        raise InputError(
            f"expected a DNS-1123 name (lower-case letters, digits, '-', '.'; at most 63), got {shown!r}",
            where="change_id",
        )
    return change_id


def _option(name: str, value: object) -> Any:
    """``value`` if it has the type of the option's default (timeouts: a positive number). Any: that
    type depends on ``name``, and ``session.open_session`` hands each option to the knob of that type."""
    default = NOTEBOOK_OPTIONS[name]
    if isinstance(default, bool):
        ok = isinstance(value, bool)
    elif isinstance(default, float):
        ok = isinstance(value, int | float) and not isinstance(value, bool) and 0 < value < float("inf")
    else:
        ok = isinstance(value, type(default))
    if not ok:
        kind = "a positive number of seconds" if isinstance(default, float) else type(default).__name__
        raise InputError(f"expected {kind}, got {value!r}", where=f"parameter options.{name}")
    return value


def notebook_options(options: Mapping[str, object] | None) -> dict[str, Any]:
    """04-rollout's ``options`` by name and type, with the defaults of those not given."""
    given = dict(options or {})
    unknown = sorted(set(given) - set(NOTEBOOK_OPTIONS))
    if unknown:
        known = ", ".join(NOTEBOOK_OPTIONS)
        raise InputError(f"unknown option {unknown[0]!r}: expected one of {known}", where="parameter options")
    return {name: _option(name, given.get(name, default)) for name, default in NOTEBOOK_OPTIONS.items()}


def check_state_dir(state_dir: str) -> None:
    """The change's state folder must be a folder, or creatable as one."""
    if not state_dir:
        return
    path = Path(state_dir)
    existing = next((p for p in (path, *path.parents) if os.path.lexists(p)), None)
    if existing is not None and not existing.is_dir():
        what = "is" if existing == path else f"is under {existing}, which is"
        raise InputError(
            f"{what} not a folder: the state folder holds the change's plan, journal and backups",
            source=state_dir,
            where="state_dir",
        )


def check_arguments(
    *,
    target: Mapping[str, Any],
    change_id: str,
    mode: str,
    executor: str,
    waves: int | Sequence[Sequence[str]] = 5,
    state_dir: str = "",
    node_selector: str = "",
) -> None:
    """Everything a rollout's arguments alone tell, in the order a person reads them."""
    from tmnb.snapshot.select import parse_selector

    validate_change_id(change_id)
    if not isinstance(target, Mapping):
        raise InputError(f"expected a mapping of KubeletConfiguration fields, got {target!r}", where="target")
    check_target_fields(target, upgrades=False)  # a rollout writes configuration, never a kubelet version
    if mode not in ("plan", "execute"):
        raise InputError(f"expected plan or execute, got {mode!r}", where="mode")
    if mode == "execute" and executor == "dry-run":
        raise InputError(
            "mode='execute' writes through an executor: choose local, ssh, node-pod or sandbox", where="executor"
        )
    if isinstance(waves, int) and not isinstance(waves, bool) and waves < 1:
        raise InputError(f"expected a wave size of at least 1, got {waves}", where="waves")
    check_state_dir(state_dir)
    parse_selector(node_selector)
