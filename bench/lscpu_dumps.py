"""Check the sysfs reader against lscpu on util-linux's dumps of real machines (every architecture).

util-linux keeps /sys + /proc dumps of real machines in ``util-linux/tests/ts/lscpu/dumps/*.tar.gz``
with the output lscpu gives for each in ``util-linux/tests/expected/lscpu/lscpu-<name>`` (summary,
``-p``, ``-p -y``). Some were dropped from the tree over the years, so every tarball of the history
is used, each with the expected output of the same commit. For each dump this reads the dump as a
node root (``read_node_root``) and compares, where lscpu says it: the NUMA node -> CPU map, the
online CPUs, the NUMA node of each CPU, and the grouping of CPUs into cores and sockets.

    python bench/lscpu_dumps.py /path/to/util-linux.git [--keep DIR]

Run by hand (it needs a util-linux clone); prints one line per dump and a summary.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tarfile
import tempfile
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "tests"))  # the expected tables' reader
from lscpu_tables import Row
from lscpu_tables import table as read_table
from tmnb.cpuset import CPUSet
from tmnb.errors import TmnbError
from tmnb.parse.lscpu import parse_lscpu_summary
from tmnb.parse.sysfs_cpu import online_cpus, present_cpus, read_cpus
from tmnb.sources.node_render import CPU_SYSFS
from tmnb.sources.node_root import read_node_root

DUMPS = "tests/ts/lscpu/dumps"
EXPECTED = "tests/expected/lscpu"


@dataclass
class Result:
    name: str
    read: str = "ok"  # ok | lost | crash
    parsed: bool = False
    checked: list[str] = field(default_factory=list)
    disagree: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def _git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def extract(repo: Path, out: Path) -> list[Path]:
    """Every dump tarball in the history, with the expected lscpu output of the same commit."""
    names = sorted(
        {
            line
            for line in _git(repo, "log", "--all", "--format=", "--name-only", "--", f"{DUMPS}/*.tar.gz")
            .decode()
            .split()
        }
    )
    dirs = []
    for tar_path in names:
        name = Path(tar_path).name.removesuffix(".tar.gz")
        last = _git(repo, "log", "--all", "-1", "--format=%H", "--", tar_path).decode().strip()
        commit = last if subprocess.run(["git", "-C", str(repo), "cat-file", "-e", f"{last}:{tar_path}"],
                                        capture_output=True).returncode == 0 else f"{last}^"  # fmt: skip
        target = out / name
        target.mkdir(parents=True, exist_ok=True)
        (target / "dump.tar.gz").write_bytes(_git(repo, "show", f"{commit}:{tar_path}"))
        (target / "expected").write_bytes(_git(repo, "show", f"{commit}:{EXPECTED}/lscpu-{name}"))
        with tarfile.open(target / "dump.tar.gz") as tar:
            tar.extractall(target / "root", filter="data")
        dirs.append(target)
    return dirs


def _sections(text: str) -> tuple[str, str | None, str | None]:
    """Summary, ``-p`` and ``-p -y`` parts of an expected file."""
    parts = [p for p in text.split("\n\n") if p.strip()]
    tables = [p for p in parts if p.lstrip().startswith("#")]
    summary = next((p for p in parts if not p.lstrip().startswith("#")), "")
    return summary, tables[0] if tables else None, tables[1] if len(tables) > 1 else None


def _partition(groups: dict[object, set[int]]) -> set[frozenset[int]]:
    return {frozenset(v) for v in groups.values()}


def _group(rows: dict[int, Row], key: Callable[[Row], object]) -> dict[object, set[int]]:
    out: dict[object, set[int]] = defaultdict(set)
    for cpu, row in rows.items():
        out[key(row)].add(cpu)
    return out


def check(d: Path) -> Result:
    result = Result(d.name)
    root = d / "root" / d.name
    try:
        node = read_node_root(root, name=d.name)
    except TmnbError as exc:
        result.read = f"lost ({exc})"
        return result
    except Exception as exc:  # the point of this script is to find these
        result.read = f"crash ({type(exc).__name__}: {exc})"
        return result
    summary_text, table, physical = _sections((d / "expected").read_text())
    try:
        summary = parse_lscpu_summary("Architecture: (removed by the util-linux test)\n" + summary_text, source=d.name)
        logical = read_table(table) if table else None
        phys = read_table(physical) if physical else None
    except (TmnbError, ValueError, KeyError) as exc:
        result.disagree.append(f"lscpu output not parsed: {exc}")
        return result
    result.parsed = True

    if summary.numa_nodes:
        result.checked.append("numa")
        ours = {z.id: CPUSet.parse(z.cpus) for z in node.numa}
        if ours != summary.numa_nodes:
            result.disagree.append(f"NUMA map {ours} != lscpu {summary.numa_nodes}")
    cpu_root = root / CPU_SYSFS
    if summary.online is not None and cpu_root.is_dir():
        result.checked.append("online")
        online = online_cpus(cpu_root, present_cpus(cpu_root))
        if online != summary.online:
            result.disagree.append(f"online {online} != lscpu {summary.online}")
    known = {c.cpu: c for c in node.cpus if c.online}
    if logical and known and summary.numa_nodes and any(c.numa is not None for c in logical):
        result.checked.append("cpu numa")
        wrong = [c.cpu for c in logical if c.cpu in known and c.numa is not None and known[c.cpu].numa != c.numa]
        if wrong:
            result.disagree.append(f"NUMA node of CPUs {CPUSet(wrong)} differs")
    # The kubelet's ids are the kernel's (cadvisor reads core_id and physical_package_id), which is
    # what lscpu -p -y prints ("-" for -1): the grouping must be the same.
    if phys and known:
        rows = {c.cpu: c for c in phys if c.cpu in known}
        result.checked.append("cores+sockets (kernel ids)")
        # cadvisor also keys s390 cores by book and drawer, which lscpu -p -y does not print
        books = {c.cpu: (c.book_id, c.drawer_id) for c in read_cpus(cpu_root, report=lambda err: None)}
        cores_theirs = _partition(_group(rows, lambda c: (known[c.cpu].numa, c.socket, c.core, books.get(c.cpu))))
        cores_ours = _partition(_group(rows, lambda c: (known[c.cpu].numa, known[c.cpu].core)))
        sockets_theirs = _partition(_group(rows, lambda c: c.socket))
        sockets_ours = _partition(_group(rows, lambda c: known[c.cpu].socket))
        if cores_theirs != cores_ours or sockets_theirs != sockets_ours:
            result.disagree.append("cores or sockets differ from the kernel ids lscpu -y shows")
    # lscpu's own (logical) topology follows the sibling masks; where the kernel's ids say otherwise
    # the kubelet sees other cores than lscpu does. A finding about the machine, not a disagreement.
    if logical and known:
        rows = {c.cpu: c for c in logical if c.cpu in known and c.core is not None}
        if rows and _partition(_group(rows, lambda c: c.core)) != _partition(_group(rows, lambda c: known[c.cpu].core)):
            result.notes.append("the kubelet's cores differ from lscpu's (sibling masks)")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", type=Path, help="a util-linux git directory (a clone or a bare mirror)")
    parser.add_argument("--keep", type=Path, help="extract into this directory and keep it")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lscpu-dumps-") as tmp:
        dirs = extract(args.repo, args.keep or Path(tmp))
        results = [check(d) for d in dirs]
    for r in results:
        state = r.read if r.read != "ok" else ("agree" if r.parsed and not r.disagree else "DISAGREE")
        detail = "; ".join(r.disagree) or ",".join(r.checked) + "".join(f" [{n}]" for n in r.notes)
        print(f"{r.name:36} {state:10} {detail}")
    read = sum(r.read == "ok" for r in results)
    parsed = sum(r.parsed for r in results)
    agree = sum(r.read == "ok" and r.parsed and not r.disagree for r in results)
    noted = sum(bool(r.notes) for r in results)
    print(f"\n{len(results)} dumps: {read} read as a node, {parsed} lscpu outputs parsed, {agree} agree on every check")
    print(f"{noted} machines where the kubelet's cores (kernel ids) are not lscpu's (sibling masks)")
    return 0 if agree == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
