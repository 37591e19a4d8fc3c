"""Go's ``encoding/json`` ``Unmarshal`` into the kubelet's checkpoint structs, and the checksum over them.

The kubelet restores ``cpu_manager_state`` and ``memory_manager_state`` by unmarshalling the file
into one Go struct after another (``checkpointmanager.GetCheckpoint``) and verifying a checksum
that covers a *dump of the decoded Go value* (``checksum.New``: FNV-32a of ``dump.ForHash(obj)``,
spew's ``%#v`` with sorted keys). Whether a file restores, and the error when it does not, depend
on details plain JSON parsing loses, so this module follows Go step by step:

* ``checkValid`` first: the scanner's ``SyntaxError`` texts (``unexpected end of JSON input``,
  ``invalid character 'x' looking for beginning of value``, ...), byte by byte;
* then the decode into the struct: keys matched to fields case-insensitively (the last duplicate
  wins, maps merge), unknown keys ignored, ``null`` empties maps, slices and pointers and leaves
  strings and numbers alone, strings decoded as Go decodes them (invalid UTF-8 and lone surrogates
  become U+FFFD), and the first ``UnmarshalTypeError`` kept while decoding goes on:
  ``json: cannot unmarshal object into Go struct field CPUManagerCheckpointV1.entries of type string``;
* ``dump`` writes the decoded value as spew's ``%#v`` does, so ``checksum`` is the kubelet's.

Only the types the two checkpoints use are modelled (strings, unsigned and signed integers, slices,
maps keyed by string or int, pointers, structs, and the CPU manager's ``PodEntry`` with its own
``UnmarshalJSON``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from tmnb.parse.gojson import fnv32a, fold

# ---------------------------------------------------------------------------------------------
# the scanner: JSON text -> a tree, with Go's syntax errors

_SPACE = b" \t\r\n"
_HEX = "0123456789abcdefABCDEF"


class GoJSONError(Exception):
    """An error ``json.Unmarshal`` returns; ``str()`` is Go's text."""


@dataclass(frozen=True)
class JNumber:
    literal: str


@dataclass(frozen=True)
class JObject:
    pairs: tuple[tuple[str, Any], ...]


#: A decoded JSON value: JObject, list, str, JNumber, bool or None.
JValue = Any


def _quote_char(byte: int) -> str:
    """``quoteChar``: the offending byte as Go's scanner names it."""
    if byte == 0x27:
        return "'\\''"
    if byte == 0x22:
        return "'\"'"
    ch = chr(byte)  # string(c) of a byte: the rune U+00XX
    escapes = {"\a": r"\a", "\b": r"\b", "\f": r"\f", "\n": r"\n", "\r": r"\r", "\t": r"\t", "\v": r"\v", "\\": "\\\\"}
    if ch in escapes:
        return f"'{escapes[ch]}'"
    if byte < 0x20 or byte == 0x7F:
        return f"'\\x{byte:02x}'"
    if 0x80 <= byte <= 0xA0 or byte == 0xAD:  # not strconv.IsPrint
        return f"'\\u{byte:04x}'"
    return f"'{ch}'"


