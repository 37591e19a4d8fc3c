"""No credential planted in a cluster reaches a file tmnb writes. Secrets go where real ones hide:
the kubelet's config file (a header of staticPodURLHeader, a private key pasted into providerID, a
password in staticPodURL), its command line and unit, a kubeconfig on the node, an event's text, a
pod's env and its last-applied annotation, a kubelet log line. Then every notebook runs on that
sandbox (04 executes a canary), the run folders are packed, and every file written is searched for
each secret, decompressed (tar, gzip, the notebooks' outputs, the HTML, the PNGs' text chunks).

One sandbox serves the one test (one test, so that no xdist worker runs the pipeline again): it
runs once as shipped, then 04 and the pack run again with the redactor switched off in the
kernels, where the same search must find every secret (so the search can fail). The rollout's
backups keep the node's bytes; bundles leave them out unless asked."""

from __future__ import annotations

import base64
import gzip
import html
import json
import os
import re
import struct
import tarfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from kubernetes import client, config

from conftest import ROOT
from rollout.test_rollout_sandbox import NODES, fleet
from tmnb.cli.main import main
from tmnb.cli.run.runner import run
from tmnb.snapshot import save
from tmnb.sources.resolve import open_snapshot
from tmnb.twin.sandbox import Sandbox

pytestmark = pytest.mark.notebook

JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6InBsYW50ZWQifQ.eyJzdWIiOiJzeXN0ZW06cGxhbnRlZCJ9.cGxhbnRlZC1zaWduYXR1cmU"
SECRETS = {
    "bearer token in an event": "plantedBearer0123456789abcdef",
    "kubeconfig client key": "LS0tLS1CRUdJTiBQUklWQVRFIEtFWS0tLS0tCk1JSUVwbGFudGVkS2V5",
    "JWT": JWT,
    "--token on the kubelet command line": "planted-flag-token-5f3a9c",
    "password in a pod env": "planted-pod-password-77e1",
    "AWS key in a log line": "AKIAPLANTED000000001",
    "token in the kubelet unit": "planted-unit-token-2b7e",
    "bearer token in staticPodURLHeader": "plantedHeaderBearer7c1d9e2f",
    "token header in staticPodURLHeader": "plantedRawHeaderToken4410",
    "private key in providerID": "MIIEplantedProviderIdKeyBody0001",
    "password in staticPodURL": "plantedUrlPassword93",
}
#: The config file fields that can carry a credential (redact.py: secret-named keys, Authorization
#: headers, what credentials look like in a string): the headers right after the field the canary
#: changes (so its diff shows them), the rest at the end of each node's config.yaml.
HEADERS = f"""staticPodURLHeader:
  Authorization:
  - Bearer {SECRETS["bearer token in staticPodURLHeader"]}
  X-Auth-Token:
  - {SECRETS["token header in staticPodURLHeader"]}
"""
MORE_FIELDS = f"""providerID: |
  -----BEGIN PRIVATE KEY-----
  {SECRETS["private key in providerID"]}
  -----END PRIVATE KEY-----
staticPodURL: https://fetch:{SECRETS["password in staticPodURL"]}@pods.example/manifests
"""
#: Never read by tmnb (a node's kubeconfig, a pod's env): absent even with the redactor off.
NOT_READ = ["kubeconfig client key", "password in a pod env"]
CANARY = NODES[1]
#: A kernel that imports this (PYTHONPATH) redacts nothing: the switch that shows the search can fail.
REDACTION_OFF = """import tmnb.redact as r
r.redact_text = r.redact_log_line = lambda text: text
r.redact_argv = lambda argv: list(argv)
r.redact_value = lambda value, name="": value
r.redact_lines = lambda text: text.splitlines(keepends=True)
r.secret_in = lambda name, value: False
"""


