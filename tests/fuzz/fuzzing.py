"""Shared fuzz plumbing: the example budget of this run and a bound on every call.

The default run uses a small budget so the whole fuzz suite stays within seconds; a nightly run
sets ``TMNB_FUZZ=nightly`` (and selects the suite with ``-m fuzz``) for a hundred times more.
A parser may answer or raise a ``TmnbError``; anything else, or a call that does not return within
``CALL_SECONDS``, fails the example.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import json
import os
import shutil
import signal
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import Any, TypeVar

from hypothesis import HealthCheck, event, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context

from tmnb.cli.main import main
from tmnb.errors import TmnbError
from tmnb.parse.quantity import Quantity

Quantity.parse("1")  # its first call imports the kubernetes client: seconds that are not a hang

T = TypeVar("T")

_PROFILES = {"default": 20, "nightly": 2000}
PROFILE = os.environ.get("TMNB_FUZZ", "default")
if PROFILE not in _PROFILES:
    raise RuntimeError(f"TMNB_FUZZ={PROFILE!r}: expected one of {', '.join(_PROFILES)}")
for _name, _count in _PROFILES.items():
    settings.register_profile(
        f"tmnb-fuzz-{_name}",
        max_examples=_count,
        deadline=None,  # CALL_SECONDS bounds each call; per-example deadlines flake on shared cores
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    )
#: The decorator every fuzz test carries.
fuzz = settings(settings.get_profile(f"tmnb-fuzz-{PROFILE}"))
#: A call that needs longer than this on one small input is hanging (or expanding something huge);
#: generous, as 2 cores are shared by several runs.
CALL_SECONDS = 10.0


class Hang(Exception):
    """A call that did not return within its bound."""


@contextlib.contextmanager
def bounded(seconds: float = CALL_SECONDS) -> Iterator[None]:
    def expire(signum: int, frame: FrameType | None) -> None:
        raise Hang(f"did not return within {seconds}s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def survive(call: Callable[..., T], *args: Any, **kwargs: Any) -> T | TmnbError:
    """``call``'s result, or the ``TmnbError`` it raised (with a message); anything else propagates."""
    with bounded():
        try:
            return call(*args, **kwargs)
        except TmnbError as err:
            assert str(err).strip(), f"{type(err).__name__} without a message"
            return err


@contextlib.contextmanager
def quiet() -> Iterator[io.StringIO]:
    err = io.StringIO()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(err):
        yield err


def cli_exit(argv: list[str]) -> int:
    """The exit status of ``tmnb argv``; argparse's own exits count (0 for --help, 2 for usage)."""
    try:
        return main(argv)
    except SystemExit as done:
        return done.code if isinstance(done.code, int) else 2


def refused_naming(result: object, *sources: str) -> bool:
    """Whether ``result`` is a refusal; if so it must name one of ``sources`` (files the caller passed)."""
    if currently_in_test_context():  # --hypothesis-show-statistics says how many inputs got through
        event("refused" if isinstance(result, TmnbError) else "accepted")
    if not isinstance(result, TmnbError):
        return False
    assert any(s in str(result) for s in sources), f"refusal names none of {sources}: {result}"
    return True


#: Fragments real hostile input is made of: numbers no field holds, signs, separators, quoting,
#: encodings, NUL, variable references, JSON/YAML punctuation and huge ranges.
HOSTILE = st.sampled_from(
    [
        "-1", "0", "1" + "0" * 30, "9" * 400, "1e400", "NaN", "Infinity", "0x1f", "-", ",", ":", "=", " ", "\t",
        "\n", "\r\n", "\x00", "\xe9", "\ufeff", "\\", '"', "'", "${X}", "$X", "%", "{", "}", "[", "]", "null",
        "~", "&a", "*a", "!!python/object", "0-99999999", "4294967296", "-0", "+1", ".5", "1.", "00", "1_000",
    ]
)  # fmt: skip


@st.composite
def mutated(draw: st.DrawFn, original: str, *, max_edits: int = 4) -> str:
    """``original`` with a few insertions, deletions and replacements by hostile fragments."""
    text = original
    for _ in range(draw(st.integers(1, max_edits))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, min(8, len(text) - at)))
        piece = draw(HOSTILE | st.text(max_size=6))
        text = text[:at] + piece + text[at + cut :]
    return text


LEAVES = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8) | HOSTILE
VALUES = st.recursive(
    LEAVES,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=6), inner, max_size=2),
    max_leaves=6,
)


def _paths(doc: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    children = doc.items() if isinstance(doc, dict) else enumerate(doc) if isinstance(doc, list) else ()
    return [at] + [p for key, child in children for p in _paths(child, (*at, key))]


@st.composite
def edited_json(draw: st.DrawFn, base: Any, *, max_edits: int = 3) -> Any:
    """``base`` (a JSON document) with a few values set to anything, deleted or added, as by hand."""
    doc = json.loads(json.dumps(base))
    paths = [p for p in _paths(base) if p]
    for _ in range(draw(st.integers(1, max_edits))):
        path = draw(st.sampled_from(paths))
        parent = doc
        try:
            for key in path[:-1]:
                parent = parent[key]
            action = draw(st.sampled_from(["set", "set", "delete", "add"]))
            if action == "delete":
                del parent[path[-1]]
            elif action == "add" and isinstance(parent, dict):
                parent[draw(st.text(max_size=6))] = draw(VALUES)
            else:
                parent[path[-1]] = draw(VALUES)
            note(f"{action} {'.'.join(map(str, path))}")
        except (KeyError, IndexError, TypeError):  # an earlier edit removed or replaced the parent
            continue
    return doc


def replaced(base: Any, path: tuple[Any, ...], value: Any) -> Any:
    """A copy of the JSON document ``base`` with the value at ``path`` replaced (for ``@example``)."""
    doc = json.loads(json.dumps(base))
    parent = doc
    for key in path[:-1]:
        parent = parent[key]
    parent[path[-1]] = value
    return doc


def scratch(prefix: str) -> Path:
    """A directory for one test module's files, removed when the run ends."""
    path = Path(tempfile.mkdtemp(prefix=f"tmnb-fuzz-{prefix}-"))
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
