"""Small values with an exact answer: Go durations, quantities, cpu lists and masks. Besides never
crashing, an accepted value must mean what Go (or the kernel) means by it."""

from __future__ import annotations

import pytest
from fuzzing import fuzz, refused_naming, survive
from hypothesis import example, given
from hypothesis import strategies as st

from tmnb.cpuset import CPUSet
from tmnb.parse.duration import format_go_duration, parse_go_duration
from tmnb.parse.quantity import Quantity

pytestmark = pytest.mark.fuzz

SRC = "/fuzz/value"
INT64 = st.integers(-(2**63), 2**63 - 1)
DIGITS = st.text("0123456789", min_size=1, max_size=25)
UNITS = st.sampled_from(["ns", "us", "µs", "μs", "ms", "s", "m", "h", "", "d", "S"])
NUMBER = st.builds(
    lambda a, dot, b: a + dot + b, DIGITS | st.just(""), st.sampled_from(["", "."]), DIGITS | st.just("")
)


@fuzz
@given(INT64)
def test_duration_round_trip(ns: int) -> None:
    assert parse_go_duration(format_go_duration(ns)) == ns


@fuzz
@given(st.sampled_from(["", "-", "+"]), st.lists(st.tuples(NUMBER, UNITS), min_size=1, max_size=4))
@example("", [("0", "ns"), ("10000000000000000000", "ns")])  # was accepted as 10^19 ns, beyond an int64
def test_duration_is_an_int64_or_refused(sign: str, parts: list[tuple[str, str]]) -> None:
    text = sign + "".join(n + u for n, u in parts)
    ns = survive(parse_go_duration, text, source=SRC)
    if not refused_naming(ns, SRC):
        assert isinstance(ns, int) and -(2**63) <= ns <= 2**63 - 1, (text, ns)  # time.Duration is an int64


SUFFIXES = st.sampled_from(["", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "n", "u"])
EXPONENTS = st.builds(lambda e, n: f"{e}{n}", st.sampled_from(["e", "E", "e-", "e+"]), st.integers(0, 10**9))


@fuzz
@given(st.sampled_from(["", "-", "+"]), NUMBER, SUFFIXES | EXPONENTS)
@example("+", "179208868059.", "E22296")  # printing built an int of 22,000 digits: ValueError
@example("", ".223250898013", "e1000000000")  # printing hung scaling a Decimal by 10^-1e9
@example("", "1_000", "")  # Decimal took it as 1000; Go refuses the underscore
@example("", "0", "M\n")  # the grammar's "$" matched before the newline; parse_quantity then raised ValueError
def test_quantity_prints_what_it_parsed(sign: str, number: str, suffix: str) -> None:
    q = survive(Quantity.parse, sign + number + suffix, source=SRC)
    if not refused_naming(q, SRC):
        assert isinstance(q, Quantity)
        printed = survive(str, q)
        assert isinstance(printed, str)
        assert Quantity.parse(printed).value == q.value, (sign + number + suffix, printed)


@fuzz
@given(st.lists(st.tuples(st.integers(0, 5000), st.integers(0, 64)), max_size=6))
def test_cpu_list_means_the_ranges_written(ranges: list[tuple[int, int]]) -> None:
    text = ",".join(f"{lo}-{lo + n}" if n else str(lo) for lo, n in ranges)
    cpus = survive(CPUSet.parse, text, source=SRC)
    if not refused_naming(cpus, SRC):
        assert cpus == {c for lo, n in ranges for c in range(lo, lo + n + 1)}
        assert CPUSet.from_mask(cpus.to_mask()) == cpus
