"""Quantities (Go canonical printing), Go durations and the JSON conversion used by snapshots."""

from __future__ import annotations

import pytest

from tmnb.errors import InputError
from tmnb.parse.duration import format_go_duration, parse_go_duration
from tmnb.parse.quantity import ZERO, Quantity


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("1Gi", "1Gi"),
        ("1024Mi", "1Gi"),
        ("1124Mi", "1124Mi"),
        ("1.5Gi", "1536Mi"),
        ("100Mi", "100Mi"),
        ("512", "512"),
        ("1000", "1k"),
        ("1500", "1500"),
        ("500m", "500m"),
        ("0", "0"),
        ("1e3", "1k"),
        (1073741824, "1073741824"),
    ],
)
def test_quantity_prints_like_go(text: str | int, canonical: str) -> None:
    assert str(Quantity.parse(text)) == canonical


def test_quantity_sum_keeps_go_format_rules() -> None:
    total = ZERO.add(Quantity.parse("1Gi")).add(Quantity.parse("1Gi")).add(Quantity.parse("100Mi"))
    assert str(total) == "2148Mi" and total.value == 2148 * 1024 * 1024
    assert str(Quantity.parse("1G").add(Quantity.parse("1Gi"))) == "2073741824"  # DecimalSI receiver wins
    assert Quantity.parse("1Gi").value == Quantity.parse("1024Mi").value


@pytest.mark.parametrize("bad", ["", "1GB", "abc", "NaN", "Infinity", " 1Gi", "1 Gi", True, None, 1.5])
def test_invalid_quantities(bad: object) -> None:
    with pytest.raises(InputError):
        Quantity.parse(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("10s", "10s"),
        ("1m", "1m0s"),
        ("90s", "1m30s"),
        ("4h", "4h0m0s"),
        ("300ms", "300ms"),
        ("0", "0s"),
        ("1.5s", "1.5s"),
        ("100us", "100µs"),
        ("-2m", "-2m0s"),
    ],
)
def test_go_durations(text: str, canonical: str) -> None:
    assert format_go_duration(parse_go_duration(text)) == canonical


@pytest.mark.parametrize("bad", ["", "10", "s", "1x", "1m 2s", "--1s", 10])
def test_invalid_durations(bad: object) -> None:
    with pytest.raises(InputError):
        parse_go_duration(bad)  # type: ignore[arg-type]
