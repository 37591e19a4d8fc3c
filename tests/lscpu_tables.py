"""The expected ``lscpu -p`` tables of util-linux's test dumps, read for comparison with tmnb's sysfs
reader (tests/parse/test_sysfs_real.py and bench/lscpu_dumps.py): tmnb itself reads sysfs, not lscpu."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Row:
    """One row of an expected ``lscpu -p`` table; None where lscpu printed nothing or ``-``."""

    cpu: int
    core: int | None
    socket: int | None
    numa: int | None


def table(text: str) -> list[Row]:
    """The CPU, Core, Socket and Node columns of an expected ``lscpu -p`` table."""
    header: list[str] = []
    rows = []
    for line in text.splitlines():
        if line.startswith("#"):
            names = [n.strip().lower() for n in line[1:].split(",")]
            header = names if names[0] == "cpu" else header
            continue
        cells = dict(zip(header, line.split(","), strict=True))
        ids = [int(cells[k]) if cells.get(k, "").isdigit() else None for k in ("core", "socket", "node")]
        rows.append(Row(int(cells["cpu"]), *ids))
    return rows
