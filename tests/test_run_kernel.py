"""The run's kernel starts as soon as the parameters are typed (``tmnb.cli.run.kernel``), through
jupyter_client's public API; the runner checks what the parameters alone tell while it boots, then
asks the kernel to run the snapshot checks on the snapshot it reads, which the notebook's first cell
then takes instead of reading the file again. A refused parameter leaves no kernel and no run folder,
in the words the runner's own checks use; a kernel that cannot answer leaves the checks to the runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from notebook_factory import write_notebook
from tmnb.cli.run import runner
from tmnb.cli.run.kernel import KernelGone, WarmKernel
from tmnb.collector import SETTLED_THRESHOLD
from tmnb.errors import InputError
from tmnb.snapshot import save
from tmnb.sources import resolve
from tmnb.sources.embedded import load_sample

pytestmark = pytest.mark.notebook


@pytest.fixture
def kernels(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The process of every kernel a run starts, to look at afterwards."""
    started: list[int] = []

    class Recorded(WarmKernel):
        def __init__(self, notebook: Path, *, live: bool = False) -> None:
            super().__init__(notebook, live=live)
            started.append(self.manager.provisioner.pid)  # type: ignore[union-attr]  # the local provisioner's

    monkeypatch.setattr(runner, "WarmKernel", Recorded)
    return started


@pytest.fixture
def snapshot_file(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.json.gz"
    save(load_sample(), path)
    return path


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return Path(f"/proc/{pid}/status").read_text().count("zombie") > 0


def test_the_notebook_takes_the_snapshot_the_kernel_read_for_the_checks(tmp_path, snapshot_file, kernels):
    notebook = write_notebook(
        tmp_path / "probe.ipynb",
        'source = "sample"\nnode_selector = ""\nnodes = []\nout_dir = "."',
        "import gc, json, os\nfrom tmnb.sources import resolve\nahead = sorted(resolve._READ_AHEAD)",
        "snap = resolve.open_snapshot(source)\n"
        "print(json.dumps([os.getpid(), ahead, sorted(resolve._READ_AHEAD), len(snap.nodes), gc.is_tracked(snap), "
        "gc.get_freeze_count() > 0, gc.get_threshold()]))",
    )
    # a notebook named as 02 is: its checks read the snapshot (the nodes it names must be in it)
    probe = notebook.rename(tmp_path / "02-numa-occupancy.ipynb")
    result = runner.run(probe, [("source", str(snapshot_file)), ("nodes", "[gen-icx-01]")], out=tmp_path / "run")
    printed = json.loads(result.notebook.read_text())["cells"][-1]["outputs"][0]["text"]
    pid, before, after, nodes, tracked, frozen, threshold = json.loads("".join(printed))
    assert kernels == [pid]
    assert before == [os.path.realpath(snapshot_file)] and after == []  # read for the checks, then taken
    assert nodes == len(load_sample().nodes)
    assert tracked and frozen and tuple(threshold) == SETTLED_THRESHOLD  # held for good: out of the collector's way
    assert result.status == "ok"


def test_a_changed_file_is_read_again(tmp_path, snapshot_file):
    resolve.read_ahead(str(snapshot_file))
    smaller = load_sample()
    save(type(smaller)(captured_at=smaller.captured_at, source=smaller.source, nodes=smaller.nodes[:1]), snapshot_file)
    assert len(resolve.open_snapshot(str(snapshot_file)).nodes) == 1
    assert not resolve._READ_AHEAD


def test_a_file_that_does_not_load_is_left_to_the_notebooks_own_read(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_text('{"schema": "tmnb.snapshot/v1", "nodes": [')
    resolve.read_ahead(str(broken))
    assert not resolve._READ_AHEAD
    with pytest.raises(InputError, match="invalid JSON"):
        resolve.open_snapshot(str(broken))


def test_a_refused_snapshot_check_ends_the_kernel_and_leaves_no_run_folder(tmp_path, snapshot_file, kernels):
    with pytest.raises(InputError, match="parameter node_selector: matches no node"):
        runner.run(
            "03-readiness", [("source", str(snapshot_file)), ("node_selector", "pool=nosuch")], out=tmp_path / "r"
        )
    assert len(kernels) == 1 and _gone(kernels[0])
    assert not (tmp_path / "r").exists()


def test_a_refused_parameter_ends_the_kernel_started_for_it(tmp_path, kernels):
    with pytest.raises(InputError, match=r"parameter target\.nosuch: unknown KubeletConfiguration field"):
        runner.run("03-readiness", [("target", "{nosuch: 1}")], out=tmp_path / "r")
    assert len(kernels) == 1 and _gone(kernels[0])
    assert not (tmp_path / "r").exists()


def test_the_runner_leaves_the_snapshot_checks_to_the_kernel(tmp_path, snapshot_file, kernels, monkeypatch):
    def not_here(*args: object) -> None:
        raise AssertionError("the runner ran the snapshot checks itself")

    monkeypatch.setattr(runner, "check_snapshot", not_here)
    result = runner.run("02-numa-occupancy", [("source", str(snapshot_file))], out=tmp_path / "run")
    assert result.status == "ok" and len(kernels) == 1


def test_a_kernel_that_cannot_answer_leaves_the_checks_to_the_runner(tmp_path, snapshot_file, monkeypatch):
    def gone(self: WarmKernel, *args: object) -> None:
        raise KernelGone("no answer")

    monkeypatch.setattr(WarmKernel, "ask_checks", gone)
    with pytest.raises(InputError, match="parameter node_selector: matches no node"):
        runner.run(
            "03-readiness", [("source", str(snapshot_file)), ("node_selector", "pool=nosuch")], out=tmp_path / "r"
        )
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("frozen_before", [False, True])
def test_a_pooled_run_leaves_the_frozen_objects_as_it_found_them(frozen_before):
    import gc

    from tmnb.analysis.whatif import POOL_MIN_NODES, pooled

    gc.unfreeze()
    if frozen_before:
        gc.freeze()
    try:
        assert list(pooled(POOL_MIN_NODES, lambda i: i * i, workers=2)) == [i * i for i in range(POOL_MIN_NODES)]
        assert (gc.get_freeze_count() > 0) is frozen_before
    finally:
        gc.unfreeze()
