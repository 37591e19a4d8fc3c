"""``make demo``: the whole pipeline on the embedded sample, a canary rollout included, no real cluster needed.

A sandbox twin of the sample fleet is started on 127.0.0.1; the inventory collects it live through
the official client and reads each node's files with the node collector (as it would a real
cluster's), and writes the baseline snapshot; occupancy and readiness then read that snapshot. The
readiness report's canary then gets the change through the guided rollout (04-rollout in execute
mode, the canary gate approved by parameter, the sandbox executor: preflight, backup, apply,
restart, verify against the prediction, journal), a second collection captures the result, and the
comparison report puts the two side by side and compares application metrics (synthetic series
for the snapshots' workloads around a change two and a half hours ago, backfilled into a real
Prometheus on 127.0.0.1 when one is installed, else read from their file; the demo says which). With the
sandbox stopped, 06-postmortem reads the demo folder alone (including why the wide pod that the
demo deploys on the canary after the change is refused, and what would admit it), and every run
folder is packed into one verified evidence bundle beside it. Every report lands in one demo folder.
"""

from __future__ import annotations

import gzip
import os
import sys
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from tmnb.cli.run.runner import RunResult, run, start_kernel
from tmnb.errors import InputError
from tmnb.report.places import notebooks_dir, resolve_reports_dir

if TYPE_CHECKING:
    from tmnb.twin.sandbox import Sandbox

#: The change the demo rehearses on the canary (the readiness report's default target).
DEMO_CHANGE = {"topologyManagerPolicy": "single-numa-node"}


def _notebook(name: str) -> Path:
    """tmnb's own notebook, never a file of that name where the user stands (``tmnb run`` takes a path first)."""
    path = notebooks_dir() / name
    if not path.is_file():
        raise InputError("tmnb's notebooks are missing from its installation: reinstall tmnb", source=str(path))
    return path


@dataclass
class Demo:
    folder: Path
    runs: list[RunResult]
    bundle: Path

    def written(self) -> list[Path]:
        """Every folder the demo wrote: its run folders, the rollout state, the sandbox's directory."""
        return sorted(p for p in self.folder.iterdir() if p.is_dir())

    def alerts(self) -> list[RunResult]:
        return [r for r in self.runs if r.status == "alert"]


#: what the demo does, in order; each step is announced on stderr as it starts (the whole takes minutes)
STAGES = (
    "sandbox twin of the sample fleet up on 127.0.0.1",
    "01-inventory: live collection through the API and the node files",
    "02-numa-occupancy",
    "03-readiness",
    "04-rollout: the change on the canary (execute, canary approved)",
    "a staged failure: a pod one core wider than the canary's freest NUMA node, deployed after the change "
    "(the kubelet is expected to refuse it, for 06-postmortem to explain); then the inventory collected again",
    "05-compare: before and after",
    "06-postmortem: from the evidence alone, the sandbox stopped",
    "the evidence bundle, packed and verified",
)


#: The notebooks that read only the first inventory's snapshot: they run side by side (2 cores, one each).
READ_ONLY_AFTER_INVENTORY = ("02-numa-occupancy.ipynb", "03-readiness.ipynb")


def _side_by_side(runs: list[tuple[str, dict[str, str], Path]]) -> list[RunResult]:
    """Runs that do not depend on each other, each on its own thread (and so its own kernel and
    event loop); the results in the order given, the first failure raised as a run would."""
    with ThreadPoolExecutor(max_workers=len(runs)) as pool:
        futures = [pool.submit(run, _notebook(name), params=params, out=out) for name, params, out in runs]
        return [future.result() for future in futures]


def _stage(number: int) -> None:
    print(f"demo [{number}/{len(STAGES)}] {STAGES[number - 1]}", file=sys.stderr, flush=True)


