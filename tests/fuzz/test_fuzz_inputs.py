"""Issue 25's inputs fuzzed end to end: every notebook's parameters through ``tmnb run`` (the kernel
replaced by a stub, so an accepted run costs nothing), snapshots and PodLists that repeat entries,
and bundles whose members collide, escape or carry terminal escapes. Each answer is an exit of
0, 2, 3 or 4, never a traceback, within ``CALL_SECONDS``, raising the peak RSS by less than ``MEMORY`` bytes."""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import resource
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fuzzing import HOSTILE, VALUES, cli_exit, edited_json, fuzz, quiet, scratch, survive
from hypothesis import example, given
from hypothesis import strategies as st

from factories import busy_snapshot, pod
from tmnb.cli.run import runner
from tmnb.cli.run.kernel import KernelGone
from tmnb.cli.run.params import declared_parameters
from tmnb.report.places import notebooks_dir
from tmnb.snapshot import to_dict

pytestmark = pytest.mark.fuzz

_TMP = scratch("inputs")
#: how much one answer may raise the process's peak RSS (the sample fleet loaded twice fits many times over)
MEMORY = 256 << 20
NOTEBOOKS = sorted(notebooks_dir().glob("*.ipynb"))
DECLARED = [(nb.stem, name) for nb in NOTEBOOKS for name in declared_parameters(nb) if name != "out_dir"]
RAW = (
    VALUES.map(lambda v: json.dumps(v) if not isinstance(v, str) else v)
    | HOSTILE
    | st.sampled_from(
        ["sample", "live", "/dev/zero", "../x", "-1", ".nan", "&a [*a]", "{bogus: 1}", "x in (a", "a" * 70_000]
    )
)


class NoKernel:
    """Stands in for the runner's kernel: an accepted run costs nothing, and the snapshot checks the
    kernel would run are left to the runner (as when a kernel cannot answer)."""

    def __init__(self, notebook: Path, *, live: bool = False) -> None:
        pass

    def __enter__(self) -> NoKernel:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def ask_checks(self, notebook: Path, params: object) -> None:
        raise KernelGone("no kernel in the fuzz run")


@contextlib.contextmanager
def bounded_memory(limit: int = MEMORY) -> Iterator[None]:
    """The process's peak resident set may not grow by more than ``limit`` bytes in the block (a reader
    that holds a whole member, or expands aliases, raises it by gigabytes); cheap enough for every example."""
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) << 10
    assert grown < limit, f"peak RSS grew by {grown >> 20} MiB"


def _answer(argv: list[str]) -> tuple[int, str]:
    with quiet() as err, bounded_memory():
        code = survive(cli_exit, argv)
    text = err.getvalue()
    assert "Traceback" not in text, text
    return code, text  # type: ignore[return-value]  # survive returns the exit or raises on a TmnbError leak


@fuzz
@given(st.lists(st.sampled_from(DECLARED).flatmap(lambda d: st.tuples(st.just(d), RAW)), min_size=1, max_size=3))
@example([(("04-rollout", "options"), "{drain_timeout: .inf}")])
@example([(("03-readiness", "target"), "&a {x: *a}")])
@example([(("05-compare", "window"), " -5h")])
def test_notebook_parameters_are_checked_in_one_line(monkeypatch, given: list[tuple[tuple[str, str], str]]) -> None:
    started: list[str] = []
    monkeypatch.setattr(runner, "WarmKernel", NoKernel)
    monkeypatch.setattr(runner, "_execute", lambda src, dst, params, timeout, kernel: started.append(src.stem))
    monkeypatch.setenv("KUBECONFIG", str(_TMP / "no-kubeconfig"))
    notebook = given[0][0][0]
    params = [a for (nb, name), raw in given if nb == notebook for a in ("-p", name, raw)]
    out = _TMP / f"run-{len(list(_TMP.iterdir()))}"
    code, err = _answer(["run", notebook, "--out", str(out), *params])
    assert code in (0, 2, 4), (code, err)
    assert (code == 0) == bool(started), (code, err)  # a kernel only for an accepted run
    assert len(err.splitlines()) <= 1 and len(err) < 1200, err


SNAPSHOT = to_dict(
    busy_snapshot().__class__(**{**busy_snapshot().__dict__, "pods": [pod("p0", "w1"), pod("p1", "w1")]})
)


@st.composite
def repeated(draw: st.DrawFn, doc: dict[str, Any], lists: tuple[str, ...]) -> dict[str, Any]:
    """``doc`` with an entry of one of ``lists`` repeated, as is or with a key changed."""
    doc = json.loads(json.dumps(doc))
    key = draw(st.sampled_from(lists))
    if doc[key]:
        entry = json.loads(json.dumps(draw(st.sampled_from(doc[key]))))
        meta = entry.get("metadata", entry)
        field = draw(st.sampled_from(["name", "uid", "namespace", None]))
        if field in meta:
            meta[field] = draw(st.sampled_from(["p0", "p1", "w1", "uid-p0", "other"]))
        doc[key].insert(draw(st.integers(0, len(doc[key]))), entry)
    return doc


