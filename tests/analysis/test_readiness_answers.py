"""Readiness answers byte for byte: every answer ``assess`` gives (its frames, findings, drain steps,
canary exclusions, results, summary and verdict), every CSV the 03 notebook writes from them and every
cell its tables show, on the curated sample, on a fleet of pods two minors pin differently and on a
generated fleet, under several targets and both modes, serial and pooled.

The expected digests were taken from the code before the fleet-scale cuts (memoized validation, the
pooled restart replay, grouped admission changes, the tables' fast paths); any change to an answer
fails here, naming the case and the table. After an intended change of an answer (or of the sample
generator), regenerate them with ``PYTHONPATH=src:tests python tests/analysis/test_readiness_answers.py``
and say why in the commit.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from factories import node, pod, settings, snapshot
from tmnb.analysis import readiness
from tmnb.analysis import whatif as whatif_module
from tmnb.report.tables import csv_rows, humanize
from tmnb.snapshot import KubeletInfo, PodResources, Snapshot
from tmnb.twin.sample import generate_fleet

EXPECTED = Path(__file__).parents[1] / "fixtures" / "readiness" / "answers.json"

#: name: (fleet, target, mode)
CASES: dict[str, tuple[str, dict[str, Any], str]] = {
    "sample-single-numa-drain": ("sample", {"topologyManagerPolicy": "single-numa-node"}, "drain"),
    "sample-single-numa-restart": ("sample", {"topologyManagerPolicy": "single-numa-node"}, "restart"),
    "sample-static-options": (
        "sample",
        {
            "cpuManagerPolicy": "static",
            "cpuManagerPolicyOptions": {"full-pcpus-only": "true"},
            "reservedSystemCPUs": "0-1",
            "topologyManagerPolicy": "restricted",
        },
        "drain",
    ),
    "sample-upgrade-1.36": ("sample", {"kubeletVersion": "1.36", "topologyManagerScope": "pod"}, "restart"),
    "sample-upgrade-1.34": ("sample", {"kubeletVersion": "1.34", "topologyManagerPolicy": "best-effort"}, "drain"),
    "pod-level-upgrade-drain": ("pod-level", {"kubeletVersion": "1.34"}, "drain"),
    "pod-level-upgrade-restart": ("pod-level", {"kubeletVersion": "1.34"}, "restart"),
    "generated-single-numa-drain": ("generated", {"topologyManagerPolicy": "single-numa-node"}, "drain"),
    "generated-upgrade-restart": (
        "generated",
        {"kubeletVersion": "1.36", "topologyManagerPolicy": "restricted", "memoryManagerPolicy": "Static"},
        "restart",
    ),
}


def pod_level_fleet() -> Snapshot:
    """Nodes of three minors with the pods two minors pin differently (``test_upgrade.pod_level_fleet``:
    1.33 pins a pod with pod-level resources by its containers, 1.34 skips it), so an upgrade to 1.34
    changes pods on the 1.33 nodes only; two nodes of each minor, each with its own pods."""
    static = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))
    res = {"cpu": "2", "memory": "1Gi"}
    nodes, pods = [], []
    for i, version in enumerate(["v1.33.4", "v1.34.5", "v1.33.4", "v1.36.1", "v1.34.5", "v1.33.4"]):
        nodes.append(node(f"n{i}", version=version, kubelet=static))
        pods.append(pod(f"plr-{i}", f"n{i}", resources=PodResources(requests=res, limits=res)))
        pods.append(pod(f"plain-{i}", f"n{i}", created="2026-11-30T10:01:00Z"))
    return snapshot(nodes, pods)


@cache
def fleet(name: str) -> Snapshot:
    """The curated sample, the pod-level fleet, or a generated fleet above the what-if's pooling threshold."""
    if name == "pod-level":
        return pod_level_fleet()
    return generate_fleet(None) if name == "sample" else generate_fleet(150, seed=5)


def _text(value: Any) -> str:
    if isinstance(value, pd.DataFrame):
        return value.to_csv(index=False)
    return json.dumps(value, sort_keys=True, default=repr, indent=0)