def run_demo(reports_dir: str | Path | None = None) -> Demo:
    from tmnb.sources.embedded import load_sample
    from tmnb.twin.sandbox import Faults, Sandbox

    folder = resolve_reports_dir(reports_dir) / f"{datetime.now(UTC).strftime('%Y%m%dT%H%M%SZ')}-demo"
    previous = os.environ.get("KUBECONFIG")
    _stage(1)
    # The kubeconfig carries the sandbox's token: it lives outside the evidence folder and goes with the run.
    with (
        Sandbox(load_sample(), folder / "sandbox", faults=Faults()) as box,
        tempfile.TemporaryDirectory() as secret,
        ExitStack() as ahead,  # kernels started ahead of their run, stopped if the run never comes
    ):
        os.environ["KUBECONFIG"] = str(box.write_kubeconfig(Path(secret) / "kubeconfig"))
        live = {"source": "live", "node_files": f"dir:{folder / 'sandbox' / 'nodes'}"}
        try:
            _stage(2)
            results = [run(_notebook("01-inventory.ipynb"), params=live, out=folder / "01-inventory")]
            baseline = results[0].results["snapshot"]
            _stage(3)
            _stage(4)
            results += _side_by_side(
                [(name, {"source": baseline}, folder / Path(name).stem) for name in READ_ONLY_AFTER_INVENTORY]
            )
            canary = _canary(results[-1].results.get("canary") or {})
            change = {
                "target": DEMO_CHANGE,
                "nodes": [canary],
                "canary": canary,
                "mode": "execute",
                "approve": ["canary"],
                "executor": "sandbox",
                "change_id": "demo-canary",
                "state_dir": str(folder / "rollout-state"),
            }
            _stage(5)
            # the next notebook's kernel boots while the rollout mostly waits on the sandbox's kubelets
            inventory_kernel = ahead.enter_context(start_kernel(_notebook("01-inventory.ipynb"), live=True))
            results.append(run(_notebook("04-rollout.ipynb"), params=change, out=folder / "04-rollout"))
            _stage(6)
            _deploy_wide_pod(box, canary)
            compare_kernel = ahead.enter_context(start_kernel(_notebook("05-compare.ipynb")))
            after = run(
                _notebook("01-inventory.ipynb"),
                params=live,
                out=folder / "after-change-inventory",
                kernel=inventory_kernel,
            )
            results.append(after)
            params = {"before": baseline, "after": after.results["snapshot"]}
            _stage(7)
            with _metrics(folder, baseline, after.results["snapshot"], canary) as metrics:
                params.update(metrics)
                results.append(
                    run(_notebook("05-compare.ipynb"), params=params, out=folder / "05-compare", kernel=compare_kernel)
                )
        finally:
            if previous is None:
                os.environ.pop("KUBECONFIG", None)
            else:
                os.environ["KUBECONFIG"] = previous
    # The sandbox is gone: the postmortem and the bundle stand on the evidence alone.
    _stage(8)
    results.append(
        run(_notebook("06-postmortem.ipynb"), params={"evidence": str(folder)}, out=folder / "06-postmortem")
    )
    _stage(9)
    return Demo(folder, results, pack_demo(folder))


