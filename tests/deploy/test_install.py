"""tmnb as a user installs it, and as the image does: the sdist and the wheel built from the
checkout, the wheel installed into a fresh virtual environment outside it, and every command run from
a folder of its own, where nothing of the checkout can be found.

deploy/Containerfile is held to the same steps: its first stage builds the wheel from the files it
copies (a copy of exactly those files must build the same wheel), and the image installs that wheel
alone into a virtual environment, as the fixture here does. uv stands in for pip in both steps (the
same build backend, the same wheel; installed from uv's cache, offline, at the versions of the
environment the tests run in), so the module takes about a minute.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from conftest import ROOT, require_tool

from .containerfile import Stage, environment, stages

pytestmark = pytest.mark.notebook

#: What the wheel must carry besides the code: the notebooks, the report template, the sample fleet.
DATA = {
    "notebooks": "tmnb/notebooks",
    "src/tmnb/templates": "tmnb/templates",
    "src/tmnb/sources/data": "tmnb/sources/data",
}


def _uv() -> str:
    beside = Path(sys.executable).with_name("uv")  # the Makefile installs it into .venv
    return str(beside) if beside.is_file() else require_tool("uv")


def _check(argv: list[str | Path], timeout: float = 300, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=timeout, **kwargs)
    assert done.returncode == 0, f"{argv}: {done.stderr[-3000:]}"
    return done


def _record(wheel: Path) -> list[str]:
    """The wheel's files with their sha256, as its RECORD lists them (RECORD's own line left out)."""
    with zipfile.ZipFile(wheel) as zf:
        (name,) = [n for n in zf.namelist() if n.endswith(".dist-info/RECORD")]
        return sorted(line for line in zf.read(name).decode().splitlines() if not line.startswith(name))


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, and the wheel built from it, as a release builds them."""
    out = tmp_path_factory.mktemp("dist")
    _check([_uv(), "build", "--out-dir", out, ROOT])
    return out


def _wheel(folder: Path) -> Path:
    (wheel,) = folder.glob("tmnb-*.whl")
    return wheel


@pytest.fixture(scope="module")
def image_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel the Containerfile's first stage builds: from a copy of exactly the files it copies."""
    build = _stage("wheel")
    context = tmp_path_factory.mktemp("context")
    for copy in build.args("COPY"):
        *sources, dest = copy.split()
        for source in sources:
            assert dest in ("./", f"./{source}"), f"COPY {copy}: the tests copy into the same names"
            target = context / source
            if (ROOT / source).is_dir():
                shutil.copytree(ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
            else:
                shutil.copyfile(ROOT / source, target)
    *_, wheel_step = build.commands()
    assert wheel_step[-5:] == ["wheel", "--no-deps", "--wheel-dir", "/dist", "."], wheel_step
    out = tmp_path_factory.mktemp("image-dist")
    _check([_uv(), "build", "--wheel", "--out-dir", out, context])
    return _wheel(out)


def _stage(name: str | None) -> Stage:
    (stage,) = [s for s in stages() if s.name == name]
    return stage


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory, image_wheel: Path) -> Path:
    """A fresh virtual environment holding the image's wheel and what it depends on, at the versions
    of the environment these tests run in (all in uv's cache: no index is asked)."""
    folder = tmp_path_factory.mktemp("venv")
    pins = folder / "constraints.txt"
    frozen = _check([_uv(), "pip", "freeze", "--python", sys.executable]).stdout.splitlines()
    pins.write_text("\n".join(line for line in frozen if not line.startswith(("-e ", "tmnb"))))
    env = folder / "env"
    _check([_uv(), "venv", "--quiet", "--python", sys.executable, env])
    python = env / "bin" / "python"
    _check([_uv(), "pip", "install", "--quiet", "--offline", "--python", python, "-c", pins, image_wheel])
    return env