class _Scanner:
    """A recursive-descent reading of the bytes that fails exactly where Go's state machine fails."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def fail(self, context: str) -> GoJSONError:
        if self.pos >= len(self.data):
            return GoJSONError("unexpected end of JSON input")
        return GoJSONError(f"invalid character {_quote_char(self.data[self.pos])} {context}")

    def peek(self) -> int | None:
        return self.data[self.pos] if self.pos < len(self.data) else None

    def skip_space(self) -> None:
        while self.pos < len(self.data) and self.data[self.pos] in _SPACE:
            self.pos += 1

    def document(self) -> JValue:
        self.skip_space()
        value = self.value()
        self.skip_space()
        if self.pos < len(self.data):
            raise self.fail("after top-level value")
        return value

    def value(self) -> JValue:
        c = self.peek()
        if c == 0x7B:
            return self.obj()
        if c == 0x5B:
            return self.array()
        if c == 0x22:
            return self.string()
        if c is not None and (c == 0x2D or 0x30 <= c <= 0x39):
            return self.number()
        for word, result in ((b"true", True), (b"false", False), (b"null", None)):
            if c == word[0]:
                self.pos += 1
                for expected in word[1:]:
                    if self.peek() != expected:
                        raise self.fail(f"in literal {word.decode()} (expecting {_quote_char(expected)})")
                    self.pos += 1
                return result
        raise self.fail("looking for beginning of value")

    def obj(self) -> JObject:
        self.pos += 1
        pairs: list[tuple[str, Any]] = []
        self.skip_space()
        if self.peek() == 0x7D:
            self.pos += 1
            return JObject(())
        while True:
            if self.peek() != 0x22:
                raise self.fail("looking for beginning of object key string")
            key = self.string()
            self.skip_space()
            if self.peek() != 0x3A:
                raise self.fail("after object key")
            self.pos += 1
            self.skip_space()
            pairs.append((key, self.value()))
            self.skip_space()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                self.skip_space()
                continue
            if c == 0x7D:
                self.pos += 1
                return JObject(tuple(pairs))
            raise self.fail("after object key:value pair")

    def array(self) -> list[JValue]:
        self.pos += 1
        items: list[JValue] = []
        self.skip_space()
        if self.peek() == 0x5D:
            self.pos += 1
            return items
        while True:
            self.skip_space()
            items.append(self.value())
            self.skip_space()
            c = self.peek()
            if c == 0x2C:
                self.pos += 1
                continue
            if c == 0x5D:
                self.pos += 1
                return items
            raise self.fail("after array element")

    def number(self) -> JNumber:
        start = self.pos
        if self.peek() == 0x2D:
            self.pos += 1
            c = self.peek()
            if c is None or not 0x30 <= c <= 0x39:
                raise self.fail("in numeric literal")
        if self.peek() == 0x30:
            self.pos += 1
        else:
            self._digits()
        if self.peek() == 0x2E:
            self.pos += 1
            c = self.peek()
            if c is None or not 0x30 <= c <= 0x39:
                raise self.fail("after decimal point in numeric literal")
            self._digits()
        if self.peek() in (0x65, 0x45):
            self.pos += 1
            if self.peek() in (0x2B, 0x2D):
                self.pos += 1
            c = self.peek()
            if c is None or not 0x30 <= c <= 0x39:
                raise self.fail("in exponent of numeric literal")
            self._digits()
        return JNumber(self.data[start : self.pos].decode("ascii"))

    def _digits(self) -> None:
        while (c := self.peek()) is not None and 0x30 <= c <= 0x39:
            self.pos += 1

    def string(self) -> str:
        """A string literal, unquoted as ``unquoteBytes`` does."""
        self.pos += 1
        out: list[str] = []
        data = self.data
        while True:
            c = self.peek()
            if c is None:
                raise self.fail("in string literal")
            if c == 0x22:
                self.pos += 1
                return "".join(out)
            if c < 0x20:
                raise self.fail("in string literal")
            if c == 0x5C:
                self.pos += 1
                e = self.peek()
                simple = {0x62: "\b", 0x66: "\f", 0x6E: "\n", 0x72: "\r", 0x74: "\t", 0x5C: "\\", 0x2F: "/", 0x22: '"'}
                if e in simple:
                    out.append(simple[e])
                    self.pos += 1
                    continue
                if e != 0x75:
                    raise self.fail("in string escape code")
                self.pos += 1
                out.append(self._escaped_rune())
                continue
            rune, size = _decode_rune(data, self.pos)
            out.append(rune)
            self.pos += size

    def _hex4(self) -> int:
        value = 0
        for _ in range(4):
            c = self.peek()
            if c is None or chr(c) not in _HEX:
                raise self.fail("in \\u hexadecimal character escape")
            value = value * 16 + int(chr(c), 16)
            self.pos += 1
        return value

    def _escaped_rune(self) -> str:
        rune = self._hex4()
        if 0xD800 <= rune < 0xE000:
            # a surrogate: a valid pair is consumed whole, else U+FFFD (the next escape stays)
            data, at = self.data, self.pos
            digits = data[at + 2 : at + 6]
            if data[at : at + 2] == b"\\u" and len(digits) == 4 and all(chr(b) in _HEX for b in digits):
                low = int(digits, 16)
                if rune < 0xDC00 and 0xDC00 <= low < 0xE000:
                    self.pos += 6
                    return chr(0x10000 + ((rune - 0xD800) << 10) + (low - 0xDC00))
            return "\ufffd"
        return chr(rune)


def _decode_rune(data: bytes, at: int) -> tuple[str, int]:
    """``utf8.DecodeRune``: one rune, or U+FFFD for one invalid byte."""
    b0 = data[at]
    if b0 < 0x80:
        return chr(b0), 1
    for size, lo in ((2, 0xC2), (3, 0xE0), (4, 0xF0)):
        if lo <= b0 < (0xE0, 0xF0, 0xF5)[size - 2]:
            try:
                return data[at : at + size].decode("utf-8"), size
            except UnicodeDecodeError:
                return "\ufffd", 1
    return "\ufffd", 1


def scan(data: str | bytes) -> JValue:
    """``checkValid`` then the parse: the JSON tree, or Go's ``SyntaxError`` text."""
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    try:
        return _Scanner(raw).document()
    except RecursionError:
        raise GoJSONError("exceeded max depth") from None