@contextmanager
def _metrics(folder: Path, before: str, after: str, canary: str) -> Iterator[dict[str, str]]:
    """05-compare's metrics for the rehearsal: synthetic series for the workloads of its two snapshots
    (the sandbox runs no containers), through a real Prometheus when one is installed, else from
    the long-format file. Their change is placed 2 h 30 min ago, so both windows lie in the past;
    the canary's workloads come first for the roles, so the regression is where the change was.
    The series served stay beside the file, compressed (``demo-metrics.om.gz``, 20 MB of text): the
    server ends with the demo, and with them 05 can be served the same series and run again."""
    from tmnb.metrics import backfill
    from tmnb.snapshot import load
    from tmnb.twin.metrics import Timeline, workloads, write_long_format, write_openmetrics

    timeline = Timeline.recent()
    old, new = load(before), load(after)
    on_canary = [p.owner.controller_name or p.owner.name for p in new.pods if p.node == canary and p.owner]
    loads = workloads(old, new, first=on_canary, quota=(False, False))
    at = {
        "change": f"{timeline.rollout[1]:%Y-%m-%dT%H:%M:%SZ}",
        "metrics_note": f"The application metrics are synthetic: series made up for {len(loads)} workloads (the "
        f"sandbox runs no containers), with known shifts built in around a change at "
        f"{timeline.rollout[1]:%Y-%m-%d %H:%M} UTC, where the windows are placed: their after window had to end "
        "before this report, so they do not follow the rehearsal's rollout journal (in 04-rollout).",
    }
    where = folder / "demo-metrics"
    where.mkdir(parents=True, exist_ok=True)
    csv = write_long_format(where / "demo-metrics.csv", timeline, loads)
    clock = f"synthetic series for {len(loads)} workloads, their change placed at {at['change']}"
    if not backfill.available():
        print(f"demo: metrics from {csv} ({clock}); no Prometheus installed", file=sys.stderr, flush=True)
        yield {**at, "metrics_file": str(csv)}
        return
    with tempfile.TemporaryDirectory() as scratch:
        series = write_openmetrics(Path(scratch) / "demo-metrics.om", timeline, loads)
        (where / "demo-metrics.om.gz").write_bytes(gzip.compress(series.read_bytes(), compresslevel=1, mtime=0))
        with backfill.served(series, Path(scratch) / "prometheus") as url:
            print(f"demo: metrics through Prometheus at {url} ({clock}), backfilled with promtool",
                  file=sys.stderr, flush=True)  # fmt: skip
            yield {**at, "prometheus_url": url, "metrics_file": ""}


def pack_demo(folder: Path) -> Path:
    """Every run folder of the demo in one bundle beside it, verified as ``tmnb evidence verify`` does."""
    from tmnb.errors import TmnbError
    from tmnb.evidence import pack, verify

    runs = sorted(p for p in folder.iterdir() if (p / "manifest.json").is_file() or (p / "journal.jsonl").is_file())
    bundle = folder.parent / f"{folder.name}-evidence.tar.gz"
    pack(list(runs), bundle)  # a list[str | Path]: pack's list is invariant
    _, result = verify(bundle)
    if not result.intact:
        raise TmnbError(f"the demo's own bundle does not verify: {'; '.join(result.lines())}")
    return bundle


def _deploy_wide_pod(box: Sandbox, canary: str) -> None:
    """After the change, a team deploys a Guaranteed pod one core wider than the canary's freest NUMA
    node: single-numa-node refuses it (TopologyAffinityError), so the postmortem has a real
    rejection to explain. Skipped when the canary has no exclusive CPUs to be short of."""
    from tmnb.cpuset import CPUSet

    kubelet = box.cluster.kubelets[canary]
    free = set(kubelet.free_cpus())
    per_numa = [len(free & set(CPUSet.parse(z.cpus))) for z in kubelet.snapshot_node.numa]
    core = kubelet.sim.cpu_topology.cpus_per_core() if kubelet.sim else 1
    wide = (max(per_numa, default=0) // core + 1) * core  # whole cores, so full-pcpus-only has no say
    if not free or wide > len(free):
        return
    cpus = str(wide)
    resources = {"cpu": cpus, "memory": "1Gi"}
    body = {
        "metadata": {"name": "wide-batch-0", "labels": {"app": "wide-batch"}},
        "spec": {
            "nodeName": canary,
            "containers": [
                {"name": "main", "image": "busybox", "resources": {"requests": resources, "limits": resources}}
            ],
        },
    }
    box.cluster.create_pod("batch", body)
    status = box.cluster.get("pods", "batch", "wide-batch-0")["status"]
    outcome = f"{status.get('phase')} {status.get('reason', '')}".strip()
    expected = "as staged" if status.get("reason") == "TopologyAffinityError" else "not as staged"
    print(
        f"demo: staged failure: batch/wide-batch-0 ({cpus} exclusive CPUs) on {canary} after the change: "
        f"{outcome} ({expected})",
        file=sys.stderr,
        flush=True,
    )


def _canary(by_pool: dict[str, str]) -> str:
    """The latency pool's canary when there is one (its pods care most about NUMA), else any."""
    picks = [node for node in by_pool.values() if node]
    if not picks:
        raise InputError("the readiness report proposed no canary")
    return by_pool.get("latency") or picks[0]
