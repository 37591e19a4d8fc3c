"""Kubernetes resource quantities: compared by value, printed the way the kubelet prints them.

The kubelet's reservedMemory check compares ``resource.Quantity`` values ("1Gi" == "1024Mi") and
prints the sums in Go's canonical form ("2148Mi"), so a finding can quote it verbatim.
Parsing uses the official client's ``parse_quantity``; the canonical printing is Go's
``Quantity.String()`` (BinarySI keeps Ki/Mi/... when exact and >= 1024, otherwise DecimalSI).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_UP, Decimal, localcontext

from tmnb.errors import InputError

#: The grammar of quantity.go (ASCII digits; e/E takes an integer exponent).
_GRAMMAR = re.compile(
    r"^[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE](?P<exp>[+-]?[0-9]+))?$"
)
INT32_MAX = 2**31 - 1
_MAX = Decimal(2**63 - 1)
_NANO = Decimal("1e-9")
_BINARY_SUFFIXES = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIXES = ((18, "E"), (15, "P"), (12, "T"), (9, "G"), (6, "M"), (3, "k"), (0, ""), (-3, "m"), (-6, "u"))


@dataclass(frozen=True)
class Quantity:
    """A quantity's exact value and whether Go keeps it in binary (Ki/Mi/...) format."""

    value: Decimal
    binary: bool = False

    @classmethod
    def parse(cls, text: str | int, *, source: str | None = None, where: str | None = None) -> Quantity:
        if isinstance(text, bool) or not isinstance(text, (str, int)):
            raise InputError(f"expected a quantity such as 1Gi or 500m, got {text!r}", source=source, where=where)
        # Imported here: the kubernetes package takes over a second to import, and most parsers never
        # need it.
        from kubernetes.utils import parse_quantity

        raw = str(text)
        grammar = _GRAMMAR.fullmatch(raw)
        if not grammar:  # Decimal alone would take "1_000", "Infinity" and non-ASCII digits
            raise InputError(f"invalid quantity {text!r}: expected e.g. 1Gi, 500Mi, 2", source=source, where=where)
        if grammar.group("exp") and abs(int(grammar.group("exp"))) > INT32_MAX:
            raise InputError(f"invalid quantity {text!r}: exponent beyond an int32", source=source, where=where)
        with localcontext() as ctx:
            ctx.prec = 60
            value = parse_quantity(raw)
            # resource.ParseQuantity caps amounts at 2^63-1 ("The max is just a simple cap") and rounds
            # non-zero ones up to the next nano (inf.RoundUp); the exponent form is capped here too.
            value = max(min(value, _MAX), -_MAX)
            nano = value.quantize(_NANO, rounding=ROUND_UP)
            value = nano if nano != value else value  # keep "1Gi" an integer, not 1073741824.000000000
        return cls(value, binary=raw.endswith("i"))

    def add(self, other: Quantity) -> Quantity:
        """Go's ``Quantity.Add``: the sum keeps this format unless this value is zero."""
        return Quantity(self.value + other.value, other.binary if self.value == 0 else self.binary)

    def __str__(self) -> str:
        return format_go(self.value, binary=self.binary)


ZERO = Quantity(Decimal(0))


def format_go(value: Decimal, *, binary: bool) -> str:
    """Go ``resource.Quantity.String()`` for a value in BinarySI or DecimalSI format."""
    if value == 0:
        return "0"
    if binary and abs(value) >= 1024 and value == value.to_integral_value():
        number, exponent = int(value), 0
        while exponent < len(_BINARY_SUFFIXES) - 1 and number % 1024 == 0:
            number //= 1024
            exponent += 1
        return f"{number}{_BINARY_SUFFIXES[exponent]}"
    for exponent, suffix in _DECIMAL_SUFFIXES:
        mantissa = value.scaleb(-exponent)
        if mantissa == mantissa.to_integral_value():
            return f"{int(mantissa)}{suffix}"
    return f"{int(value.scaleb(9).to_integral_value(rounding=ROUND_CEILING))}n"
