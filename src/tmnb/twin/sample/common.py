"""What every step of the sample shares: the cluster's fixed facts, reproducible random streams
(one per purpose, so adding a draw in one step never shifts another) and Kubernetes-style texts."""

from __future__ import annotations

import random
import uuid
from datetime import UTC, datetime

from tmnb.parse.quantity import quantity

POOL_LABEL = "tmnb.dev/pool"
SERVER_VERSION = "v1.36.2"
CAPTURED_AT = datetime(2026, 7, 21, 9, 30, tzinfo=UTC)
GIB = 1 << 30
MIB = 1 << 20
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's generateName alphabet


def random_stream(seed: int, *parts: object) -> random.Random:
    """An independent, reproducible stream per purpose (str seeds are hashed with SHA-512)."""
    return random.Random(":".join(map(str, (seed, *parts))))


def new_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def name_suffix(rng: random.Random, length: int) -> str:
    return "".join(rng.choice(NAME_ALPHABET) for _ in range(length))


def rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def cpu_text(millis: int) -> str:
    return str(millis // 1000) if millis % 1000 == 0 else f"{millis}m"


def bytes_text(value: int) -> str:
    """Node-status style: Ki when whole kibibytes, else plain bytes."""
    return f"{value // 1024}Ki" if value % 1024 == 0 else str(value)


def pages_text(count: int, size: str) -> str:
    if count == 0:
        return "0"
    value = count * int(quantity(size, "hugepage size"))
    return f"{value // GIB}Gi" if value % GIB == 0 else f"{value // MIB}Mi"