# ---------------------------------------------------------------------------------------------
# Go types and the decode into them

Kind = Literal["string", "uint", "int", "slice", "map", "ptr", "struct", "pod-entry"]


@dataclass(frozen=True)
class GoType:
    """A Go type as far as decoding and spew care: ``name`` is ``reflect.Type.String()``."""

    name: str
    kind: Kind
    elem: GoType | None = None
    key: GoType | None = None
    #: struct fields: (Go name, JSON name)
    fields: tuple[tuple[str, str, GoType], ...] = ()
    #: struct fields a constructor (``newXCheckpoint``) makes non-nil before decoding
    made: tuple[str, ...] = ()
    #: for errors: the struct's name without its package (``UnmarshalTypeError.Struct``)
    bits: int = 64

    @property
    def short(self) -> str:
        return self.name.rsplit(".", 1)[-1]


STRING = GoType("string", "string")
UINT64 = GoType("uint64", "uint")
INT = GoType("int", "int")
CHECKSUM = GoType("checksum.Checksum", "uint")
RESOURCE_NAME = GoType("v1.ResourceName", "string")
INTS = GoType("[]int", "slice", elem=INT)


def slice_of(elem: GoType, name: str | None = None) -> GoType:
    return GoType(name or f"[]{elem.name}", "slice", elem=elem)


def map_of(key: GoType, elem: GoType, name: str | None = None) -> GoType:
    return GoType(name or f"map[{key.name}]{elem.name}", "map", elem=elem, key=key)


def ptr_to(elem: GoType) -> GoType:
    return GoType(f"*{elem.name}", "ptr", elem=elem)


def struct(name: str, *fields: tuple[str, str, GoType], made: tuple[str, ...] = ()) -> GoType:
    return GoType(name, "struct", fields=fields, made=made)


#: The CPU manager's ``state.PodEntry``: ``UnmarshalJSON`` reads ``{"cpuSet": "0-3"}`` and parses it.
POD_ENTRY_JSON = struct("state.podEntryJSON", ("CPUSet", "cpuSet", STRING))
CPU_POD_ENTRY = GoType("state.PodEntry", "pod-entry")


@dataclass
class Struct:
    """A decoded struct: field values by Go name (absent = the zero value)."""

    type: GoType
    values: dict[str, Any] = field(default_factory=dict)

    def get(self, name: str) -> Any:
        if name in self.values:
            return self.values[name]
        return _zero(next(t for n, _, t in self.type.fields if n == name))


@dataclass(frozen=True)
class CPUSetValue:
    """A ``cpuset.CPUSet`` (its ``elems`` map; None = nil, the zero ``PodEntry``'s)."""

    elems: tuple[int, ...] | None


def _zero(t: GoType) -> Any:
    if t.kind == "string":
        return ""
    if t.kind in ("uint", "int"):
        return 0
    if t.kind == "struct":
        return Struct(t)
    if t.kind == "pod-entry":
        return CPUSetValue(None)
    return None  # slices, maps, pointers: nil


def new_struct(t: GoType) -> Struct:
    """``newXCheckpoint()``: the struct with its maps made."""
    out = Struct(t)
    for name in t.made:
        out.values[name] = {}
    return out


