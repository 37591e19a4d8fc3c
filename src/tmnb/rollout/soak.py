"""The soak after the canary: wait, then compare application metrics before and after the change.

The same statistics as 05-compare (tmnb.metrics: Prometheus or a CSV/Parquet file, bootstrap
intervals that account for serial and replica correlation; a regression is a median change whose
whole interval lies beyond ``threshold_pct``, so a possible regression does not stop the rollout).
The change window comes from the rollout journal, so the before window ends at the canary's first
step and the after window starts one rate window after its last.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tmnb.errors import InputError

DEFAULT_SIGNALS = ("cpu_usage", "cpu_throttling")


@dataclass(frozen=True)
class Soak:
    minutes: float = 0.0
    prometheus_url: str = ""
    metrics_file: str = ""
    signals: Sequence[str] = DEFAULT_SIGNALS
    selector: str = ""
    group_by: Sequence[str] = ("namespace", "container")
    threshold_pct: float = 5.0
    rate_window: str = "5m"
    #: seconds to wait; None: the soak window plus one rate window, so the after window is full
    wait: float | None = None

    @classmethod
    def from_param(cls, value: Mapping[str, Any] | None) -> Soak | None:
        """The notebook's ``soak`` dict (``{}`` or None: no soak)."""
        if not value:
            return None
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(value) - known)
        if unknown:
            raise InputError(f"unknown soak field(s) {', '.join(unknown)}: expected {', '.join(sorted(known))}",
                             where="soak")  # fmt: skip
        soak = cls(**dict(value))
        if soak.minutes <= 0:
            raise InputError(f"soak minutes must be > 0, got {soak.minutes}", where="soak.minutes")
        if not (soak.prometheus_url or soak.metrics_file):
            raise InputError("a soak compares metrics: set prometheus_url or metrics_file", where="soak")
        return soak

    @property
    def window(self) -> str:
        return f"{max(round(self.minutes * 60), 1)}s"


def check(soak: Soak, journal: str | Path, *, sleep: Callable[[float], None] = time.sleep) -> tuple[list[str], str]:
    """Wait, then (regressions, what was compared); no regressions means the rollout may go on."""
    from tmnb.metrics import stats
    from tmnb.metrics.collect import collect
    from tmnb.metrics.queries import build, step_for
    from tmnb.metrics.windows import parse_duration, resolve

    rate = parse_duration(soak.rate_window, where="soak.rate_window")
    sleep(soak.wait if soak.wait is not None else soak.minutes * 60 + rate)
    windows = resolve(str(journal), length=soak.window, margin=soak.rate_window)
    wanted = build(list(soak.signals), {}, selector=soak.selector, group_by=list(soak.group_by), rate=soak.rate_window)
    got = collect(
        prometheus_url=soak.prometheus_url,
        metrics_file=soak.metrics_file,
        signals=wanted,
        windows=windows,
        step=step_for(rate),
    )
    if not got.with_data():
        raise InputError(f"the soak found no metrics to compare: {got.markdown(windows)}", where="soak")
    table = stats.compare(
        got.frame, group_by=list(soak.group_by), threshold_pct=soak.threshold_pct, signals=got.signals
    )
    decided = table[table["verdict"] != "insufficient data"] if not table.empty else table
    if decided.empty:
        raise InputError(
            f"the soak cannot decide: no series has enough samples in both windows ({windows.describe()}); "
            "soak longer or use a shorter rate_window",
            where="soak",
        )
    compared = f"{len(decided)} series compared over {windows.describe()}"
    return stats.regressions(table), compared
