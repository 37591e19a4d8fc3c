"""Node pools: which shape, which kubelet profiles (cycled over the pool's nodes), where, and the taints
that keep other teams' pods off them (their workloads tolerate them: ``catalogue.workloads``)."""

from __future__ import annotations

from dataclasses import dataclass

from tmnb.snapshot import Taint
from tmnb.snapshot.model import TaintEffect


@dataclass(frozen=True)
class Pool:
    name: str
    shape: str
    prefix: str
    weight: int  # share of a scaled fleet's nodes; 0 = a rare box, exactly one per scaled fleet
    profiles: tuple[str, ...]  # cycled over the pool's nodes
    kubeadm: bool
    subnet: int  # second octet of the node IPs
    zone: str
    taints: tuple[Taint, ...] = ()


def _dedicated(team: str, effect: TaintEffect = "NoSchedule") -> tuple[Taint, ...]:
    return (Taint(key="dedicated", value=team, effect=effect),)


#: GPU nodes tainted as GKE taints its GPU node pools: only pods that tolerate it land there.
_GPU = (Taint(key="nvidia.com/gpu", value="present", effect="NoSchedule"),)

POOLS: dict[str, Pool] = {
    p.name: p
    for p in (
        Pool("general", "icx-2s", "gen-icx", 34, ("defaults", "defaults", "best-effort-static"), True, 20, "dc1-a"),
        Pool("latency", "icx-2s", "lat-icx", 18,
             ("restricted-full-pcpus", "single-numa-flag-override", "single-numa-pod-dropin"), True, 21, "dc1-a",
             _dedicated("latency")),
        Pool("telco", "epyc-nps4", "tel-epyc", 15,
             ("telco-single-numa-pod", "telco-restricted-closest", "telco-best-effort-configz"), True, 22, "dc1-b",
             _dedicated("telco")),
        Pool("gpu", "h100-8x", "gpu-h100", 15, ("gpu-single-numa", "gpu-best-effort-pod"), False, 23, "dc1-c", _GPU),
        Pool("bigmem", "epyc-2s-nps4", "big-epyc", 6, ("bigmem-restricted",), True, 24, "dc1-b",
             _dedicated("bigmem", "PreferNoSchedule")),
        Pool("numa16", "spr-4s-snc4", "spr-snc4", 0, ("numa16-restricted",), True, 25, "dc1-b", _dedicated("hpc")),
        Pool("gb200", "gb200", "gb200", 8, ("gb200-none",), False, 26, "dc1-c", _GPU),
    )
}  # fmt: skip
