"""Step 1, node specs: the curated 14-node table, or the pools apportioned by weight for a scaled fleet."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from tmnb.errors import InputError
from tmnb.twin.sample.catalogue import POOLS, Pool
from tmnb.twin.sample.common import CAPTURED_AT, SERVER_VERSION

#: When someone cordoned gen-icx-02 (a hardware ticket): what ran there stays, nothing new lands.
CORDONED_AT = CAPTURED_AT - timedelta(hours=5)


@dataclass(frozen=True)
class NodeSpec:
    name: str
    pool: str
    profile: str
    index: int  # position in its pool (IP address, rack)
    kubelet: str = SERVER_VERSION
    runtime: str = "containerd://2.1.4"
    kernel: str | None = None  # None: the shape's
    os_image: str | None = None
    cordoned: datetime | None = None  # when ``kubectl cordon`` ran; None: schedulable


def curated_specs() -> list[NodeSpec]:
    """14 nodes: every pool, every profile once; one old kubelet, one patch behind, one cordoned."""
    specs: list[NodeSpec] = []
    for pool in POOLS.values():
        for i in range(len(pool.profiles)):
            specs.append(NodeSpec(f"{pool.prefix}-{i + 1:02d}", pool.name, pool.profiles[i], i + 1))
    overrides: dict[str, Callable[[NodeSpec], NodeSpec]] = {
        "gen-icx-02": lambda s: replace(s, kubelet="v1.36.1", cordoned=CORDONED_AT),
        "gen-icx-03": lambda s: replace(
            s,
            kubelet="v1.34.5",
            runtime="containerd://1.7.27",
            kernel="5.15.0-144-generic",
            os_image="Ubuntu 22.04.5 LTS",
        ),
    }
    return [overrides[s.name](s) if s.name in overrides else s for s in specs]


def apportion(total: int) -> dict[str, int]:
    """One node per pool, then the rest split by weight (largest remainder); rare pools keep their one.

    The 16-NUMA box is rare on purpose: besides being rare in real fleets, every Guaranteed pod on
    it makes the kubelet (and its model) walk all 2^16 - 1 NUMA masks."""
    weights = {p.name: p.weight for p in POOLS.values() if p.weight}
    spare = total - len(POOLS)
    scale = sum(weights.values())
    counts = {p.name: 1 + spare * p.weight // scale for p in POOLS.values()}
    by_remainder = sorted(weights, key=lambda n: (-(spare * weights[n] % scale), n))
    for name in by_remainder[: total - sum(counts.values())]:
        counts[name] += 1
    return counts


def scaled_specs(total: int) -> list[NodeSpec]:
    """The same pools at scale; every 50th node runs the old kubelet, every 37th is a patch behind."""
    if total < len(POOLS):
        raise InputError(f"a scaled fleet needs at least {len(POOLS)} nodes (one per pool), got {total}", where="nodes")
    specs: list[NodeSpec] = []
    for name, count in apportion(total).items():
        pool = POOLS[name]
        for i in range(count):
            n = len(specs)
            old = n % 50 == 7
            specs.append(
                NodeSpec(
                    f"{pool.prefix}-{i + 1:04d}",
                    name,
                    pool.profiles[i % len(pool.profiles)],
                    i + 1,
                    kubelet="v1.34.5" if old else "v1.36.1" if n % 37 == 5 else SERVER_VERSION,
                    runtime="containerd://1.7.27" if old else "containerd://2.1.4",
                )
            )
    return specs


def node_ip(spec: NodeSpec, pool: Pool) -> str:
    return f"10.{pool.subnet}.{spec.index // 200}.{10 + spec.index % 200}"
