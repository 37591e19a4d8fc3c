"""``resource.Quantity`` as the kubelet holds it in memory, for the start-up checks that print one.

``validateNodeAllocatable`` formats quantities with ``%v`` of the struct, not ``String()``
(``{{9400 -3} {<nil>}  DecimalSI}`` in a real kubelet log), so the integer mantissa and decimal
scale that Go keeps after ``Add``/``Sub`` matter, not only the value.

Ports the in-memory form of k8s.io/apimachinery/pkg/api/resource/quantity.go (1.33–1.37).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from tmnb.errors import InputError
from tmnb.parse.quantity import format_go

DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT = "DecimalSI", "BinarySI", "DecimalExponent"
#: ``resource.ErrFormatWrong``; the kubelet prints it when a reservation does not parse.
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
_SHAPE = re.compile(r"([+-]?)([0-9]*)(?:\.([0-9]*))?([eEinumkKMGTP]*[-+]?[0-9]*)")
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_INT64 = (-(1 << 63), (1 << 63) - 1)


@dataclass(frozen=True)
class GoQuantity:
    """Go's ``int64Amount`` fast path: ``value × 10**scale`` plus the format it prints in."""

    value: int
    scale: int
    format: str = DECIMAL_SI

    @classmethod
    def parse(cls, text: str) -> GoQuantity:
        """``resource.ParseQuantity``; a ``GoParseError``-style message in ``InputError`` on failure."""
        match = _SHAPE.fullmatch(text)
        if not text or match is None or not (match.group(2) or match.group(3)):
            raise InputError(FORMAT_WRONG)
        sign, num, denom, suffix = match.group(1), match.group(2), match.group(3) or "", match.group(4)
        digits = int((num or "0") + denom)
        if sign == "-":
            digits = -digits
        if suffix in _BINARY:
            if denom:  # Go leaves its int64 fast path for fractional binary amounts
                return cls._from_decimal(Decimal(f"{sign}{num or 0}.{denom}") * (1 << _BINARY[suffix]), BINARY_SI)
            value, scale, fmt = digits << _BINARY[suffix], 0, BINARY_SI
        elif suffix in _DECIMAL:
            value, scale, fmt = digits, _DECIMAL[suffix] - len(denom), DECIMAL_SI
        elif suffix[:1] in ("e", "E") and re.fullmatch(r"[eE][-+]?[0-9]+", suffix):
            value, scale, fmt = digits, int(suffix[1:]) - len(denom), DECIMAL_EXPONENT
        else:
            raise InputError(SUFFIX_WRONG)
        return cls._checked(value, scale, fmt)

    @classmethod
    def of(cls, value: int, format: str = DECIMAL_SI) -> GoQuantity:
        """``resource.NewQuantity``."""
        return cls._checked(value, 0, format)

    @classmethod
    def milli(cls, value: int, format: str = DECIMAL_SI) -> GoQuantity:
        """``resource.NewMilliQuantity``."""
        return cls._checked(value, -3, format)

    @classmethod
    def _from_decimal(cls, amount: Decimal, fmt: str) -> GoQuantity:
        exponent = amount.normalize().as_tuple().exponent
        scale = min(0, int(exponent)) if isinstance(exponent, int) else 0
        return cls._checked(int(amount.scaleb(-scale)), scale, fmt)

    @classmethod
    def _checked(cls, value: int, scale: int, fmt: str) -> GoQuantity:
        if not _INT64[0] <= value <= _INT64[1]:
            raise InputError(f"quantity {value}e{scale} is beyond what the kubelet holds as a 64-bit amount")
        return cls(value, scale, fmt)

    @property
    def amount(self) -> Decimal:
        return Decimal(self.value).scaleb(self.scale)

    def is_zero(self) -> bool:
        return self.value == 0

    def add(self, other: GoQuantity) -> GoQuantity:
        """``Quantity.Add``: a zero receiver takes the other's format; the smaller scale wins."""
        fmt = other.format if self.value == 0 else self.format
        if other.value == 0:
            return GoQuantity(self.value, self.scale, fmt)
        if self.value == 0:
            return GoQuantity(other.value, other.scale, fmt)
        scale = min(self.scale, other.scale)
        total = self.value * 10 ** (self.scale - scale) + other.value * 10 ** (other.scale - scale)
        return GoQuantity._checked(total, scale, fmt)

    def sub(self, other: GoQuantity) -> GoQuantity:
        """``Quantity.Sub``."""
        return self.add(GoQuantity(-other.value, other.scale, other.format))

    def milli_value(self) -> int:
        """``MilliValue()``: rounded up, away from zero, as Go's ``ScaledValue`` does."""
        scaled = self.amount * 1000
        whole = int(scaled)
        return whole + (1 if scaled > whole else -1 if scaled < whole else 0)

    def __str__(self) -> str:
        return format_go(self.amount, binary=self.format == BINARY_SI)

    def go_v(self) -> str:
        """``%v`` of the struct value: ``{{value scale} {<nil>} <cached string> Format}``; the cached
        string is empty after any arithmetic, which is when the kubelet prints one."""
        return f"{{{{{self.value} {self.scale}}} {{<nil>}}  {self.format}}}"