SET = ["--set", "topologyManagerPolicy=single-numa-node"]


@fuzz
@given(repeated(SNAPSHOT, ("nodes", "pods")) | edited_json(SNAPSHOT))
def test_snapshots_are_predicted_or_refused_in_one_line(doc: dict[str, Any]) -> None:
    path = _TMP / "snap.json"
    path.write_text(json.dumps(doc))
    code, err = _answer(["whatif", "--snapshot", str(path), *SET, "--format", "json"])
    assert code in (0, 2, 3), (code, err)
    nodes = doc.get("nodes")
    names = [n.get("name") for n in nodes if isinstance(n, dict)] if isinstance(nodes, list) else []
    names = [n for n in names if isinstance(n, str)]
    if code != 2 and len(set(names)) < len(names):
        raise AssertionError(f"a node listed twice was predicted: {names}")


def _item(name: str, uid: str) -> dict[str, Any]:
    meta = {"name": name, "namespace": "app", "uid": uid, "creationTimestamp": "2026-11-30T10:00:00Z"}
    spec = {"nodeName": "w1", "containers": [{"name": "main", "resources": {"requests": {"cpu": "2"}}}]}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running", "qosClass": "Burstable"}}


PODLIST = {"kind": "PodList", "apiVersion": "v1", "items": [_item("p0", "uid-p0"), _item("p1", "uid-p1")]}
NODE_ROOT: list[Path] = []


@fuzz
@given(repeated(PODLIST, ("items",)) | edited_json(PODLIST))
def test_pod_lists_with_repeated_pods_are_refused_in_one_line(doc: dict[str, Any]) -> None:
    if not NODE_ROOT:
        from factories import layered_node
        from tmnb.sources.node_render import write_node_root

        NODE_ROOT.append(write_node_root(layered_node(), _TMP / "w1"))
    path = _TMP / "pods.json"
    path.write_text(json.dumps(doc))
    argv = ["whatif", "--node-root", str(NODE_ROOT[0]), "--pods", str(path), "--node-name", "w1", *SET]
    code, err = _answer(argv)
    assert code in (0, 2, 3), (code, err)
    listed = doc.get("items")
    metas = [i.get("metadata") for i in listed if isinstance(i, dict)] if isinstance(listed, list) else []
    uids = [m.get("uid") for m in metas if isinstance(m, dict) and isinstance(m.get("uid"), str)]
    if code != 2 and len(set(uids)) < len(uids):
        raise AssertionError(f"a pod listed twice was predicted: {uids}")


NAMES = st.lists(
    st.sampled_from(["x", "y", "runs", "..", ".", "", "MANIFEST.json", "\x1b[2J", "\x07", "é"]) | HOSTILE,
    min_size=1,
    max_size=3,
).map("/".join)
MEMBERS = st.lists(
    st.tuples(NAMES, st.sampled_from([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE]), st.binary(max_size=8)),
    max_size=5,
)


def _tar(members: list[tuple[str, bytes, bytes]], listed: bool, cut: int | None) -> bytes:
    files = {n: hashlib.sha256(d).hexdigest() for n, t, d in members if t == tarfile.REGTYPE}
    manifest = json.dumps({"schema": "tmnb.evidence/v1", "files": files if listed else {}}).encode()
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as tar:
        for name, kind, data in [("MANIFEST.json", tarfile.REGTYPE, manifest), *members]:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.size = len(data) if kind == tarfile.REGTYPE else 0
            info.linkname = "/etc/passwd" if kind == tarfile.SYMTYPE else ""
            tar.addfile(info, io.BytesIO(data) if kind == tarfile.REGTYPE else None)
    body = out.getvalue()
    return body if cut is None else body[:cut]


@fuzz
@given(MEMBERS, st.booleans(), st.none() | st.integers(0, 600))
@example([("runs/x", tarfile.REGTYPE, b"a"), ("runs/x/y", tarfile.REGTYPE, b"b")], True, None)
@example([("runs/\x1b]0;t\x07", tarfile.REGTYPE, b"")], False, None)
def test_bundles_are_read_in_one_line_and_unpacked_whole_or_not_at_all(
    monkeypatch: pytest.MonkeyPatch, members: list[tuple[str, bytes, bytes]], listed: bool, cut: int | None
) -> None:
    monkeypatch.setattr(runner, "WarmKernel", NoKernel)  # 06 on what was opened: no kernel
    monkeypatch.setattr(runner, "_execute", lambda src, dst, params, timeout, kernel: None)
    bundle = _TMP / "b.tar.gz"
    bundle.write_bytes(_tar(members, listed, cut))
    code, err = _answer(["evidence", "verify", str(bundle)])
    assert code in (0, 2, 4), (code, err)
    assert not any(ch in err for ch in "\x1b\x07"), err
    target = _TMP / f"open-{len(list(_TMP.iterdir()))}"
    opened, err = _answer(["evidence", "open", str(bundle), "--to", str(target)])
    assert opened in (0, 2, 4), (opened, err)
    assert (opened in (2, 4)) is not target.exists()
    assert not [p for p in _TMP.iterdir() if p.name.startswith(f".{target.name}.")]
