"""The embedded sample fleet: a deterministic generator of a realistic, internally consistent cluster.

``generate_fleet()`` builds the curated 14-node sample that ships as package data and is the default
source of every notebook (read by ``tmnb.sources.embedded``); ``generate_fleet(n)`` scales the same hardware shapes,
pools, kubelet profiles and workloads to ``n`` nodes for benchmarks. Nothing is hand-typed output:
the tables of ``catalogue`` describe hardware, kubelet configuration layers and workloads, and every
CPU row, setting, pod, allocation and event is derived from them, one module per step:

1. ``specs``: the curated node table, or the pools apportioned by weight;
2. ``hardware``: CPUs (real SMT numbering), NUMA zones with sysfs-style distances, devices;
3. ``layers``: the profile's kubelet configuration written as the texts a node holds and read back
   by ``tmnb.parse`` and ``tmnb.settings.effective_settings``, which gives every setting its
   provenance; ``nodes`` builds the snapshot node (without allocations) from steps 2 and 3;
4. ``pods``: workloads expanded into pods, each with a creation time;
5. ``scheduling``: fit by requests, least-allocated score, topology-unaware like the real
   scheduler, and admission by the node's resource managers, in creation order;
6. ``fleet``: the allocations, shared pool and free memory attached to each node (``nodes``), the
   events and PDBs, the snapshot. See docs/sample-fleet.md;
7. ``rollout``: the same loop continued through a rollout of ``single-numa-node``, which gives
   ``generate_after()`` (committed as the ``sample-after`` source), and ``metrics``: the pair's
   application metrics and rollout journal, written on demand.

Admission and allocation (step 5) are ``tmnb.kubelet``'s node simulation, started from the snapshot
node by ``tmnb.replay.node_model`` exactly as the what-if replay starts it, so every
exclusive cpuset, memory block and rejection is the kubelet's answer.
"""

from tmnb.twin.sample.catalogue import POOLS, PROFILES, SHAPES, WORKLOADS, guaranteed
from tmnb.twin.sample.common import POOL_LABEL
from tmnb.twin.sample.fleet import (
    generate_after,
    generate_fleet,
    main,
)
from tmnb.twin.sample.layers import REPORTED_FIELDS

__all__ = [
    "POOLS",
    "POOL_LABEL",
    "PROFILES",
    "REPORTED_FIELDS",
    "SHAPES",
    "WORKLOADS",
    "generate_after",
    "generate_fleet",
    "guaranteed",
    "main",
]
