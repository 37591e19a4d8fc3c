"""A fleet what-if at scale: 50,000 nodes x 30 pods through ``whatif_rows`` in a process pool (prints figures).

    .venv/bin/python bench/fleet_whatif_bench.py [--nodes 50000] [--pods-per-node 30] [--workers N]

The fleet is the curated sample's node shapes whose kubelet starts under the target, cloned node by
node: node i is template i mod k under its own name, with 30 pods cycled from that template's pods
(own names and uids). Nodes and pods are built on demand inside the workers, so no process ever
holds the fleet, and the rows are counted as they stream back, as ``tmnb whatif --format json``
prints them. Printed: wall time, the user CPU of the parent and of the workers, the load average,
and the peak RSS of the parent and of the largest worker (``resource.getrusage``).

Measured on the shared 2-core machine, 2 workers, 50,000 nodes: wall 196 s at load 5, user CPU
7.6 s parent + 123 s workers (about 65 s wall on a quiet machine), peak RSS 154 MiB parent,
106 MiB largest worker, 1,453,848 of 1,500,000 pods admitted. With the venv's bytecode and the pool's
gc.freeze: wall 43.4 s at load 2.5, user CPU 3.4 s parent + 82.8 s workers, peak RSS 147 / 101 MiB.
"""

from __future__ import annotations

import argparse
import copy
import os
import resource
import time
from collections.abc import Sequence
from typing import overload

from tmnb.analysis.whatif import replay_node, replay_order, whatif_rows
from tmnb.snapshot import Node, Pod
from tmnb.twin.sample import generate_fleet

TARGET = {"topologyManagerPolicy": "single-numa-node"}


def _renamed(obj: object, **fields: str) -> object:
    """A shallow copy with new identity fields, without re-validating the model (a bench's shortcut)."""
    twin = copy.copy(obj)
    for name, value in fields.items():
        object.__setattr__(twin, name, value)
    return twin


class ClonedNodes(Sequence[Node]):
    def __init__(self, templates: list[Node], count: int) -> None:
        self.templates, self.count = templates, count

    def __len__(self) -> int:
        return self.count

    @overload
    def __getitem__(self, index: int) -> Node: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Node]: ...
    def __getitem__(self, index: int | slice) -> Node | Sequence[Node]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self.count))]
        template = self.templates[index % len(self.templates)]
        node = _renamed(template, name=f"{template.name}-{index:05d}")
        assert isinstance(node, Node)
        return node


class ClonedFleet:
    """``nodes`` and ``pods_on`` of a fleet of ``count`` clones of ``templates``, built on demand."""

    def __init__(self, templates: list[Node], pods: dict[str, list[Pod]], count: int, per_node: int) -> None:
        self.nodes = ClonedNodes(templates, count)
        self.pods, self.per_node = pods, per_node

    def pods_on(self, node: str) -> list[Pod]:
        template, _, index = node.rpartition("-")
        base = self.pods[template]
        out = []
        for j in range(self.per_node):
            p = base[j % len(base)]
            clone = _renamed(p, name=f"{p.name}-{j}", uid=f"{p.uid}-{index}-{j}", node=node)
            assert isinstance(clone, Pod)
            out.append(clone)
        return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50_000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()

    sample = generate_fleet(None)
    templates, pods = [], {}
    for node in sample.nodes:
        active = replay_order(sample.pods_on(node.name))
        if active and replay_node(node, active, TARGET).results:  # modelled, and its kubelet starts
            templates.append(node)
            pods[node.name] = active
    fleet = ClonedFleet(templates, pods, args.nodes, args.pods_per_node)
    print(f"{len(templates)} node shapes of the curated sample, cloned to {args.nodes} nodes")

    start = time.perf_counter()
    nodes = replayed = admitted = 0
    for rows, _ in whatif_rows(fleet, TARGET, workers=args.workers):
        nodes += 1
        replayed += len(rows)
        admitted += sum(r["admitted"] for r in rows)
    wall = time.perf_counter() - start
    me = resource.getrusage(resource.RUSAGE_SELF)
    workers = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(
        f"what-if {nodes} nodes, {replayed} pods ({admitted} admitted) on {args.workers} workers: wall {wall:.1f} s, "
        f"user CPU parent {me.ru_utime:.1f} s + workers {workers.ru_utime:.1f} s, load average "
        f"{os.getloadavg()[0]:.1f}; peak RSS parent {me.ru_maxrss / 1024:.0f} MiB, largest worker "
        f"{workers.ru_maxrss / 1024:.0f} MiB (goal < 60 s wall, < 2 GiB)"
    )


if __name__ == "__main__":
    main()
