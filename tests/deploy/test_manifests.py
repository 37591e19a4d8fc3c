"""Every shipped manifest is valid for every Kubernetes minor tmnb supports, checked strictly (no
unknown fields) against the published schemas by kubernetes-validate."""

from __future__ import annotations

import re
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from conftest import ROOT

from .containerfile import environment, stages

#: The oldest minor whose kubelet tmnb's checks and the manifests (CronJob timeZone) cover.
OLDEST = (1, 30)
SCHEMAS = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
VERSIONS = sorted(
    (m[1] for d in SCHEMAS.iterdir() if (m := re.fullmatch(r"v((\d+)\.(\d+)\.\d+)-local-strict", d.name))
     and (int(m[2]), int(m[3])) >= OLDEST),
    key=lambda v: tuple(map(int, v.split("."))),
)  # fmt: skip
MANIFESTS = sorted((ROOT / "deploy").glob("*.yaml"))


def documents(path: Path) -> list[dict]:  # type: ignore[type-arg]
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def test_the_validator_covers_the_supported_minors():
    assert "1.30.0" in VERSIONS and "1.36.0" in VERSIONS


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: p.name)
def test_manifest_is_valid(path: Path, version: str) -> None:
    for doc in documents(path):
        kubernetes_validate.validate(doc, version, strict=True)


def test_the_validator_refuses_a_misspelled_field():
    (cron,) = [d for d in documents(ROOT / "deploy" / "readiness-cronjob.yaml") if d["kind"] == "CronJob"]
    cron["spec"]["schedul"] = cron["spec"].pop("schedule")
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(cron, VERSIONS[-1], strict=True)


def test_every_namespaced_object_lives_in_the_tmnb_namespaces():
    namespaces = {"tmnb", "tmnb-node-collector"}
    for path in MANIFESTS:
        for doc in documents(path):
            if doc["kind"] not in ("Namespace", "ClusterRole", "ClusterRoleBinding"):
                assert doc["metadata"].get("namespace") in namespaces, (path.name, doc["kind"])


def test_the_cronjob_and_the_containerfile_agree():
    """No container engine runs in CI, so the image is checked by what the CronJob relies on."""
    image = stages()[-1]
    env = environment(image)
    (cron,) = [d for d in documents(ROOT / "deploy" / "readiness-cronjob.yaml") if d["kind"] == "CronJob"]
    pod = cron["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    runs = {e["name"]: e["value"] for e in container["env"]}["TMNB_RUNS"]
    assert env["TMNB_REPORTS"] == runs  # a run without --out lands on the volume too
    assert image.args("USER") == [f"{pod['securityContext']['runAsUser']}:{pod['securityContext']['runAsGroup']}"]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert {m["mountPath"] for m in container["volumeMounts"]} >= {"/tmp", runs}
    assert env["HOME"] == "/tmp"  # Jupyter writes under $HOME