@pytest.fixture(scope="module")
def user(tmp_path_factory: pytest.TempPathFactory, venv: Path) -> dict[str, str]:
    """A user's shell: the fresh environment first on PATH (the tests' own is taken off it), a home of
    its own, no $TMNB_REPORTS, and Python writing bytecode as it does by default."""
    ours = str(Path(sys.executable).parent)
    path = os.pathsep.join([str(venv / "bin"), *(p for p in os.environ["PATH"].split(os.pathsep) if p != ours)])
    drop = {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE", "TMNB_REPORTS", "JUPYTER_PATH"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "PATH": path, "HOME": str(tmp_path_factory.mktemp("home"))}


@pytest.fixture
def here(tmp_path: Path) -> Path:
    """A folder outside the checkout to run commands from."""
    assert not tmp_path.is_relative_to(ROOT)
    return tmp_path


def _site_packages(venv: Path) -> Path:
    (site,) = venv.glob("lib/python3.*/site-packages")
    return site


def _files(folder: Path) -> set[Path]:
    return {p for p in folder.rglob("*") if "__pycache__" not in p.parts}


def test_the_sdist_and_the_wheel_carry_the_notebooks_templates_and_sample_data(dist: Path) -> None:
    tracked = _check(["git", "ls-files", *DATA], cwd=ROOT).stdout.split()
    assert any(t.startswith("notebooks/") for t in tracked) and any(
        t.startswith("src/tmnb/sources/data/") for t in tracked
    )
    (sdist,) = dist.glob("tmnb-*.tar.gz")
    with tarfile.open(sdist) as tf:
        in_sdist = {m.name.split("/", 1)[1] for m in tf.getmembers() if m.isfile()}
    assert set(tracked) <= in_sdist
    with zipfile.ZipFile(_wheel(dist)) as zf:
        in_wheel = set(zf.namelist())
    for path in tracked:
        folder = next(f for f in DATA if path.startswith(f"{f}/"))
        assert f"{DATA[folder]}{path.removeprefix(folder)}" in in_wheel, path


def test_the_image_builds_and_installs_exactly_that_wheel(dist: Path, image_wheel: Path) -> None:
    """The wheel built from what the first stage copies is the release's, file for file; the image
    copies that wheel alone, installs it alone, and leaves no copy of the checkout."""
    assert image_wheel.name == _wheel(dist).name
    assert _record(image_wheel) == _record(_wheel(dist))
    build, image = stages()
    assert build.name == "wheel" and image.base == build.base
    assert image.args("COPY") == ["--from=wheel /dist/ /dist/"]
    installs = [argv for argv in image.commands() if "install" in argv and Path(argv[0]).name.startswith("pip")]
    assert installs == [["/opt/tmnb/bin/pip", "install", "/dist/tmnb-*.whl"]]
    assert ["python3", "-m", "venv", "/opt/tmnb"] in image.commands()
    assert environment(image)["PATH"].startswith("/opt/tmnb/bin:")
    assert image.args("ENTRYPOINT") == ['["tmnb"]']
    allowed = [line[1:] for line in (ROOT / ".dockerignore").read_text().splitlines() if line.startswith("!")]
    assert sorted(allowed) == sorted(source for copy in build.args("COPY") for source in copy.split()[:-1])


def test_version_params_and_kubectl_plugin_from_the_fresh_environment(
    venv: Path, user: dict[str, str], here: Path, dist: Path
) -> None:
    with zipfile.ZipFile(_wheel(dist)) as zf:
        metadata = zf.read(next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))).decode()
    version = re.search(r"^Version: (\S+)$", metadata, re.M)
    assert version and f"-{version[1]}-" in _wheel(dist).name
    assert _check(["tmnb", "--version"], env=user, cwd=here).stdout.strip() == f"tmnb {version[1]}"
    params = _check(["tmnb", "params", "03"], env=user, cwd=here).stdout
    assert "  mode: str = 'drain'  (one of: drain, restart)" in params.splitlines()
    kubectl = require_tool("kubectl")
    plugin = _check([kubectl, "tmnb", "--version"], env=user, cwd=here)
    assert plugin.stdout.strip() == f"tmnb {version[1]}"
    usage = _check([kubectl, "tmnb", "params", "--help"], env=user, cwd=here).stdout
    assert usage.startswith("usage: kubectl tmnb params")


