"""Linux CPU sets: cpu-list syntax ("0-3,8-11"), hex masks ("ff,00000001") and set algebra.

The same syntax appears in sysfs cpulist files, lscpu, kubelet ``reservedSystemCPUs``,
``cpu_manager_state`` and cgroup ``cpuset.cpus``, so one strict parser serves all of them.

CPU ids are bounded by ``MAX_CPUS`` (Linux's largest ``NR_CPUS``, 8192 with x86 ``MAXSMP``), so a
typo such as ``0-99999999`` is refused at once instead of building a set of a hundred million ids.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from tmnb.errors import InputError

_RANGE = re.compile(r"^(\d+)(?:-(\d+))?$")
_STRIDED = re.compile(r"^(\d+)(?:-(\d+)(?::(\d+))?)?$")
_HEXWORD = re.compile(r"^[0-9a-fA-F]{1,8}$")

#: Linux's largest configurable NR_CPUS (x86 MAXSMP, powerpc); CPU ids are below it.
MAX_CPUS = 8192
_MAX_WORDS = MAX_CPUS // 32


class CPUSet(frozenset[int]):
    """An immutable set of CPU ids whose ``str()`` is the canonical cpu-list."""

    def __new__(cls, cpus: Iterable[int] = ()) -> CPUSet:
        items = frozenset(cpus)
        for cpu in items:
            if not isinstance(cpu, int) or isinstance(cpu, bool) or cpu < 0:
                raise InputError(f"CPU ids must be non-negative integers, got {cpu!r}")
            if cpu >= MAX_CPUS:
                raise InputError(f"CPU id {cpu} is beyond the largest Linux supports ({MAX_CPUS - 1})")
        return super().__new__(cls, items)

    @classmethod
    def parse(cls, text: str, *, source: str | None = None, strided: bool = False) -> CPUSet:
        """Parse cpu-list syntax; surrounding whitespace and a trailing newline are ignored."""
        return cls(parse_cpulist(text, source=source, strided=strided))

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

    # A CPUSet holds CPU ids only, so union and symmetric difference take ints where frozenset's
    # take any element type (and widen the result): a deliberate narrowing of frozenset's interface.
    def __or__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__or__(self, frozenset(other)))

    def __and__(self, other: Iterable[object]) -> CPUSet:
        return CPUSet(frozenset.intersection(self, other))

    def __sub__(self, other: Iterable[object]) -> CPUSet:
        return CPUSet(frozenset.difference(self, other))

    def __xor__(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.__xor__(self, frozenset(other)))

    def union(self, *others: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return CPUSet(frozenset.union(self, *others))

    def intersection(self, *others: Iterable[object]) -> CPUSet:
        return CPUSet(frozenset.intersection(self, *others))

    def difference(self, *others: Iterable[object]) -> CPUSet:
        return CPUSet(frozenset.difference(self, *others))

    def symmetric_difference(self, other: Iterable[int]) -> CPUSet:  # type: ignore[override]
        return self ^ other


def parse_cpulist(text: str, *, source: str | None = None, strided: bool = False) -> frozenset[int]:
    """Parse "0-3,8-11" (kernel/kubelet cpu-list syntax). Empty text is the empty set.

    ``strided`` also accepts util-linux's ``N-M:S`` (every S-th CPU from N to M, as lscpu and
    taskset read it); the kernel and the kubelet's ``cpuset.Parse`` do not, so it is off by default.
    """
    if not isinstance(text, str):
        raise InputError(f"expected a CPU list string, got {type(text).__name__}", source=source)
    body = text.strip()
    if not body:
        return frozenset()
    shown = body if len(body) <= 60 else body[:57] + "..."
    pattern = _STRIDED if strided else _RANGE
    syntax = "N, N-M or N-M:S" if strided else "N or N-M"
    cpus: set[int] = set()
    for part in body.split(","):
        m = pattern.match(part.strip())
        if not m:
            raise InputError(f"invalid CPU list {shown!r}: {part[:40]!r} is not {syntax}", source=source)
        for digits in m.groups():
            if digits is not None and (len(digits) > 5 or int(digits) >= MAX_CPUS):
                raise InputError(
                    f"invalid CPU list {shown!r}: {digits[:12]}{'...' if len(digits) > 12 else ''} is beyond "
                    f"the largest CPU id Linux supports ({MAX_CPUS - 1})",
                    source=source,
                )
        lo = int(m.group(1))
        hi = int(m.group(2)) if m.group(2) is not None else lo
        step = int(m.group(3)) if strided and m.group(3) is not None else 1
        if hi < lo:
            raise InputError(f"invalid CPU list {shown!r}: range {part!r} runs backwards", source=source)
        if step == 0:
            raise InputError(f"invalid CPU list {shown!r}: stride 0 in {part!r}", source=source)
        cpus.update(range(lo, hi + 1, step))
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
    if len(words) > _MAX_WORDS:
        raise InputError(
            f"invalid CPU mask: {len(words)} 32-bit words, more than the {_MAX_WORDS} that hold the "
            f"{MAX_CPUS} CPUs Linux supports",
            source=source,
        )
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