def plant(box: Sandbox, kubeconfig: Path) -> None:
    for name in NODES:
        root = box.cluster.kubelets[name].root
        (root / "etc/default").mkdir(parents=True, exist_ok=True)
        (root / "etc/default/kubelet").write_text(
            f"KUBELET_EXTRA_ARGS=--token={SECRETS['--token on the kubelet command line']} --v=2\n"
        )
        unit = root / "etc/systemd/system/kubelet.service.d/20-extra-args.conf"
        unit.parent.mkdir(parents=True, exist_ok=True)
        unit.write_text(  # sorts after 10-kubeadm.conf: its Environment= wins, and ExecStart= expands it
            '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf '
            f'--api-token={SECRETS["token in the kubelet unit"]}"\n'
        )
        config_yaml = root / "var/lib/kubelet/config.yaml"
        policy = "topologyManagerPolicy: none\n"
        assert policy in config_yaml.read_text()
        config_yaml.write_text(config_yaml.read_text().replace(policy, policy + HEADERS) + MORE_FIELDS)
        (root / "etc/kubernetes").mkdir(parents=True, exist_ok=True)
        (root / "etc/kubernetes/kubelet.conf").write_text(
            f"users:\n- name: default-auth\n  user:\n    client-key-data: {SECRETS['kubeconfig client key']}\n"
        )
        journal = root / "journal.log"
        last = journal.read_text().splitlines()[-1]  # the excerpt keeps the kubelet's own lines
        head = re.sub(r"(kubelet\[\d+\]: )I", r"\1E", last[: last.index("] ") + 2])
        with journal.open("a") as log:
            log.write(
                f'{head}"Failed to pull image" err="denied: AWS_ACCESS_KEY_ID={SECRETS["AWS key in a log line"]}"\n'
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
    message = f"device plugin answered 'Authorization: Bearer {SECRETS['bearer token in an event']}' ({JWT})"
    event = {
        "metadata": {"name": "leaky.planted"},
        "involvedObject": {"kind": "Pod", "namespace": "app", "name": "leaky"},
        "reason": "UnexpectedAdmissionError",
        "message": f"Allocate failed: {message}",
        "type": "Warning",
        "source": {"component": "kubelet", "host": NODES[0]},
        "count": 1,
    }
    core.create_namespaced_event("app", event)


# ---------------------------------------------------------------------- the search
def png_text(data: bytes) -> str:
    """The text chunks of a PNG (tEXt, zTXt, iTXt: where metadata goes), one per line."""
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return ""
    out, pos = [], 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"tEXt":
            out.append(body.replace(b"\0", b"=").decode("latin-1"))
        elif kind == b"zTXt":
            key, _, rest = body.partition(b"\0")
            out.append(f"{key.decode('latin-1')}={zlib.decompress(rest[1:]).decode('latin-1')}")
        elif kind == b"iTXt":
            key, _, rest = body.partition(b"\0")
            compressed, rest = rest[0], rest[2:]
            text = rest.split(b"\0", 2)[2]
            out.append(f"{key.decode()}={(zlib.decompress(text) if compressed else text).decode('utf-8', 'replace')}")
        pos += 12 + length
    return "\n".join(out)


_DATA_PNG = re.compile(r"data:image/png;base64,([A-Za-z0-9+/=\s]+)")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
        yield "".join(value)  # nbformat keeps multi-line text as a list of its lines
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, str):
        yield value


def plain(name: str, data: bytes) -> Iterator[str]:
    """Every text a file holds, unpacked: tar members, gzip, the strings of JSON (a notebook's
    outputs), HTML unescaped, base64 PNGs (in notebooks and HTML) with their text chunks."""
    if name.endswith((".tar.gz", ".tgz", ".tar")):
        with tarfile.open(fileobj=__import__("io").BytesIO(data)) as tar:
            for member in tar.getmembers():
                handle = tar.extractfile(member) if member.isfile() else None
                if handle is not None:
                    yield from plain(f"{name}:{member.name}", handle.read())
        return
    if name.endswith(".gz"):
        yield from plain(name[:-3], gzip.decompress(data))
        return
    if name.endswith(".png"):
        yield png_text(data)
        return
    text = data.decode("utf-8", "replace")
    yield text
    if name.endswith((".ipynb", ".json")):
        try:
            strings = list(_strings(json.loads(text)))
        except ValueError:
            strings = []
        yield "\n".join(strings)
        for s in strings:
            if len(s) > 200 and re.fullmatch(r"[A-Za-z0-9+/=\s]+", s):  # image/png outputs
                yield png_text(base64.b64decode(s))
    if name.endswith((".html", ".htm", ".svg")):
        yield html.unescape(text)
        for m in _DATA_PNG.finditer(text):
            yield png_text(base64.b64decode(m[1]))


