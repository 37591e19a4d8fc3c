"""A what-if replayed by a pool of processes gives the serial replay's output, row for row and byte
for byte, on the curated sample and on a generated fleet."""

from __future__ import annotations

import pandas as pd
import pytest

from tmnb.analysis import whatif as whatif_module
from tmnb.analysis.whatif import whatif
from tmnb.cli.main import main
from tmnb.snapshot import Snapshot, save
from tmnb.twin.sample import generate_fleet

TARGET = {"topologyManagerPolicy": "single-numa-node"}


@pytest.fixture(scope="module")
def fleets() -> dict[str, Snapshot]:
    return {"sample": generate_fleet(None), "generated": generate_fleet(40, seed=3)}


@pytest.fixture
def pooled(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Pools even for these small fleets, in runs of a few nodes; counts the runs handed to the pool."""
    submitted: list[int] = []

    class Counting(whatif_module.ProcessPoolExecutor):
        def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def]
            submitted.append(1)
            return super().submit(fn, *args, **kwargs)

    monkeypatch.setattr(whatif_module, "POOL_MIN_NODES", 0)
    monkeypatch.setattr(whatif_module, "CHUNK", 3)
    monkeypatch.setattr(whatif_module, "ProcessPoolExecutor", Counting)
    return submitted


@pytest.mark.parametrize("fleet", ["sample", "generated"])
@pytest.mark.parametrize("mode", ["drain", "restart"])
def test_pooled_frames_are_the_serial_frames(fleets, pooled, fleet, mode):
    snap = fleets[fleet]
    serial_pods, serial_nodes = whatif(snap, TARGET, mode=mode)
    assert pooled == []  # one worker: no pool
    pods, nodes = whatif(snap, TARGET, mode=mode, workers=2)
    assert len(pooled) >= len(snap.nodes) // 3  # the nodes went through the pool, a few at a time
    pd.testing.assert_frame_equal(pods, serial_pods)
    pd.testing.assert_frame_equal(nodes, serial_nodes)
    assert len(pods) > 100 and list(nodes["node"]) == [n.name for n in snap.nodes]


@pytest.mark.parametrize("fmt", ["json", "table"])
def test_pooled_cli_output_is_the_serial_output(fleets, pooled, tmp_path, capsys, fmt):
    path = tmp_path / "fleet.json"
    save(fleets["generated"], path)
    argv = ["whatif", "--snapshot", str(path), "--set", "topologyManagerPolicy=restricted", "--format", fmt]
    code = main([*argv, "--workers", "1"])
    serial = capsys.readouterr()
    assert main([*argv, "--workers", "2"]) == code
    assert pooled
    assert capsys.readouterr() == serial
    assert len(serial.out.splitlines()) > 100


@pytest.mark.parametrize("value", ["0", "-2", "two"])
def test_workers_must_be_a_positive_count(value, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["whatif", "--snapshot", "sample", "--set", "topologyManagerPolicy=restricted", "--workers", value])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "worker processes" in err and "Traceback" not in err
