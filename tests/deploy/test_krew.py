"""``kubectl tmnb`` through krew: the committed manifest is a template whose placeholders a release
fills (deploy/krew/release.py), the filled one passes krew's own checks of a Plugin (restated
below from krew's validation code), and the archive's script runs tmnb, or says where its wheel is."""

from __future__ import annotations

import hashlib
import os
import re
import string
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import pytest
import yaml

from conftest import ROOT, require_tool
from tmnb import __version__

KREW = ROOT / "deploy" / "krew"

#: krew's Plugin (apiVersion krew.googlecontainertools.github.com/v1alpha2): the fields it decodes.
SPEC_FIELDS = {"version", "homepage", "shortDescription", "description", "caveats", "platforms"}
PLATFORM_FIELDS = {"selector", "uri", "sha256", "bin", "files"}


def krew_problems(name: str, plugin: dict[str, Any]) -> list[str]:
    """What krew's ValidatePlugin refuses in a manifest named ``name``.yaml, and unknown fields."""
    problems = []
    spec = plugin.get("spec") or {}
    if plugin.get("apiVersion") != "krew.googlecontainertools.github.com/v1alpha2" or plugin.get("kind") != "Plugin":
        problems.append("apiVersion/kind")
    if not re.fullmatch(r"[\w-]+", name) or plugin.get("metadata", {}).get("name") != name:
        problems.append("metadata.name must be the file's name")
    if not spec.get("shortDescription") or re.search(r"[\r\n]", spec["shortDescription"]):
        problems.append("shortDescription: one line, not empty")
    if not re.fullmatch(r"v\d+\.\d+\.\d+(-[\w.-]+)?(\+[\w.-]+)?", str(spec.get("version"))):
        problems.append(f"version {spec.get('version')!r} is not v-prefixed semver")
    problems += [f"spec.{f}: unknown field" for f in set(spec) - SPEC_FIELDS]
    if not spec.get("platforms"):
        problems.append("no platform")
    for platform in spec.get("platforms") or []:
        problems += [f"platform.{f}: unknown field" for f in set(platform) - PLATFORM_FIELDS]
        if not platform.get("uri") or not platform.get("bin"):
            problems.append("platform: uri and bin are required")
        if not re.fullmatch(r"[a-f0-9]{64}", str(platform.get("sha256"))):
            problems.append(f"platform: sha256 {platform.get('sha256')!r} is not a sha256")
        selector = platform.get("selector") or {}
        keys = [*(selector.get("matchLabels") or {}), *(e["key"] for e in selector.get("matchExpressions") or [])]
        if not keys or set(keys) - {"os", "arch"}:
            problems.append(f"platform: selector keys {keys} (os and arch only, not empty)")
    return problems


def test_the_committed_manifest_is_a_template_of_four_placeholders() -> None:
    text = (KREW / "tmnb.yaml").read_text()
    assert set(string.Template(text).get_identifiers()) == {"VERSION", "RELEASE_URL", "HOMEPAGE", "SHA256"}
    assert "platform: sha256 '${SHA256}' is not a sha256" in krew_problems("tmnb", yaml.safe_load(text))


@pytest.fixture
def release(tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """release.py run on a folder holding a wheel of this version (its bytes do not matter here)."""
    (tmp_path / f"tmnb-{__version__}-py3-none-any.whl").write_bytes(b"a wheel")
    url, home = "https://example.org/tmnb/releases/v1", "https://example.org/tmnb"
    argv = [sys.executable, KREW / "release.py", tmp_path, "--release-url", f"{url}/", "--homepage", home]
    subprocess.run(argv, check=True, capture_output=True, timeout=60)
    return tmp_path, yaml.safe_load((tmp_path / "tmnb.yaml").read_text())


def test_the_release_fills_a_manifest_krew_accepts(release: tuple[Path, dict[str, Any]]) -> None:
    dist, plugin = release
    assert krew_problems("tmnb", plugin) == []
    assert krew_problems("kubectl-tmnb", plugin) == ["metadata.name must be the file's name"]  # the check can fail
    archive = dist / f"kubectl-tmnb-v{__version__}.tar.gz"
    (platform,) = plugin["spec"]["platforms"]
    assert platform["uri"] == f"https://example.org/tmnb/releases/v1/{archive.name}"
    assert platform["sha256"] == hashlib.sha256(archive.read_bytes()).hexdigest()
    assert plugin["spec"]["version"] == f"v{__version__}"
    with tarfile.open(archive) as tar:
        members = {m.name: m for m in tar.getmembers()}
    assert set(members) == {platform["bin"], f"tmnb-{__version__}-py3-none-any.whl"}
    assert members[platform["bin"]].mode & 0o111


def _krew_install(dist: Path, root: Path) -> Path:
    """The archive unpacked into a krew store and its bin linked into krew's bin, as krew does."""
    store, bin_dir = root / "store" / "tmnb" / f"v{__version__}", root / "bin"
    store.mkdir(parents=True)
    bin_dir.mkdir()
    with tarfile.open(dist / f"kubectl-tmnb-v{__version__}.tar.gz") as tar:
        tar.extractall(store, filter="data")
    (bin_dir / "kubectl-tmnb").symlink_to(store / "kubectl-tmnb")
    return bin_dir


def test_kubectl_tmnb_from_krew_runs_tmnb_or_names_the_wheel(
    release: tuple[Path, dict[str, Any]], tmp_path: Path
) -> None:
    kubectl = require_tool("kubectl")
    dist, _ = release
    krew_bin = _krew_install(dist, tmp_path / "krew")
    tmnb_only = tmp_path / "tmnb-only"
    tmnb_only.mkdir()
    (tmnb_only / "tmnb").symlink_to(Path(sys.executable).with_name("tmnb"))
    system = "/usr/bin:/bin"
    env = {k: v for k, v in os.environ.items() if k != "PATH"}

    def kubectl_tmnb(*path: Path) -> subprocess.CompletedProcess[str]:
        search = os.pathsep.join([*map(str, path), system])
        argv = [kubectl, "tmnb", "--version"]
        return subprocess.run(argv, env={**env, "PATH": search}, capture_output=True, text=True, timeout=60)

    installed = kubectl_tmnb(krew_bin, tmnb_only)
    assert (installed.returncode, installed.stdout.strip()) == (0, f"tmnb {__version__}")
    missing = kubectl_tmnb(krew_bin)
    wheel = tmp_path / "krew" / "store" / "tmnb" / f"v{__version__}" / f"tmnb-{__version__}-py3-none-any.whl"
    assert missing.returncode == 127
    assert f"  pipx install {wheel}" in missing.stderr
