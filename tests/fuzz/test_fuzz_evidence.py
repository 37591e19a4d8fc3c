"""Evidence bundles and run folders as they may arrive: a manifest edited by hand or not JSON at all,
an archive cut short or not an archive. ``tmnb evidence pack/verify`` answer in one line."""

from __future__ import annotations

import io
import json
import tarfile

import pytest
from fuzzing import VALUES, cli_exit, edited_json, fuzz, quiet, scratch, survive
from hypothesis import example, given
from hypothesis import strategies as st

from tmnb.evidence import MANIFEST, SCHEMA

pytestmark = pytest.mark.fuzz

_TMP = scratch("evidence")
RUN_MANIFEST = {"notebook": "01-inventory.ipynb", "status": "ok", "parameters": {"source": "sample"}}
BUNDLE_MANIFEST = {
    "schema": SCHEMA,
    "created": "2026-01-01T00:00:00Z",
    "created_by": "sre",
    "runs": [{"name": "run", **RUN_MANIFEST}],
    "files": {"runs/run/manifest.json": "0" * 64},
}
DEEP = "[" * 100_000 + "]" * 100_000  # json.loads recurses once per level
MANIFESTS = st.one_of(
    edited_json(BUNDLE_MANIFEST).map(json.dumps),
    VALUES.map(json.dumps),
    st.sampled_from([DEEP, "{", "\xff"]),
)


def _bundle(manifest: str, cut: int | None) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, data in ((MANIFEST, manifest.encode("utf-8", "surrogatepass")), ("runs/run/a", b"x")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    body = out.getvalue()
    return body if cut is None else body[:cut]


@fuzz
@given(MANIFESTS, st.none() | st.integers(0, 400))
@example(DEEP, None)  # json.loads raised RecursionError: a traceback
def test_bundles_are_verified_or_refused_in_one_line(manifest: str, cut: int | None) -> None:
    path = _TMP / "bundle.tar.gz"
    path.write_bytes(_bundle(manifest, cut))
    with quiet() as err:
        code = survive(cli_exit, ["evidence", "verify", str(path)])
    assert code in (0, 2, 4), (code, err.getvalue())


@fuzz
@given(MANIFESTS)
@example("[]")  # a run manifest that is not an object: AttributeError on .get
def test_run_folders_are_packed_or_refused_in_one_line(manifest: str) -> None:
    run = _TMP / "run"
    run.mkdir(exist_ok=True)
    (run / "manifest.json").write_text(manifest, encoding="utf-8", errors="surrogatepass")
    with quiet() as err:
        code = survive(cli_exit, ["evidence", "pack", str(run), "--out", str(_TMP / "out.tar.gz"), "--force"])
    assert code in (0, 2), (code, err.getvalue())
