"""A copied node root with one file corrupted: the node is still read, the snapshot written from it
loads back as it was written, and a file that could not be used, or whose absence changed what was
understood, is an issue naming it (a file with a fallback the kubelet shares may go unmentioned)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from fuzzing import fuzz, mutated, scratch, survive
from hypothesis import example, given
from hypothesis import strategies as st

from factories import layered_node
from tmnb.snapshot import Node, from_dict, to_dict
from tmnb.sources.node_render import write_node_root
from tmnb.sources.resolve import node_root_snapshot

pytestmark = pytest.mark.fuzz

_BASE = write_node_root(layered_node(), scratch("node-root") / "w1")
BASELINE = node_root_snapshot(str(_BASE)).nodes[0]
FILES = sorted(str(p.relative_to(_BASE)) for p in _BASE.rglob("*") if p.is_file())
#: Found by listing a directory: when missing, nothing says they ever existed; a directory of that
#: name is entered, not read, by systemd and the kubelet alike.
LISTED = ("etc/systemd/system/kubelet.service.d/", "etc/kubernetes/kubelet.conf.d/")
#: EnvironmentFile=-/var/lib/kubelet/kubeadm-flags.env: with "-" systemd starts the kubelet without it,
#: so its absence is a normal node (as /etc/default/kubelet is), not something to report.
OPTIONAL = ("var/lib/kubelet/kubeadm-flags.env",)
#: Bytes no reader can take: not UTF-8 from the first byte.
GARBAGE = b"\xff\xfe\x00garbage\n"


@contextmanager
def corrupted(rel: str, how: str, text: str) -> Iterator[None]:
    """``rel`` of the shared root replaced for the duration (a copy per example costs seconds a run)."""
    path = _BASE / rel
    original = path.read_bytes()
    path.unlink()
    try:
        if how == "text":
            path.write_text(text, encoding="utf-8", errors="surrogatepass")
        elif how == "garbage":
            path.write_bytes(GARBAGE)
        elif how == "directory":
            path.mkdir()
        elif how == "symlink loop":
            path.symlink_to(path.name)
        elif how == "fifo":
            os.mkfifo(path)
        yield  # "missing": left unlinked
    finally:
        if path.is_dir() and not path.is_symlink():
            path.rmdir()
        elif path.exists() or path.is_symlink():
            path.unlink()
        path.write_bytes(original)


@st.composite
def corruptions(draw: st.DrawFn) -> tuple[str, str, str]:
    rel = draw(st.sampled_from(FILES))
    how = draw(st.sampled_from(["text", "text", "text", "garbage", "missing", "directory", "symlink loop", "fifo"]))
    original = (_BASE / rel).read_text()
    text = draw(mutated(original) | st.text(max_size=40)) if how == "text" else ""
    return rel, how, text


@fuzz
@given(corruptions())
@example(("var/lib/kubelet/config.yaml", "fifo", ""))  # hung: opening a named pipe waits for a writer
@example(("etc/kubernetes/kubelet.conf.d/50-scope.conf", "symlink loop", ""))  # was skipped in silence
@example(("var/lib/kubelet/kubeadm-flags.env", "directory", ""))  # was taken for an absent optional file
@example(("var/lib/kubelet/cpu_manager_state", "symlink loop", ""))  # was a bare OSError with the copy's path
def test_one_corrupt_file_is_an_issue_not_a_lost_node(corruption: tuple[str, str, str]) -> None:
    rel, how, text = corruption
    with corrupted(rel, how, text):
        snapshot = survive(node_root_snapshot, str(_BASE))
        assert not isinstance(snapshot, Exception), f"the whole node was refused: {snapshot}"
        (node,) = snapshot.nodes
        assert isinstance(node, Node)
        assert from_dict(to_dict(snapshot)) == snapshot  # what was understood is valid snapshot data
        changed = dataclasses.replace(node, issues=[]) != dataclasses.replace(BASELINE, issues=[])
        unknowable = (how in ("missing", "directory") and rel.startswith(LISTED)) or (
            how == "missing" and rel in OPTIONAL
        )
        if how == "garbage" or (
            how != "text" and changed and not unknowable
        ):  # unusable, or it made a difference: say so
            messages = " ".join(i.message for i in node.issues)
            assert Path(rel).name in messages, (rel, how, messages)  # per-CPU files are grouped by name
