"""Where the notebooks, reports and a change's state live, whatever the working directory.

A JupyterLab kernel runs in notebooks/, papermill in the caller's directory, the CLI wherever the
user stands: relative defaults would scatter one change's journal and backups over several folders,
and ``tmnb rollout status`` would not find them. Every default here is anchored at the repository
root (the nearest folder above the working directory that holds both ``pyproject.toml`` and
``notebooks/``), or at ``$TMNB_REPORTS`` when set; outside a repository, the working directory,
unless that is inside an installation (a kernel started beside the installed notebooks): evidence
never goes into site-packages, where the next upgrade deletes it.
"""

from __future__ import annotations

import os
import site
import sysconfig
from pathlib import Path

#: Overrides the reports folder for every tmnb entry point (scheduled runs, containers).
REPORTS_ENV = "TMNB_REPORTS"

#: The installed (or checked-out) ``tmnb`` package.
PACKAGE = Path(__file__).resolve().parents[1]

#: Where defaults are anchored when the working directory is inside an installation: ``~/tmnb``.
HOME_FOLDER = "tmnb"


def notebooks_dir() -> Path:
    """The notebooks ``tmnb run`` finds by name: the wheel's copy (``tmnb/notebooks``), or in a source
    checkout, whose editable install carries none, the checkout's ``notebooks/`` that the wheel is built from."""
    installed = PACKAGE / "notebooks"
    return installed if installed.is_dir() else PACKAGE.parents[1] / "notebooks"


def _installation(folder: Path) -> bool:
    """Whether ``folder`` is inside tmnb's package or a site-packages folder of this interpreter."""
    roots = [PACKAGE, *(Path(p).resolve() for p in (sysconfig.get_path("purelib"), sysconfig.get_path("platlib")))]
    if site.ENABLE_USER_SITE:
        roots.append(Path(site.getusersitepackages()).resolve())
    return any(folder.is_relative_to(root) for root in roots)


def _anchor() -> Path:
    """The folder relative defaults hang from: the checkout, else the working directory, else ``~/tmnb``."""
    here = Path.cwd().resolve()
    anchor = repository_root(here) or here
    return Path.home() / HOME_FOLDER if _installation(anchor) else anchor


def repository_root(start: Path | None = None) -> Path | None:
    """The checkout the working directory is in, if any."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").is_file() and (folder / "notebooks").is_dir():
            return folder
    return None


def reports_root() -> Path:
    """The default reports folder: ``$TMNB_REPORTS``, else ``<repository>/reports``, else ``./reports``
    (``~/tmnb/reports`` when the working directory is inside an installation)."""
    env = os.environ.get(REPORTS_ENV)
    if env:
        return Path(env).resolve()
    return _anchor() / "reports"


def resolve_reports_dir(given: str | Path | None) -> Path:
    """A reports folder a user named (relative to where they stand), or the default."""
    return Path(given).resolve() if given else reports_root()


def state_root() -> Path:
    """Where the changes' state folders are by default: ``<reports>/rollouts``."""
    return reports_root() / "rollouts"


def change_folder(change_id: str, state_dir: str | Path | None = None) -> Path:
    """The state folder of a change: plan, journal, backups and snapshots, one per change id."""
    return Path(state_dir).resolve() if state_dir else state_root() / change_id


def anchored(out_dir: str | Path) -> Path:
    """A notebook's ``out_dir``: absolute as ``tmnb run`` passes it, else taken from the repository root,
    so a notebook run in JupyterLab (kernel in notebooks/) writes where the CLI does, never under notebooks/."""
    path = Path(out_dir)
    return path if path.is_absolute() else _anchor() / path