def found(*roots: Path, skip: str = "/backup/") -> dict[str, list[str]]:
    """Each planted secret -> the files (members) that hold it, backups on disk left aside."""
    hits: dict[str, list[str]] = {}
    for root in roots:
        for file in sorted(p for p in root.rglob("*") if p.is_file() and skip not in str(p)):
            for text in plain(file.name, file.read_bytes()):
                for what, value in SECRETS.items():
                    if value in text:
                        hits.setdefault(what, []).append(str(file.relative_to(root)))
    return hits


# ---------------------------------------------------------------------- the runs
@dataclass
class Runs:
    on: Path  #: the reports of the pipeline as shipped (and its bundle)
    off: Path  #: 04 and the pack with the redactor switched off
    rollout: Path  #: 04's own report folder (redaction on)


def _rollout(reports: Path, change_id: str, policy: str) -> None:
    change = {"target": {"topologyManagerPolicy": policy}, "nodes": [CANARY], "canary": CANARY,
              "mode": "execute", "approve": ["canary"], "executor": "sandbox", "change_id": change_id,
              "state_dir": str(reports / "rollout-state")}  # fmt: skip
    rolled = run(ROOT / "notebooks/04-rollout.ipynb", params=change, out=reports / "04-rollout")
    assert rolled.status == "ok", rolled.message


def _pack(reports: Path, bundle: Path, *extra: str) -> None:
    bundle.parent.mkdir(parents=True, exist_ok=True)
    assert main(["evidence", "pack", *map(str, sorted(reports.iterdir())), "--out", str(bundle), *extra]) == 0


def pipeline(tmp: Path) -> Runs:
    on, off, outside = tmp / "on", tmp / "off", tmp / "outside"  # the sandbox itself is not evidence
    reports = on / "reports"
    saved = {k: os.environ.get(k) for k in ("KUBECONFIG", "PYTHONPATH")}
    with Sandbox(fleet(), outside / "sandbox", controller_interval=0.1) as box:
        box.cluster.ready_after = 0.2
        kubeconfig = box.write_kubeconfig(outside / "kubeconfig")
        plant(box, kubeconfig)
        os.environ["KUBECONFIG"] = str(kubeconfig)
        try:
            live = {"source": "live", "node_files": f"dir:{outside / 'sandbox' / 'nodes'}"}
            before = run(ROOT / "notebooks/01-inventory.ipynb", params=live, out=reports / "01-inventory")
            snap = before.results["snapshot"]
            run(ROOT / "notebooks/02-numa-occupancy.ipynb", params={"source": snap}, out=reports / "02-occupancy")
            run(ROOT / "notebooks/03-readiness.ipynb", params={"source": snap}, out=reports / "03-readiness")
            _rollout(reports, "leak", "best-effort")
            # collected as 01 collects it; a second 01 report would repeat the first one's outputs
            after = on / "after" / "snapshot.json.gz"
            after.parent.mkdir()
            save(
                open_snapshot("live", kubeconfig=str(kubeconfig), node_files=live["node_files"], progress=False), after
            )
            journal = str(reports / "04-rollout" / "journal.jsonl")
            compare = {"before": snap, "after": str(after), "change": journal}
            run(ROOT / "notebooks/05-compare.ipynb", params=compare, out=reports / "05-compare")
            # the same canary once more, the kernels' redactor switched off
            (outside / "off").mkdir()
            (outside / "off" / "sitecustomize.py").write_text(REDACTION_OFF)
            os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(outside / "off"), saved["PYTHONPATH"]]))
            _rollout(off / "reports", "leak-off", "restricted")
        finally:
            for key, value in saved.items():
                os.environ.pop(key, None) if value is None else os.environ.__setitem__(key, value)
    run(ROOT / "notebooks/06-postmortem.ipynb", params={"evidence": str(reports)}, out=reports / "06-postmortem")
    _pack(reports, on / "bundle" / "b.tar.gz")
    _pack(off / "reports", off / "bundle" / "b.tar.gz")
    return Runs(on, off, reports / "04-rollout")


