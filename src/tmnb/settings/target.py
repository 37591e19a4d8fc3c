"""A planned change's field names, checked before anything is predicted or written.

The kubelet decodes its main config file leniently: a misspelled field is dropped after one log
line and the change silently never happens. A target is what tmnb writes, so there an unknown
name is an error that names the closest known field.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from tmnb.errors import InputError
from tmnb.parse.kubelet_config import check_field_value
from tmnb.parse.kubelet_fields import FIELD_SINCE

#: The key of an upgrade what-if (``tmnb.kubelet.profiles.KUBELET_VERSION``, checked by a test): not imported
#: here, so that a typo is answered before the kubelet model loads.
KUBELET_VERSION = "kubeletVersion"
#: apiVersion/kind belong to the document, not to a change
_DOCUMENT = ("apiVersion", "kind")


def check_target_fields(
    target: Mapping[str, Any], *, where: str = "target", values: bool = True, upgrades: bool = True
) -> None:
    """Known field names with values the kubelet could decode (``--set cpuManagerPolicy=-1`` is a
    YAML integer the kubelet's JSON decoder refuses for a string field); ``values=False`` checks the
    names alone, before the values are parsed. ``kubeletVersion`` (an upgrade what-if) names a
    supported minor; ``upgrades=False`` refuses it (the rollout changes configuration, not binaries)."""
    for name, value in target.items():
        if name == KUBELET_VERSION:
            if not upgrades:
                raise InputError(
                    "a rollout changes the kubelet's configuration, not its version: upgrade the kubelet with your "
                    "node image or package pipeline, then roll the configuration out",
                    where=f"{where}.{name}",
                )
            if values:
                from tmnb.kubelet.profiles import parse_minor

                parse_minor(value, where=f"{where}.{name}")
            continue
        if name in FIELD_SINCE:
            if values:
                check_field_value(name, value, source=where)
                check_allowed_value(name, value, where=where)
            continue
        if name in _DOCUMENT:
            raise InputError(f"{name} is part of the file, not a field to change", where=f"{where}.{name}")
        close = difflib.get_close_matches(name, list(FIELD_SINCE), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]}?" if close else " (not a KubeletConfiguration v1beta1 field)"
        raise InputError(f"unknown KubeletConfiguration field {name!r}{hint}", where=f"{where}.{name}")


def allowed_values(name: str) -> tuple[str, ...]:
    """The values the kubelet accepts for a field with a fixed set (a policy or a scope); empty for any
    other field. Taken from the kubelet model's own names, imported here only when a value is checked."""
    from tmnb.kubelet.names import CPU_POLICIES, MEMORY_POLICIES, TOPOLOGY_SCOPES
    from tmnb.kubelet.topologymanager.policy import TOPOLOGY_POLICIES

    sets = {
        "topologyManagerPolicy": TOPOLOGY_POLICIES,
        "topologyManagerScope": TOPOLOGY_SCOPES,
        "cpuManagerPolicy": CPU_POLICIES,
        "memoryManagerPolicy": MEMORY_POLICIES,
    }
    return tuple(sets.get(name, ()))


def check_allowed_value(name: str, value: Any, *, where: str = "target") -> None:
    """A target value outside its field's allowed set is a typo to fix before anything runs, with
    the closest allowed value named, not a kubelet refusal to predict on every node of the fleet."""
    allowed = allowed_values(name)
    if not allowed or value in allowed:
        return
    close = difflib.get_close_matches(str(value), list(allowed), n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]}?" if close else ""
    raise InputError(f"{value!r} is not one of {', '.join(allowed)}{hint}", where=f"{where}.{name}")