def answers(report: readiness.Readiness) -> dict[str, str]:
    """Each answer as text: the frames as CSV (their cells' own repr), the rest as JSON, and the CSV
    files the 03 notebook writes and the cells its HTML shows (``show`` writes ``csv_rows`` of each
    table it shows, and displays ``humanize`` of it)."""
    shown = {
        "verdicts": report.verdicts,
        "plan": report.plan,
        "steps": report.drains,
        "lint-by-rule": readiness.lint_by_rule(report.lint),
        "lint": readiness.lint_per_node(report.lint),
        "admission": readiness.rejected_first(report.pods),
        "nodes": report.nodes,
        "minor-changes": readiness.minor_changes(report),
        "upgrade": report.upgrade,
        "canary": report.canary,
    }
    out = {f"csv/{name}": csv_rows(frame).to_csv(index=False) for name, frame in shown.items() if not frame.empty}
    out |= {f"cells/{name}": humanize(frame).to_csv(index=False) for name, frame in shown.items() if not frame.empty}
    out |= {
        f"frame/{name}": _text(getattr(report, name))
        for name in ("lint", "pods", "nodes", "verdicts", "plan", "canary", "drains", "upgrade")
    }
    out["findings"] = _text([dataclasses.asdict(f) for f in report.findings])
    out["steps"] = _text({name: dataclasses.asdict(s) for name, s in report.steps.items()})
    out["not_canary"] = _text(report.not_canary)
    out["results"] = _text(readiness.results(report, "RUN/snapshot.json.gz"))
    out["summary"] = readiness.summary(report)
    out["verdict"] = readiness.verdict(report).html()
    return out


def digests(case: str, workers: int) -> dict[str, str]:
    name, target, mode = CASES[case]
    report = readiness.assess(fleet(name), target, mode=mode, workers=workers)  # type: ignore[arg-type]
    return {key: hashlib.sha256(text.encode()).hexdigest() for key, text in answers(report).items()}


@pytest.fixture(scope="module")
def expected() -> dict[str, dict[str, str]]:
    return json.loads(EXPECTED.read_text())


@pytest.mark.parametrize("case", list(CASES))
def test_answers_are_the_ones_before_the_fleet_scale_cuts(case, expected):
    got = digests(case, workers=1)
    changed = sorted(k for k in expected[case].keys() | got.keys() if expected[case].get(k) != got.get(k))
    assert not changed, f"{case}: these answers changed: {changed}"


POOLED = ["sample-single-numa-restart", "pod-level-upgrade-restart", "generated-single-numa-drain"]


@pytest.mark.parametrize("case", POOLED)
def test_pooled_answers_are_the_same(case, expected, monkeypatch):
    """Pooled even on the sample, in runs of a few nodes, with two workers."""
    monkeypatch.setattr(whatif_module, "POOL_MIN_NODES", 0)
    monkeypatch.setattr(whatif_module, "CHUNK", 3)
    got = digests(case, workers=2)
    changed = sorted(k for k in expected[case].keys() | got.keys() if expected[case].get(k) != got.get(k))
    assert not changed, f"{case}, pooled: these answers changed: {changed}"


def test_every_case_has_answers_worth_comparing(expected):
    """The cases reach what the cuts touch: validator findings, drains with reasons, rejected pods,
    upgrade admission changes, on the sample and on a fleet above the pooling threshold."""
    assert set(expected) == set(CASES)
    assert len(fleet("generated").nodes) > whatif_module.POOL_MIN_NODES
    assert all("csv/upgrade" in expected[c] for c in ("pod-level-upgrade-drain", "pod-level-upgrade-restart"))
    assert all("csv/lint" in expected[c] and "csv/admission" in expected[c] for c in CASES)


if __name__ == "__main__":
    EXPECTED.parent.mkdir(parents=True, exist_ok=True)
    EXPECTED.write_text(json.dumps({case: digests(case, workers=1) for case in CASES}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {EXPECTED}")
