"""The kubelet settings of both snapshots, node by node, and the changes they add up to."""

from __future__ import annotations

import json

import pandas as pd

from tmnb.snapshot import Snapshot

DIFF_COLUMNS = ["node", "setting", "before", "after", "source_before", "source_after", "change"]


def _show(value: object) -> str:
    if value is None:
        return "(unset)"
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True)


def settings_diff(before: Snapshot, after: Snapshot) -> pd.DataFrame:
    """Per node, every kubelet setting whose value or deciding layer differs, and version changes."""
    old, new = {n.name: n for n in before.nodes}, {n.name: n for n in after.nodes}
    rows = []
    for name in sorted(old.keys() | new.keys()):
        a, b = old.get(name), new.get(name)
        if a is None or b is None:
            change = "node added" if a is None else "node removed"
            rows.append({"node": name, "setting": "(node)", "before": "", "after": "", "change": change})
            continue
        if a.versions.kubelet != b.versions.kubelet:
            rows.append(
                {
                    "node": name,
                    "setting": "kubelet version",
                    "before": _show(a.versions.kubelet),
                    "after": _show(b.versions.kubelet),
                    "change": "version",
                }
            )
        for setting in sorted(a.kubelet.settings.keys() | b.kubelet.settings.keys()):
            x, y = a.kubelet.settings.get(setting), b.kubelet.settings.get(setting)
            vx, vy = _show(x.value if x else None), _show(y.value if y else None)
            sx, sy = (x.source if x else ""), (y.source if y else "")
            if vx != vy or sx != sy:
                rows.append(
                    {
                        "node": name,
                        "setting": setting,
                        "before": vx,
                        "after": vy,
                        "source_before": sx,
                        "source_after": sy,
                        "change": "value" if vx != vy else "source only",
                    }
                )
    return pd.DataFrame(rows, columns=DIFF_COLUMNS).fillna("")


def settings_changes(diff: pd.DataFrame, examples: int = 3) -> pd.DataFrame:
    """The fleet view of a settings diff: each distinct change once, with how many nodes made it."""
    columns = ["setting", "before", "after", "change", "nodes", "examples"]
    if diff.empty:
        return pd.DataFrame(columns=columns)
    grouped = diff.groupby(["setting", "before", "after", "change"], sort=False)["node"]
    table = grouped.agg(
        nodes="count",
        examples=lambda s: ", ".join(sorted(s)[:examples]) + (", …" if len(s) > examples else ""),
    )
    return table.reset_index().sort_values(["nodes", "setting"], ascending=[False, True], ignore_index=True)[columns]
