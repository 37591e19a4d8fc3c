"""The harness itself can fail: a hang, a stray exception and a refusal that names nothing are caught."""

from __future__ import annotations

import time

import pytest
from fuzzing import Hang, bounded, refused_naming, survive

from tmnb.errors import InputError


def test_a_hang_is_stopped() -> None:
    started = time.monotonic()
    with pytest.raises(Hang), bounded(0.2):
        time.sleep(5)
    assert time.monotonic() - started < 2


def test_an_exception_outside_the_family_propagates() -> None:
    with pytest.raises(ZeroDivisionError):
        survive(lambda: 1 / 0)
    assert isinstance(survive(lambda: (_ for _ in ()).throw(InputError("bad", source="f"))), InputError)


def test_a_refusal_must_name_the_file() -> None:
    assert refused_naming(InputError("bad", source="/a"), "/a")
    assert not refused_naming(42, "/a")
    with pytest.raises(AssertionError, match="names none of"):
        refused_naming(InputError("bad"), "/a")
