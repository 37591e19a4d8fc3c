"""The run's kernel process starts before the parameters are checked (``tmnb.report.standby``): the
checks run there, on the snapshot file it read, and the notebook uses that read; it becomes the
kernel only once they pass; a refused parameter ends it with no kernel ever started, in the words
the runner's own checks use; a standby that cannot check leaves the checks to the runner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from notebook_factory import write_notebook
from tmnb.errors import InputError
from tmnb.report import runner
from tmnb.report.kernel import Standby
from tmnb.snapshot import save
from tmnb.sources import resolve
from tmnb.sources.embedded import load_sample

pytestmark = pytest.mark.notebook


@pytest.fixture
def standbys(monkeypatch: pytest.MonkeyPatch) -> list[Standby]:
    """Every standby process a run starts, to look at afterwards."""
    started: list[Standby] = []

    class Recorded(Standby):
        def __init__(self, read_ahead: str = "") -> None:
            super().__init__(read_ahead)
            started.append(self)

    monkeypatch.setattr(runner, "Standby", Recorded)
    return started


@pytest.fixture
def snapshot_file(tmp_path: Path) -> Path:
    path = tmp_path / "fleet.json.gz"
    save(load_sample(), path)
    return path


def test_the_kernel_is_the_standby_and_uses_the_file_it_read(tmp_path, snapshot_file, standbys):
    notebook = write_notebook(
        tmp_path / "probe.ipynb",
        'source = "sample"\nout_dir = "."',
        "import gc, json, os\nfrom tmnb.sources import resolve\nahead = sorted(resolve._READ_AHEAD)",
        "snap = resolve.open_snapshot(source)\n"
        "print(json.dumps([os.getpid(), ahead, sorted(resolve._READ_AHEAD), len(snap.nodes), gc.is_tracked(snap), "
        "gc.get_freeze_count() > 0, gc.get_threshold()[0]]))",
    )
    result = runner.run(notebook, [("source", str(snapshot_file))], out=tmp_path / "run")
    printed = json.loads(result.notebook.read_text())["cells"][-1]["outputs"][0]["text"]
    pid, before, after, nodes, tracked, frozen, young = json.loads("".join(printed))
    assert [s.process.pid for s in standbys] == [pid]
    assert before == [os.path.realpath(snapshot_file)] and after == []  # read ahead, then taken
    assert nodes == len(load_sample().nodes)
    assert tracked and frozen and young > 700  # held for good: out of the collector's way


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


def test_a_refused_parameter_ends_the_standby_and_no_kernel_ran(tmp_path, snapshot_file, standbys):
    with pytest.raises(InputError, match="parameter node_selector"):
        runner.run(
            "03-readiness", [("source", str(snapshot_file)), ("node_selector", "pool=nosuch")], out=tmp_path / "r"
        )
    assert len(standbys) == 1 and standbys[0].process.returncode is not None
    assert not standbys[0].handed and not (tmp_path / "r").exists()


def test_the_runner_leaves_the_checks_to_the_standby(tmp_path, snapshot_file, standbys, monkeypatch):
    def not_here(*args: object) -> None:
        raise AssertionError("the runner checked the parameters itself")

    monkeypatch.setattr(runner, "check_parameters", not_here)
    result = runner.run("02-numa-occupancy", [("source", str(snapshot_file))], out=tmp_path / "run")
    assert result.status == "ok" and len(standbys) == 1


def test_a_standby_that_cannot_check_leaves_the_checks_to_the_runner(tmp_path, snapshot_file, monkeypatch):
    class Gone(Standby):
        def __init__(self, read_ahead: str = "") -> None:
            super().__init__(read_ahead)
            self.process.kill()
            self.process.wait()

    monkeypatch.setattr(runner, "Standby", Gone)
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