_KINDS = {JObject: "object", list: "array", str: "string", bool: "bool"}


def _kind_of(value: JValue) -> str:
    if isinstance(value, JNumber):
        return "number"
    return _KINDS[type(value)]


@dataclass
class _Context:
    struct: GoType | None = None
    stack: list[str] = field(default_factory=list)


class _Abort(Exception):
    """An error that stops the decode at once (an ``UnmarshalJSON`` failure)."""

    def __init__(self, error: GoJSONError) -> None:
        self.error = error


class _Decoder:
    def __init__(self, parse_cpuset: Callable[[str], tuple[int, ...]]) -> None:
        self.saved: GoJSONError | None = None
        self.ctx = _Context()
        self.parse_cpuset = parse_cpuset

    def type_error(self, value: str, t: GoType) -> None:
        if self.saved is not None:
            return
        if self.ctx.struct is not None or self.ctx.stack:
            where = f"{self.ctx.struct.short if self.ctx.struct else ''}.{'.'.join(self.ctx.stack)}"
            self.saved = GoJSONError(f"json: cannot unmarshal {value} into Go struct field {where} of type {t.name}")
        else:
            self.saved = GoJSONError(f"json: cannot unmarshal {value} into Go value of type {t.name}")

    def decode(self, node: JValue, t: GoType, current: Any) -> Any:
        """The value ``d.value`` leaves in a variable of type ``t`` that held ``current``."""
        if t.kind == "pod-entry":
            return self.pod_entry(node)
        if node is None:
            return None if t.kind in ("slice", "map", "ptr") else current
        if t.kind == "ptr":
            assert t.elem is not None
            target = current if current is not None else _zero(t.elem)
            return self.decode(node, t.elem, target)
        if isinstance(node, JObject):
            if t.kind == "struct":
                return self.struct(node, t, current if isinstance(current, Struct) else Struct(t))
            if t.kind == "map":
                return self.map(node, t, current)
            self.type_error("object", t)
            return current
        if isinstance(node, list):
            if t.kind != "slice":
                self.type_error("array", t)
                return current
            assert t.elem is not None
            old = list(current) if current is not None else []
            out = [self.decode(item, t.elem, old[i] if i < len(old) else _zero(t.elem)) for i, item in enumerate(node)]
            return out
        if isinstance(node, bool):
            self.type_error("bool", t)
            return current
        if isinstance(node, str):
            if t.kind == "string":
                return node
            self.type_error("string", t)
            return current
        assert isinstance(node, JNumber)
        if t.kind not in ("uint", "int"):
            self.type_error("number", t)
            return current
        number = _parse_int(node.literal, unsigned=t.kind == "uint")
        if number is None:
            self.type_error(f"number {node.literal}", t)
            return current
        return number

    def struct(self, node: JObject, t: GoType, target: Struct) -> Struct:
        saved = _Context(self.ctx.struct, list(self.ctx.stack))
        by_name = {json_name: (go_name, ft) for go_name, json_name, ft in t.fields}
        for key, value in node.pairs:
            hit = by_name.get(key) or next(
                ((g, ft) for j, (g, ft) in by_name.items() if fold(j) == fold(key)),
                None,
            )
            if hit is None:
                continue
            go_name, ft = hit
            json_name = next(j for g, j, _ in t.fields if g == go_name)
            self.ctx.stack.append(json_name)
            self.ctx.struct = t
            target.values[go_name] = self.decode(value, ft, target.get(go_name))
            self.ctx = _Context(saved.struct, list(saved.stack))
        return target

    def map(self, node: JObject, t: GoType, current: dict[Any, Any] | None) -> dict[Any, Any]:
        assert t.elem is not None and t.key is not None
        out = current if current is not None else {}
        for key, value in node.pairs:
            element = self.decode(value, t.elem, _zero(t.elem))
            if t.key.kind == "int":
                number = _parse_int(key, unsigned=False)
                if number is None:
                    self.type_error(f"number {key}", t.key)
                    continue
                out[number] = element
            else:
                out[key] = element
        return out

    def pod_entry(self, node: JValue) -> CPUSetValue:
        """``PodEntry.UnmarshalJSON``: a fresh ``json.Unmarshal`` into ``podEntryJSON``, then
        ``cpuset.Parse``; any failure ends the whole decode."""
        inner = _Decoder(self.parse_cpuset)
        entry = inner.decode(node, POD_ENTRY_JSON, Struct(POD_ENTRY_JSON)) if node is not None else None
        if inner.saved is not None:
            raise _Abort(inner.saved)
        text = entry.get("CPUSet") if isinstance(entry, Struct) else ""
        try:
            return CPUSetValue(self.parse_cpuset(text))
        except GoJSONError as err:
            raise _Abort(GoJSONError(f"failed to parse cpuset: {err}")) from None


