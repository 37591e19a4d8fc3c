"""Kubernetes version strings ("v1.36.2", "v1.32.4-eks-1a2b3c", "1.30") as comparable values."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tmnb.errors import InputError

_VERSION = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+].*)?$")


@dataclass(frozen=True, order=True)
class KubeVersion:
    major: int
    minor: int
    patch: int = 0

    @classmethod
    def parse(cls, text: str, *, source: str | None = None) -> KubeVersion:
        m = _VERSION.match(text.strip()) if isinstance(text, str) else None
        if not m:
            raise InputError(f"invalid Kubernetes version {text!r}: expected vMAJOR.MINOR[.PATCH]", source=source)
        return cls(int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))

    def __str__(self) -> str:
        return f"v{self.major}.{self.minor}.{self.patch}"
