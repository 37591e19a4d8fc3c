"""What the manager rules ask alike: the kubelet's start-up checks of one area as findings, and the
hint for a policy name that differs from a known one only in case."""

from __future__ import annotations

import re

from tmnb.errors import InputError
from tmnb.kubelet import gostr
from tmnb.kubelet.startup.checks import STEPS, Area, Start
from tmnb.settings.findings import Findings


def kubelet_refusals(start: Start, area: Area, out: Findings) -> None:
    """Every start-up check of ``area`` (``kubelet.startup.checks.STEPS``), each run on its own: each refusal
    an error finding in the kubelet's words, under the step's code and field. A value the checks
    cannot read at all is ``config.invalid`` (once, however many checks read it)."""
    for step in STEPS:
        if step.area != area:
            continue
        try:
            refusals = step.check(start)
        except InputError as err:
            field = re.match(r"[A-Za-z]*", err.where or "")
            if not any(f.code == "config.invalid" and f.message == err.message for f in out):
                out.add("config.invalid", field.group() if field and field.group() else area, "error", err.message)
            continue
        for r in refusals:
            out.add(r.code, r.field, "error", r.text, kubelet=r.kubelet_text)


def case_hint(value: str, allowed: tuple[str, ...], manager: str, field: str, out: Findings) -> None:
    """The kubelet compares policy names case-sensitively; "Static" for the CPU manager earns a hint
    beside its refusal (tmnb's words, not the kubelet's)."""
    if value in allowed:
        return
    for candidate in allowed:
        if candidate.lower() == value.lower():
            out.add(
                f"{manager}.policy-case",
                field,
                "info",
                f"{field} values are case-sensitive: use {gostr.quote(candidate)}, not {gostr.quote(value)}",
            )
