"""Decode JSON the way Go's ``encoding/json`` fills a struct, for the kubelet's checkpoint files.

What matters for reading a checkpoint as the kubelet reads it:

* struct fields match keys **case-insensitively** (``defaultCPUSet`` fills ``DefaultCPUSet`` tagged
  ``defaultCpuSet``): an exact match or one equal under Unicode simple folding, which for ASCII names
  also lets U+212A KELVIN SIGN stand for ``k`` and U+017F LONG S for ``s``;
* when several keys match one field, each assigns in turn, so the **last one in the file wins**;
* ``null`` leaves a string or number field as it was and empties a map or slice;
* numbers must be integers in the Go type's range (``uint64``, ``int``); floats are refused.

Every value handed back has been type-checked, and every error names its JSON path.
"""

from __future__ import annotations

from typing import Any

from tmnb.errors import InputError
from tmnb.parse.numbers import INT64_MAX, UINT64_MAX, check_int, describe

_FOLD_TO_ASCII = {"\u212a": "K", "\u017f": "S"}  # the non-ASCII runes whose fold orbit holds an ASCII letter


class JsonObject(dict[str, Any]):
    """A decoded JSON object that also keeps its members in file order, duplicated keys included."""

    pairs: list[tuple[str, Any]]


def object_pairs(pairs: list[tuple[str, Any]]) -> JsonObject:
    """``json.loads(object_pairs_hook=...)``: a dict (last duplicate wins) that remembers every pair."""
    obj = JsonObject(pairs)
    obj.pairs = pairs
    return obj


def fold(name: str) -> str:
    """A key folded so that ``fold(a) == fold(b)`` exactly when Go's ``bytes.EqualFold(a, b)`` holds
    for an ASCII struct field name (Go's ``foldName`` in encoding/json/fold.go)."""
    return "".join(_FOLD_TO_ASCII.get(ch, ch.upper() if ch.isascii() else ch) for ch in name)


def kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, str):
        return f"the string {describe(value)}"
    if isinstance(value, (int, float)):
        return f"the number {describe(value)}"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def _join(where: str, key: str) -> str:
    return key if where in ("", "$") else f"{where}.{key}"


class GoStruct:
    """One JSON object being decoded into a Go struct: ``get`` one field at a time."""

    def __init__(self, value: Any, *, source: str, where: str = "$") -> None:
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {kind(value)}", source=source, where=where)
        self.source = source
        self.where = where
        self._pairs: list[tuple[str, Any]] = getattr(value, "pairs", None) or list(value.items())

    def path(self, key: str) -> str:
        return _join(self.where, key)

    def lookup(self, name: str, *, nullable: bool) -> tuple[str, Any] | None:
        """(key as written, value) for the field tagged ``name``; ``nullable`` for maps and slices,
        where null counts (it empties them), else a null is skipped as Go skips it."""
        target = fold(name)
        found: tuple[str, Any] | None = None
        for key, value in self._pairs:
            if fold(key) == target and (value is not None or nullable):
                found = (key, value)
        return found

    def has(self, name: str) -> bool:
        return self.lookup(name, nullable=True) is not None

    def _missing(self, name: str) -> InputError:
        return InputError(
            f"missing key {name!r}; the file looks truncated or is not this checkpoint",
            source=self.source,
            where=None if self.where == "$" else self.where,
        )

    def string(self, name: str, *, required: bool = True, default: str = "") -> tuple[str, str]:
        """(value, JSON path) of a Go ``string`` field."""
        hit = self.lookup(name, nullable=False)
        if hit is None:
            if required:
                raise self._missing(name)
            return default, self.path(name)
        key, value = hit
        if not isinstance(value, str):
            raise InputError(f"expected a string, got {kind(value)}", source=self.source, where=self.path(key))
        return value, self.path(key)

    def uint64(self, name: str, *, required: bool = True) -> int:
        return self.integer(name, lo=0, hi=UINT64_MAX, go_type="uint64", required=required)

    def integer(self, name: str, *, lo: int, hi: int, go_type: str, required: bool = True) -> int:
        hit = self.lookup(name, nullable=False)
        if hit is None:
            if required:
                raise self._missing(name)
            return 0
        key, value = hit
        return check_int(value, lo=lo, hi=hi, what=f"an integer ({go_type})", source=self.source, where=self.path(key))

    def mapping(self, name: str, *, required: bool = False) -> tuple[dict[str, Any], str]:
        """(members, JSON path) of a Go map field; absent or null is empty (``omitempty`` maps)."""
        hit = self.lookup(name, nullable=True)
        if hit is None:
            if required:
                raise self._missing(name)
            return {}, self.path(name)
        key, value = hit
        if value is None:
            return {}, self.path(key)
        if not isinstance(value, dict):
            raise InputError(f"expected a JSON object, got {kind(value)}", source=self.source, where=self.path(key))
        return dict(value), self.path(key)

    def struct(self, name: str, *, required: bool = True) -> GoStruct:
        hit = self.lookup(name, nullable=False)
        if hit is None:
            if required:
                raise self._missing(name)
            return GoStruct({}, source=self.source, where=self.path(name))
        key, value = hit
        return GoStruct(value, source=self.source, where=self.path(key))

    def int_list(self, name: str, *, lo: int = -INT64_MAX - 1, hi: int = INT64_MAX, what: str) -> tuple[int, ...]:
        """A Go ``[]int`` field; absent or null is empty."""
        hit = self.lookup(name, nullable=True)
        if hit is None or hit[1] is None:
            return ()
        key, value = hit
        if not isinstance(value, list):
            raise InputError(f"expected a list of {what}s, got {kind(value)}", source=self.source, where=self.path(key))
        return tuple(
            check_int(item, lo=lo, hi=hi, what=what, source=self.source, where=f"{self.path(key)}[{i}]")
            for i, item in enumerate(value)
        )


def fnv32a(data: bytes) -> int:
    """FNV-1a, 32 bits (Go's ``hash/fnv.New32a``)."""
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return value


def string_checksum(data: str) -> int:
    """``checksum.New(s)`` for a Go string, as the v4 CPU and v3 memory checkpoints sign ``data``:
    FNV-32a over ``dump.ForHash(s)``, which renders a string as ``(string)`` followed by its text."""
    return fnv32a(("(string)" + data).encode("utf-8"))