def test_run_03_by_name_writes_under_reports_here_and_nothing_in_the_installation(
    venv: Path, user: dict[str, str], here: Path
) -> None:
    installed = _site_packages(venv)
    before = _files(installed)
    done = subprocess.run(["tmnb", "run", "03"], env=user, cwd=here, capture_output=True, text=True, timeout=300)
    assert done.returncode == 3, done.stderr  # the sample's readiness raises its blocker, on purpose
    (folder,) = (here / "reports").iterdir()
    assert f"run folder: {folder}" in done.stdout.splitlines()
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["status"] == "alert"
    assert manifest["notebook"] == str(installed / "tmnb" / "notebooks" / "03-readiness.ipynb")
    assert (folder / "03-readiness.html").is_file()
    assert _files(installed) == before


def test_defaults_from_inside_the_installation_go_home(venv: Path, user: dict[str, str]) -> None:
    """A kernel started beside the installed notebooks (JupyterLab opened on site-packages) keeps its
    reports and a change's state out of site-packages, where an upgrade would delete them."""
    probe = "from tmnb.report.places import anchored, reports_root; print(reports_root()); print(anchored('reports/x'))"
    inside = _site_packages(venv) / "tmnb" / "notebooks"
    lines = _check([venv / "bin" / "python", "-c", probe], env=user, cwd=inside).stdout.splitlines()
    home = Path(user["HOME"]).resolve()
    assert lines == [str(home / "tmnb" / "reports"), str(home / "tmnb" / "reports" / "x")]


@pytest.fixture
def lab(user: dict[str, str], here: Path) -> Iterator[tuple[str, str]]:
    """``tmnb notebooks nb --lab``: JupyterLab from the fresh environment on the copies; its URL and token.
    The user's Jupyter configuration lets it run as root, as CI does."""
    config = Path(user["HOME"]) / ".jupyter" / "jupyter_server_config.json"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"ServerApp": {"allow_root": True}}))
    server = subprocess.Popen(
        ["tmnb", "notebooks", "nb", "--lab"],
        env={**user, "BROWSER": "true"},  # the browser it opens is a no-op
        cwd=here,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        deadline, seen = time.monotonic() + 120, []
        while time.monotonic() < deadline and (line := server.stderr.readline()):
            seen.append(line)
            if found := re.search(r"(http://(?:127\.0\.0\.1|localhost):\d+)/lab\?token=(\w+)", line):
                yield found[1], found[2]
                break
        else:
            pytest.fail(f"JupyterLab did not start: {''.join(seen)[-3000:]}")
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_notebooks_copies_and_jupyterlab_on_them(venv: Path, user: dict[str, str], here: Path) -> None:
    installed = _site_packages(venv) / "tmnb" / "notebooks"
    names = sorted(p.name for p in installed.glob("*.ipynb"))
    assert len(names) == 6
    _check(["tmnb", "notebooks", "nb"], env=user, cwd=here)
    for name in names:
        assert (here / "nb" / name).read_bytes() == (installed / name).read_bytes()
    edited = here / "nb" / "03-readiness.ipynb"
    edited.write_text("a user's edits")
    again = _check(["tmnb", "notebooks", "nb"], env=user, cwd=here).stdout
    assert f"kept {Path('nb') / '03-readiness.ipynb'}" in again.splitlines()
    assert edited.read_text() == "a user's edits"


def test_jupyterlab_opens_the_copies_with_the_environment_kernel(lab: tuple[str, str]) -> None:
    url, token = lab
    headers = {"Authorization": f"token {token}"}
    contents = httpx.get(f"{url}/api/contents", headers=headers, timeout=30).json()
    assert sorted(c["name"] for c in contents["content"]) == [
        f"{n}.ipynb"
        for n in ("01-inventory", "02-numa-occupancy", "03-readiness", "04-rollout", "05-compare", "06-postmortem")
    ]
    specs = httpx.get(f"{url}/api/kernelspecs", headers=headers, timeout=30).json()
    assert "python3" in specs["kernelspecs"]


@pytest.mark.slow
def test_the_demo_runs_from_the_fresh_environment(venv: Path, user: dict[str, str], here: Path) -> None:
    """Minutes, not seconds, from an environment whose bytecode is not compiled yet: in the slow set."""
    done = subprocess.run(["tmnb", "demo"], env=user, cwd=here, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 3, done.stderr[-3000:]  # the rehearsal's alerts, staged on purpose
    (bundle,) = (here / "reports").glob("*-demo-evidence.tar.gz")
    assert f"evidence: {bundle} (verified)" in done.stdout.splitlines()
