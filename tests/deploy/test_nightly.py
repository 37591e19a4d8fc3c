"""The CronJob's own script, taken from its ConfigMap and run here against the sandbox with the
ConfigMap's values: the same commands the pod runs, with a kubeconfig instead of the in-cluster
ServiceAccount."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import ROOT
from rollout.test_rollout_sandbox import box_fixture, kubeconfig_fixture
from tmnb.twin.sandbox import Sandbox

__all__ = ["box_fixture", "kubeconfig_fixture"]


def config_maps() -> dict[str, dict[str, str]]:
    docs = yaml.safe_load_all((ROOT / "deploy" / "readiness-cronjob.yaml").read_text())
    return {d["metadata"]["name"]: d["data"] for d in docs if d and d["kind"] == "ConfigMap"}


@pytest.mark.notebook
def test_nightly_script_writes_a_run_folder_and_prunes_old_ones(box: Sandbox, kubeconfig: Path, tmp_path: Path) -> None:
    maps = config_maps()
    script = tmp_path / "nightly.sh"
    script.write_text(maps["tmnb-readiness-script"]["nightly.sh"])
    runs = tmp_path / "runs"
    old, recent = runs / "20000101T000000Z", runs / "recent"
    for folder in (old, recent):
        folder.mkdir(parents=True)
    stale = time.time() - 40 * 86400
    os.utime(old, (stale, stale))
    env = {
        **os.environ,
        **maps["tmnb-readiness"],
        "TMNB_RUNS": str(runs),
        "KUBECONFIG": str(kubeconfig),
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    done = subprocess.run(["/bin/sh", str(script)], env=env, capture_output=True, text=True, timeout=600)
    (run,) = [p for p in runs.iterdir() if p not in (old, recent)]
    assert not old.exists() and recent.exists()
    assert (run / "01-inventory" / "snapshot.json.gz").is_file()
    readiness = json.loads((run / "03-readiness" / "manifest.json").read_text())
    assert readiness["parameters"]["target"] == yaml.safe_load(maps["tmnb-readiness"]["TMNB_TARGET"])
    assert done.returncode == {"ok": 0, "alert": 3}[readiness["status"]], done.stderr
    assert f"run folder {run} (exit {done.returncode})" in done.stdout