def _parse_int(text: str, *, unsigned: bool) -> int | None:
    """``strconv.ParseUint`` / ``ParseInt`` (base 10, 64 bits) of a JSON number literal."""
    signed = text[:1] in ("-", "+")
    body = text[1:] if signed else text
    if not body.isdigit() or not body.isascii() or (unsigned and signed):
        return None
    value = int(text)
    if unsigned:
        return value if value < 1 << 64 else None
    return value if -(1 << 63) <= value < 1 << 63 else None


def unmarshal(data: str | bytes, target: Struct, parse_cpuset: Callable[[str], tuple[int, ...]]) -> Struct:
    """``json.Unmarshal(data, target)``: the struct as Go leaves it, or the error Go returns."""
    tree = scan(data)
    decoder = _Decoder(parse_cpuset)
    try:
        result = decoder.decode(tree, target.type, target)
    except _Abort as abort:
        raise abort.error from None
    if decoder.saved is not None:
        raise decoder.saved
    if not isinstance(result, Struct):  # a top-level null leaves the struct as it was
        return target
    return result


# ---------------------------------------------------------------------------------------------
# spew's %#v and the checksum


def _go_less_key(key: Any) -> Any:
    return key.encode("utf-8", "surrogatepass") if isinstance(key, str) else key


def _format(value: Any, t: GoType, show_type: bool) -> str:
    if t.kind == "ptr":
        assert t.elem is not None
        if value is None:
            return f"({t.name})<nil>" if show_type else "<nil>"
        prefix = f"(*{t.elem.name})" if show_type else "<*>"
        return prefix + _format(value, t.elem, False)
    head = f"({t.name})" if show_type else ""
    if t.kind in ("uint", "int"):
        return head + str(value)
    if t.kind == "string":
        return head + str(value)
    if t.kind == "slice":
        assert t.elem is not None
        if value is None:
            return head + "<nil>"
        elem = t.elem
        return head + "[" + " ".join(_format(v, elem, False) for v in value) + "]"
    if t.kind == "map":
        assert t.elem is not None and t.key is not None
        if value is None:
            return head + "<nil>"
        elem, key_type = t.elem, t.key
        keys = sorted(value, key=_go_less_key)
        return (
            head
            + "map["
            + " ".join(f"{_format(k, key_type, False)}:{_format(value[k], elem, False)}" for k in keys)
            + "]"
        )
    if t.kind == "pod-entry":
        elems = value.elems
        inner = "<nil>" if elems is None else "map[" + " ".join(f"{c}:{{}}" for c in sorted(elems)) + "]"
        return head + "{CPUSet:(cpuset.CPUSet){elems:(map[int]struct {})" + inner + "}}"
    assert isinstance(value, Struct)
    parts = [f"{name}:{_format(value.get(name), ft, True)}" for name, _, ft in t.fields]
    return head + "{" + " ".join(parts) + "}"


def dump(value: Struct, *, type_name: str | None = None) -> str:
    """``dump.ForHash(&value)``: spew's ``%#v`` of a pointer to the struct; ``type_name`` stands in
    for the struct's own (the kubelet's ``strings.Replace`` of a versioned type name)."""
    name = type_name or value.type.name
    return f"(*{name})" + _format(value, value.type, False)


def checksum(value: Struct, *, type_name: str | None = None) -> int:
    """``checksum.New(&value)`` with its ``Checksum`` field zeroed, as ``VerifyChecksum`` computes it."""
    zeroed = Struct(value.type, {**value.values, "Checksum": 0})
    return fnv32a(dump(zeroed, type_name=type_name).encode("utf-8", "surrogatepass"))
