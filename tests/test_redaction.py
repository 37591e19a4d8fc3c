"""No credential planted in a cluster reaches a file tmnb writes. Secrets go where real ones hide:
a kubelet command line, a kubeconfig on the node, an event's text, a pod's env and its
last-applied annotation, a kubelet log line; then the whole pipeline runs on that sandbox
(collection, reports, a canary rollout, the comparison, the postmortem, the evidence pack) and
every file written, compressed or not, is searched for each secret."""

from __future__ import annotations

import gzip
import json
import os
import re
import tarfile
from pathlib import Path

import pytest
from kubernetes import client, config

from conftest import ROOT
from rollout.test_rollout_sandbox import NODES, fleet
from tmnb.cli import main
from tmnb.report.runner import run
from tmnb.twin.sandbox import Sandbox

JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6InBsYW50ZWQifQ.eyJzdWIiOiJzeXN0ZW06cGxhbnRlZCJ9.cGxhbnRlZC1zaWduYXR1cmU"
SECRETS = {
    "bearer token": "plantedBearer0123456789abcdef",
    "kubeconfig client key": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUVwbGFudGVkS2V5",
    "JWT": JWT,
    "--token on the kubelet command line": "planted-flag-token-5f3a9c",
    "password in a pod env": "planted-pod-password-77e1",
    "AWS access key in a log line": "AKIAPLANTED000000001",
}


def plant(box: Sandbox, kubeconfig: Path) -> None:
    for name in NODES:
        root = box.cluster.kubelets[name].root
        (root / "etc/default").mkdir(parents=True, exist_ok=True)
        (root / "etc/default/kubelet").write_text(
            f"KUBELET_EXTRA_ARGS=--token={SECRETS['--token on the kubelet command line']} --v=2\n"
        )
        (root / "etc/kubernetes").mkdir(parents=True, exist_ok=True)
        (root / "etc/kubernetes/kubelet.conf").write_text(
            f"users:\n- name: default-auth\n  user:\n    client-key-data: {SECRETS['kubeconfig client key']}\n"
        )
        with (root / "journal.log").open("a") as log:
            log.write(
                f'E1203 04:30:00.000001    2301 kuberuntime_manager.go:1] "Failed to pull image" '
                f'err="denied: AWS_ACCESS_KEY_ID={SECRETS["AWS access key in a log line"]}"\n'
            )
    api = client.ApiClient(config.load_kube_config(config_file=str(kubeconfig)) or None)
    core = client.CoreV1Api(api)
    env = [{"name": "DB_PASSWORD", "value": SECRETS["password in a pod env"]}]
    pod = {
        "metadata": {
            "name": "leaky",
            "annotations": {"kubectl.kubernetes.io/last-applied-configuration": json.dumps({"env": env, "t": JWT})},
        },
        "spec": {"nodeName": NODES[0], "containers": [{"name": "c", "image": "busybox", "env": env}]},
    }
    core.create_namespaced_pod("app", pod)
    event = {
        "metadata": {"name": "leaky.planted"},
        "involvedObject": {"kind": "Pod", "namespace": "app", "name": "leaky"},
        "reason": "UnexpectedAdmissionError",
        "message": f"Allocate failed: device plugin answered 'Authorization: Bearer {SECRETS['bearer token']}' ({JWT})",
        "type": "Warning",
        "source": {"component": "kubelet", "host": NODES[0]},
        "count": 1,
    }
    core.create_namespaced_event("app", event)


def texts(path: Path):  # type: ignore[no-untyped-def]
    """(name, text) of every file under ``path`` or in a bundle, decompressed."""
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        data = file.read_bytes()
        if file.name.endswith(".tar.gz"):
            with tarfile.open(file) as tar:
                for member in tar.getmembers():
                    if member.isfile():
                        inner = tar.extractfile(member).read()  # type: ignore[union-attr]
                        yield f"{file}:{member.name}", _plain(member.name, inner)
            continue
        yield str(file), _plain(file.name, data)


def _plain(name: str, data: bytes) -> str:
    return (gzip.decompress(data) if name.endswith(".gz") else data).decode("utf-8", "replace")


@pytest.mark.notebook
def test_no_planted_secret_reaches_any_file_written(tmp_path: Path) -> None:
    reports, secret = tmp_path / "reports", tmp_path / "outside"  # the sandbox itself is not evidence
    with Sandbox(fleet(), secret / "sandbox", controller_interval=0.1) as box:
        box.cluster.ready_after = 0.2
        kubeconfig = box.write_kubeconfig(secret / "kubeconfig")
        plant(box, kubeconfig)
        os.environ["KUBECONFIG"] = str(kubeconfig)
        try:
            live = {"source": "live", "node_files": f"dir:{secret / 'sandbox' / 'nodes'}"}
            before = run(ROOT / "notebooks/01-inventory.ipynb", params=live, out=reports / "01-inventory")
            snap = before.results["snapshot"]
            assert "planted" not in Path(snap).name
            run(ROOT / "notebooks/03-readiness.ipynb", params={"source": snap}, out=reports / "03-readiness")
            change = {"target": {"topologyManagerPolicy": "best-effort"}, "nodes": [NODES[1]], "canary": NODES[1],
                      "mode": "execute", "approve": ["canary"], "executor": "sandbox", "change_id": "leak",
                      "state_dir": str(reports / "rollout-state")}  # fmt: skip
            rolled = run(ROOT / "notebooks/04-rollout.ipynb", params=change, out=reports / "04-rollout")
            assert rolled.status == "ok", rolled.message
            after = run(ROOT / "notebooks/01-inventory.ipynb", params=live, out=reports / "after")
            compare = {"before": snap, "after": after.results["snapshot"], "journal": rolled.results["journal"]}
            run(ROOT / "notebooks/05-compare.ipynb", params=compare, out=reports / "05-compare")
        finally:
            os.environ.pop("KUBECONFIG", None)
    run(ROOT / "notebooks/06-postmortem.ipynb", params={"evidence": str(reports)}, out=reports / "06-postmortem")
    assert main(["evidence", "pack", *map(str, sorted(reports.iterdir())), "--out", str(tmp_path / "b.tar.gz")]) == 0
    (tmp_path / "bundle").mkdir()
    (tmp_path / "b.tar.gz").rename(tmp_path / "bundle" / "b.tar.gz")

    bars = [p.name for p in reports.rglob("*.html") if re.search(r"\d+/\d+ \[\d\d:\d\d<", p.read_text())]
    assert bars == []  # the live collectors' progress bars stay out of the reports
    collected = _plain("s.gz", Path(snap).read_bytes())
    assert "device plugin answered" in collected  # the planted event was collected, redacted
    assert "<redacted>" in collected
    leaks = [(what, name) for root in (reports, tmp_path / "bundle") for name, text in texts(root)
             for what, value in SECRETS.items() if value in text]  # fmt: skip
    assert leaks == []
