"""Find what a postmortem reads in a run folder, a folder of run folders or an evidence bundle.

Snapshots (``snapshot.json.gz`` of a report, ``snapshots/before.json.gz`` of a rollout), the
rollout journal and the run manifests are found by name, so the demo's folder, a rollout's state
folder and an unpacked bundle all read the same way. Nothing here needs the cluster.
"""

from __future__ import annotations

import fnmatch
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tmnb.errors import InputError
from tmnb.evidence import unpack
from tmnb.snapshot import Snapshot, load

if TYPE_CHECKING:
    from tmnb.analysis.diagnose import Diagnosis
    from tmnb.parse.klog import KubeletLog

#: whole-cluster snapshots (a rollout's per-node ``after-NODE`` snapshots are read as well, per node)
FULL_SNAPSHOTS = ("snapshot.json.gz", "snapshot.json", "before.json.gz")


@dataclass
class Evidence:
    root: Path
    snapshots: list[tuple[Path, Snapshot]] = field(default_factory=list)
    node_snapshots: list[tuple[Path, Snapshot]] = field(default_factory=list)
    journal: list[dict[str, Any]] = field(default_factory=list)
    journal_path: Path | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)
    #: parsed kubelet journal excerpts, by id of the excerpt (tmnb.postmortem.kubelet_log)
    parsed: dict[int, KubeletLog] = field(default_factory=dict, repr=False, compare=False)
    #: each rejected pod's diagnosis (tmnb.postmortem.rejections.diagnoses): a replay, done once
    explained: list[tuple[str, Diagnosis, list[str]]] | None = field(default=None, repr=False, compare=False)
    #: every file under ``root``, listed once (a demo folder holds thousands of sandbox node files)
    files: list[Path] = field(default_factory=list, repr=False, compare=False)

    def named(self, pattern: str) -> list[Path]:
        """The files whose name matches ``pattern`` (a shell pattern), sorted by path."""
        return sorted(p for p in self.files if fnmatch.fnmatchcase(p.name, pattern))

    @property
    def before(self) -> Snapshot:
        return self.snapshots[0][1]

    @property
    def after(self) -> Snapshot:
        return self.snapshots[-1][1]


def _journal(path: Path) -> list[dict[str, Any]]:
    records = []
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            if number == len(lines):
                break  # the last line of a killed run
            raise InputError("not a JSON object", source=str(path), line=number) from None
        if isinstance(record, dict) and "time" in record:
            records.append(record)
    return records


def open_evidence(path: str | Path) -> Evidence:
    """A run folder, a folder of them, or a ``.tar.gz`` bundle (verified and unpacked read-only)."""
    root = Path(path)
    if root.is_file() and root.name.endswith((".tar.gz", ".tgz")):
        target, _, result = unpack(root, Path(tempfile.mkdtemp(prefix="tmnb-evidence-")) / "bundle")
        if not result.intact:
            raise InputError("the bundle does not match its manifest: " + "; ".join(result.lines()), source=str(root))
        root = target
    if not root.is_dir():
        raise InputError("expected a run folder, a folder of run folders or an evidence bundle", source=str(root))
    found = Evidence(root, files=[Path(top, name) for top, _, names in os.walk(root) for name in names])
    for snap_path in sorted(p for name in FULL_SNAPSHOTS for p in found.named(name)):
        found.snapshots.append((snap_path, load(snap_path)))
    for snap_path in found.named("after-*.json.gz"):
        found.node_snapshots.append((snap_path, load(snap_path)))
    if not found.snapshots:
        raise InputError("no snapshot in the evidence (snapshot.json.gz or snapshots/before.json.gz)", source=str(root))
    found.snapshots.sort(key=lambda item: item[1].captured_at)
    journals = sorted(found.named("journal.jsonl"), key=lambda p: (p.stat().st_size, str(p)))
    if journals:
        found.journal_path = journals[-1]  # the rollout state's journal is the fullest copy
        found.journal = _journal(found.journal_path)
    for manifest in found.named("manifest.json"):
        try:
            doc = json.loads(manifest.read_text())
        except ValueError:
            continue
        if isinstance(doc, dict) and "notebook" in doc:
            found.runs.append(
                {
                    "run": manifest.parent.name,
                    **{k: doc.get(k) for k in ("notebook", "status", "message", "started", "finished")},
                }
            )
    return found