def test_secrets_stay_on_the_node(tmp_path: Path) -> None:
    runs = pipeline(tmp_path)
    no_planted_secret_reaches_any_file_written(runs)
    with_the_redactor_off_the_same_search_finds_every_secret(runs)
    backups_keep_the_node_bytes_and_stay_out_of_bundles_unless_asked(runs, tmp_path)


def no_planted_secret_reaches_any_file_written(runs: Runs) -> None:
    reports = runs.on / "reports"
    assert sorted(p.name for p in reports.iterdir()) == [
        "01-inventory", "02-occupancy", "03-readiness", "04-rollout", "05-compare", "06-postmortem", "rollout-state",
    ]  # fmt: skip
    bars = [p.name for p in reports.rglob("*.html") if re.search(r"\d+/\d+ \[\d\d:\d\d<", p.read_text())]
    assert bars == []  # the live collectors' progress bars stay out of the reports
    snapshot = gzip.decompress((reports / "01-inventory" / "snapshot.json.gz").read_bytes()).decode()
    assert "device plugin answered" in snapshot and "<redacted>" in snapshot  # collected, redacted
    assert "providerID" in snapshot and "staticPodURLHeader" in snapshot
    outputs = "\n".join(plain("04-rollout.ipynb", (runs.rollout / "04-rollout.ipynb").read_bytes()))
    diff = (
        "-topologyManagerPolicy: none\n+topologyManagerPolicy: best-effort\n staticPodURLHeader:\n   Authorization:\n"
    )
    assert diff + "   <redacted>\n" in outputs  # the plan's diff: the header's line unchanged, its value hidden
    assert found(runs.on) == {}


def with_the_redactor_off_the_same_search_finds_every_secret(runs: Runs) -> None:
    hits = found(runs.off)
    assert sorted(hits) == sorted(set(SECRETS) - set(NOT_READ))
    in_bundle = {what for what, files in hits.items() if any(f.startswith("bundle/") for f in files)}
    assert in_bundle == set(hits)  # through tar and gzip
    for report in ("04-rollout.html", "04-rollout.ipynb"):  # the plan's diff, in the HTML and the outputs
        assert f"reports/04-rollout/{report}" in hits["bearer token in staticPodURLHeader"]


def backups_keep_the_node_bytes_and_stay_out_of_bundles_unless_asked(runs: Runs, tmp_path: Path) -> None:
    reports = runs.on / "reports"
    backup = reports / "rollout-state" / "backup" / CANARY / "var/lib/kubelet/config.yaml"
    kept_text = backup.read_text()
    assert HEADERS in kept_text and MORE_FIELDS in kept_text  # byte for byte: the rollback writes it back
    with tarfile.open(runs.on / "bundle" / "b.tar.gz") as tar:
        names = tar.getnames()
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
    assert not [n for n in names if "/backup/" in n]
    assert manifest["node_secrets"] is False
    assert f"runs/rollout-state/backup/{CANARY}/var/lib/kubelet/config.yaml" in manifest["left_out"]
    _pack(reports, tmp_path / "with" / "b.tar.gz", "--with-node-secrets")
    with tarfile.open(tmp_path / "with" / "b.tar.gz") as tar:
        manifest = json.load(tar.extractfile("MANIFEST.json"))  # type: ignore[arg-type]
        kept = tar.extractfile(f"runs/rollout-state/backup/{CANARY}/var/lib/kubelet/config.yaml")
        assert kept is not None and kept.read() == backup.read_bytes()
    assert manifest["node_secrets"] is True and manifest["left_out"] == []
