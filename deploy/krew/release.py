"""The krew side of a release: the archive ``kubectl krew install tmnb`` downloads (this folder's
``kubectl-tmnb`` and the release's wheel) and the plugin manifest, its placeholders filled.

    uv build --out-dir dist
    python deploy/krew/release.py dist --release-url URL --homepage URL

writes ``dist/kubectl-tmnb-v<version>.tar.gz`` and ``dist/tmnb.yaml``; publish the archive at
``URL/kubectl-tmnb-v<version>.tar.gz`` and the manifest in a krew index (or install from the two files:
``kubectl krew install --manifest=dist/tmnb.yaml --archive=dist/kubectl-tmnb-v<version>.tar.gz``).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import string
import tarfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]


def version() -> str:
    """The package's version, from the one place it is written."""
    found = re.search(r'^__version__ = "([^"]+)"$', (ROOT / "src" / "tmnb" / "__init__.py").read_text(), re.M)
    if found is None:
        raise SystemExit("release: no __version__ in src/tmnb/__init__.py")
    return found[1]


def _plain(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """Members owned by nobody in particular, dated 0: the same files make the same archive."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def pack(dist: Path, release: str) -> Path:
    wheel = dist / f"tmnb-{release}-py3-none-any.whl"
    if not wheel.is_file():
        raise SystemExit(f"release: {wheel} is missing; build it first (uv build --out-dir {dist})")
    out = dist / f"kubectl-tmnb-v{release}.tar.gz"
    with gzip.GzipFile(out, "wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        tar.add(HERE / "kubectl-tmnb", "kubectl-tmnb", filter=_plain)
        tar.add(wheel, wheel.name, filter=_plain)
    return out


def fill(archive: Path, release: str, release_url: str, homepage: str) -> str:
    """The manifest with every placeholder filled; a placeholder this does not know is an error."""
    template = string.Template((HERE / "tmnb.yaml").read_text())
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    return template.substitute(VERSION=release, RELEASE_URL=release_url.rstrip("/"), HOMEPAGE=homepage, SHA256=digest)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("dist", type=Path, help="the folder holding the release's wheel")
    parser.add_argument("--release-url", required=True, help="where the release's files are published")
    parser.add_argument("--homepage", required=True, help="the project's page")
    args = parser.parse_args()
    release = version()
    archive = pack(args.dist, release)
    manifest = args.dist / "tmnb.yaml"
    manifest.write_text(fill(archive, release, args.release_url, args.homepage))
    print(f"wrote {archive}\nwrote {manifest}")


if __name__ == "__main__":
    main()
