"""Linux CPU sets: cpu-list syntax ("0-3,8-11"), hex masks ("ff,00000001") and set algebra.

The same syntax appears in sysfs cpulist files, lscpu, kubelet ``reservedSystemCPUs``,
``cpu_manager_state`` and cgroup ``cpuset.cpus``, so one strict parser serves all of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from tmnb.errors import InputError

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
_HEXWORD = re.compile(r"^[0-9a-fA-F]{1,8}$")


class CPUSet(frozenset[int]):
    """An immutable set of CPU ids whose ``str()`` is the canonical cpu-list."""

    def __new__(cls, cpus: Iterable[int] = ()) -> CPUSet:
        items = frozenset(cpus)
        for cpu in items:
            if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
                raise InputError(f"CPU ids must be non-negative integers, got {cpu!r}")
        return super().__new__(cls, items)

    @classmethod
    def parse(cls, text: str, *, source: str | None = None) -> CPUSet:
        """Parse cpu-list syntax; surrounding whitespace and a trailing newline are ignored."""
        return cls(parse_cpulist(text, source=source))

    @classmethod
    def from_mask(cls, text: str, *, source: str | None = None) -> CPUSet:
        return cls(parse_hexmask(text, source=source))

    def __str__(self) -> str:
        return format_cpulist(self)

    def __repr__(self) -> str:
        return f"CPUSet({format_cpulist(self)!r})"

    def sorted(self) -> list[int]:
        return sorted(self)

    def to_mask(self, nbits: int | None = None) -> str:
        return format_hexmask(self, nbits)

    def __or__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__or__(self, frozenset(other)))

    def __and__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__and__(self, frozenset(other)))

    def __sub__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__sub__(self, frozenset(other)))

    def __xor__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__xor__(self, frozenset(other)))

    union = __or__
    intersection = __and__
    difference = __sub__
    symmetric_difference = __xor__


def parse_cpulist(text: str, *, source: str | None = None) -> frozenset[int]:
    """Parse "0-3,8-11" (kernel/kubelet cpu-list syntax). Empty text is the empty set."""
    if not isinstance(text, str):
        raise InputError(f"expected a CPU list string, got {type(text).__name__}", source=source)
    body = text.strip()
    if not body:
        return frozenset()
    cpus: set[int] = set()
    for part in body.split(","):
        m = _RANGE.match(part.strip())
        if not m:
            raise InputError(f"invalid CPU list {text.strip()!r}: {part!r} is not N or N-M", source=source)
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        if hi < lo:
            raise InputError(f"invalid CPU list {text.strip()!r}: range {part!r} runs backwards", source=source)
        cpus.update(range(lo, hi + 1))
    return frozenset(cpus)


def _runs(cpus: Iterable[int]) -> Iterator[tuple[int, int]]:
    ordered = sorted(cpus)
    if not ordered:
        return
    start = prev = ordered[0]
    for cpu in ordered[1:]:
        if cpu != prev + 1:
            yield start, prev
            start = cpu
        prev = cpu
    yield start, prev


def format_cpulist(cpus: Iterable[int]) -> str:
    """Canonical cpu-list: ascending, ranges of two or more CPUs collapsed ("0-3,8")."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in _runs(cpus))


def parse_hexmask(text: str, *, source: str | None = None) -> frozenset[int]:
    """Parse a sysfs cpumap: comma-separated 32-bit hex words, most significant first."""
    body = text.strip()
    if not body:
        raise InputError("empty CPU mask", source=source)
    words = body.split(",")
    value = 0
    for word in words:
        if not _HEXWORD.match(word):
            raise InputError(f"invalid CPU mask {body!r}: {word!r} is not a 1-8 digit hex word", source=source)
        value = (value << 32) | int(word, 16)
    return frozenset(i for i in range(value.bit_length()) if value >> i & 1)


def format_hexmask(cpus: Iterable[int], nbits: int | None = None) -> str:
    """Format as sysfs cpumap words; ``nbits`` pads to the machine's possible CPU count."""
    value = 0
    for cpu in cpus:
        value |= 1 << cpu
    width = max(value.bit_length(), nbits or 0, 1)
    nwords = (width + 31) // 32
    return ",".join(f"{(value >> (32 * i)) & 0xFFFFFFFF:08x}" for i in reversed(range(nwords)))
