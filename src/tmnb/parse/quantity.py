"""Kubernetes resource quantities ("500m", "2Gi"): the one place tmnb parses them.

Three readings, each matching the reader it stands in for:

- :func:`parse_quantity` is the official client's parser (exact ``Decimal``, ``ValueError`` when
  malformed), loaded without the API client, which takes about a second to import;
  :func:`quantity` is the same with a cache and an ``InputError`` naming the field.
- :class:`Quantity` follows ``resource.ParseQuantity`` (its grammar, the 2^63-1 cap, rounding up to
  the nano) and prints Go's canonical form: the kubelet's reservedMemory check compares values
  ("1Gi" == "1024Mi") and prints the sums as ``Quantity.String()`` does ("2148Mi"), so a finding can
  quote it verbatim (BinarySI keeps Ki/Mi/... when exact and >= 1024, otherwise DecimalSI).
- :func:`quantity_value` is the snapshot loader's bounded reading: a hand-edited file cannot make
  it build a number with a thousand digits.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from decimal import ROUND_CEILING, ROUND_UP, Decimal, localcontext
from functools import cache, lru_cache
from typing import cast

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


@cache
def _client_parser() -> Callable[[str | int | float | Decimal], Decimal]:
    """``kubernetes.utils.parse_quantity`` from the installed client. Importing ``kubernetes.utils``
    pulls in the whole API client, so unless it is already loaded the quantity module, which only
    needs ``decimal``, is loaded on its own from the same file."""
    loaded = sys.modules.get("kubernetes.utils")
    if loaded is not None:
        return cast(Callable[[str | int | float | Decimal], Decimal], loaded.parse_quantity)
    package = importlib.util.find_spec("kubernetes")
    if package is None or not package.submodule_search_locations:
        raise InputError("the kubernetes Python client is not installed (needed to parse quantities)")
    path = f"{next(iter(package.submodule_search_locations))}/utils/quantity.py"
    spec = importlib.util.spec_from_file_location("_tmnb_kubernetes_quantity", path)
    if spec is None or spec.loader is None:
        raise InputError(f"cannot load the kubernetes client's quantity parser from {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return cast(Callable[[str | int | float | Decimal], Decimal], module.parse_quantity)


def parse_quantity(value: str | int | float | Decimal) -> Decimal:
    """The official client's ``parse_quantity``: the exact value; ``ValueError`` when malformed."""
    return _client_parser()(value)


@lru_cache(maxsize=4096)
def _cached(value: str | int | float) -> Decimal | None:
    try:
        return parse_quantity(value)
    except ValueError:
        return None


#: What a quantity may be given as; a tuple, since ``str | int | float`` is built again at each use.
_QUANTITY_TYPES = (str, int, float)


def quantity(value: object, where: str) -> Decimal:
    """Parse a Kubernetes quantity ("500m", "2Gi", 2); errors name the field. Parsed values are
    cached: a fleet repeats the same few quantity strings hundreds of thousands of times."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, bool) or not isinstance(value, _QUANTITY_TYPES):
        raise InputError(f"expected a Kubernetes quantity such as '2', '500m' or '1Gi', got {value!r}", where=where)
    parsed = _cached(value)
    if parsed is None:
        raise InputError(f"invalid Kubernetes quantity {value!r}: expected e.g. '2', '500m' or '1Gi'", where=where)
    return parsed


@dataclass(frozen=True)
class Quantity:
    """A quantity's exact value and whether Go keeps it in binary (Ki/Mi/...) format."""

    value: Decimal
    binary: bool = False

    @classmethod
    def parse(cls, text: str | int, *, source: str | None = None, where: str | None = None) -> Quantity:
        if isinstance(text, bool) or not isinstance(text, (str, int)):
            raise InputError(f"expected a quantity such as 1Gi or 500m, got {text!r}", source=source, where=where)
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


# apimachinery's quantity syntax: <signedNumber><suffix>, suffix binary (Ki..Ei), decimal (n u m k M G T P E)
# or a decimal exponent (e3, E-2) of at most three digits.
_BOUNDED = re.compile(r"^([+-]?(?:\d+(?:\.\d*)?|\.\d+))(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?\d{1,3})?$")
_BINARY_POWER = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL_POWER = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


def quantity_value(text: str) -> Decimal:
    """The value of a quantity of at most 64 characters; ``ValueError`` if it is not one."""
    m = _BOUNDED.match(text)
    if not m or len(text) > 64:
        raise ValueError(f"{text[:40]!r} is not a Kubernetes quantity such as 4, 500m or 16Gi")
    number, suffix = Decimal(m.group(1)), m.group(2) or ""
    if suffix in _BINARY_POWER:
        return number * (1 << 10 * _BINARY_POWER[suffix])
    if suffix in _DECIMAL_POWER:
        return number.scaleb(_DECIMAL_POWER[suffix])
    return number.scaleb(int(suffix[1:]))
