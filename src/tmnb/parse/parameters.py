"""A parameter's YAML value (``-p target '{...}'``, ``--set``, ``--soak``) read with a person's
mistakes and an attacker's tricks in mind.

Aliases are refused: a parameter has no use for them, and ``&a [*a]`` or a "billion laughs" of
nested aliases would otherwise recurse or expand for minutes before any check runs. Numbers must be
finite: ``nan`` compares false with every threshold, so ``threshold_pct: nan`` would pass silently.
"""

from __future__ import annotations

import math
from typing import Any

import yaml

from tmnb.errors import InputError


class _NoAliases(yaml.SafeLoader):
    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            raise InputError("YAML aliases (*name) are not accepted in a parameter; write the value out")
        return super().compose_node(parent, index)


def non_finite(value: object, path: str = "") -> str | None:
    """The path of the first nan or infinity inside ``value`` (lists and maps walked), else None."""
    if isinstance(value, float) and not math.isfinite(value):
        return path or "the value"
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, item in items:
        found = non_finite(item, f"{path}.{key}" if isinstance(value, dict) else f"{path}[{key}]")
        if found:
            return found
    return None


def check_finite(value: object, *, where: str) -> None:
    """Refuse nan and infinities anywhere in a parameter's value."""
    found = non_finite(value)
    if found:
        at = "" if found == "the value" else f" at {found.lstrip('.')}"
        raise InputError(f"expected a finite number{at}, got {value!r}", where=where)


def load_parameter(text: str, *, where: str) -> Any:
    """One YAML value, without aliases, with finite numbers only."""
    loader = _NoAliases(text)
    try:
        value = loader.get_single_data()
    except InputError as exc:
        raise InputError(exc.message, where=where) from None
    except yaml.YAMLError as exc:
        raise InputError(f"expected a YAML value: {exc}", where=where) from None
    except (ValueError, RecursionError) as exc:  # an integer of thousands of digits; nesting past the stack
        raise InputError(f"expected a YAML value: {type(exc).__name__}: {exc}", where=where) from None
    finally:
        loader.dispose()
    try:
        check_finite(value, where=where)
    except RecursionError:
        raise InputError("expected a YAML value: nested too deeply", where=where) from None
    return value
