"""Throughput of tmnb.kubelet: merges per second and node replays (prints figures, asserts nothing).

    .venv/bin/python bench/kubelet_bench.py [--fleet-nodes 5000] [--pods-per-node 30] [--workers 2]

The fleet figure replays every node of a synthetic fleet (distinct pod mixes per node) under a new
Topology Manager policy; with --full it really replays all of them, otherwise it times a sample
and projects. It prints the wall time, the workers' user CPU time and the load average.

Measured with --full on the shared 2-core machine: before the cuts of issue 27, wall 4.6 s and
workers' user CPU 5.9 s (load 2.7); after, wall 3.5 s and 5.3 s (load 2.5); with the venv's bytecode
and the pool's gc.freeze, wall 2.2 s and 4.3 s (load 3). See docs/performance.md.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import time
from concurrent.futures import ProcessPoolExecutor

from tmnb.kubelet.cpumanager.policy_static import generate_cpu_hints
from tmnb.kubelet.cpumanager.topology import CPUInfo, CPUTopology
from tmnb.kubelet.devicemanager.topology_hints import Device
from tmnb.kubelet.names import BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE
from tmnb.kubelet.node import Machine, ModelSettings, NodeModel, NodeSimulator, NUMANode
from tmnb.kubelet.options import CPUManagerOptions, TopologyManagerOptions
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.topologymanager.merge import NUMAInfo
from tmnb.kubelet.topologymanager.policy import policy_for

GI = 1 << 30


def machine(sockets: int, numa_per_socket: int, cores_per_numa: int, gpus_per_numa: int = 0) -> Machine:
    numas = sockets * numa_per_socket
    cores = numas * cores_per_numa
    cpus = []
    for core in range(cores):
        numa = core // cores_per_numa
        for thread in range(2):
            cpus.append(CPUInfo(core + thread * cores, core, numa // numa_per_socket, numa))
    nodes = tuple(
        NUMANode(n, memory=64 * GI, distances=tuple(10 if n == m else 21 for m in range(numas))) for n in range(numas)
    )
    gpus = tuple(Device(f"gpu{n}-{i}", (n,)) for n in range(numas) for i in range(gpus_per_numa))
    return Machine(tuple(cpus), nodes, {"nvidia.com/gpu": gpus} if gpus else {})


def guaranteed_pod(uid: str, cpu: int, mem_gi: int, gpus: int = 0, init_cpu: int = 0) -> Pod:
    res = {"cpu": str(cpu), "memory": f"{mem_gi}Gi"}
    if gpus:
        res["nvidia.com/gpu"] = str(gpus)
    inits = ()
    if init_cpu:
        r = {"cpu": str(init_cpu), "memory": "1Gi"}
        inits = (Container("init", r, r),)
    return Pod(uid=uid, name=uid, containers=(Container("app", res, res),), init_containers=inits)


def bench_merge(numa_count: int, seconds: float = 1.5) -> float:
    """Merges/s with a CPU provider, a GPU provider and a memory-like provider, as the kubelet sees them."""
    rnd = random.Random(numa_count)
    topo = machine(1 if numa_count < 2 else 2, max(1, numa_count // 2), 8).cpus
    topo = CPUTopology(topo)
    numa = NUMAInfo(tuple(range(numa_count)))
    policies = [policy_for(p, numa, TopologyManagerOptions()) for p in (BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)]
    cases = []
    for _ in range(200):
        avail = rnd.getrandbits(topo.num_cpus) & topo.all_mask
        cpu = generate_cpu_hints(topo, CPUManagerOptions(), avail, 0, rnd.randint(1, 12))
        gpu = [h for h in generate_cpu_hints(topo, CPUManagerOptions(), avail, 0, rnd.randint(1, 24))]
        mem = generate_cpu_hints(topo, CPUManagerOptions(), avail, 0, rnd.randint(1, 8))
        cases.append([{"cpu": cpu}, {"nvidia.com/gpu": gpu}, {"memory": mem, "hugepages-1Gi": mem}])
    done = 0
    start = time.perf_counter()
    while time.perf_counter() - start < seconds:
        for providers in cases:
            for pol in policies:
                pol.merge(providers)
        done += len(cases) * len(policies)
    return done / (time.perf_counter() - start)


_MACHINE = machine(2, 1, 32, gpus_per_numa=2)  # one machine type for the whole synthetic fleet


def node_model(name: str, policy: str) -> NodeModel:
    settings = ModelSettings(
        topology_manager_policy=policy,
        cpu_manager_policy="static",
        reserved_cpu_count=2,
        memory_manager_policy="Static",
        reserved_memory={0: {"memory": "1Gi"}, 1: {"memory": "1Gi"}},
    )
    return NodeModel(name, _MACHINE, settings)


def workload(seed: int, count: int) -> list[Pod]:
    rnd = random.Random(seed)
    pods = []
    for i in range(count):
        gpus = 1 if rnd.random() < 0.1 else 0
        pods.append(guaranteed_pod(f"p{seed}-{i}", rnd.choice((1, 2, 2, 4, 4, 8)), rnd.choice((1, 2, 4)), gpus))
    return pods


def replay(args: tuple[int, int, str]) -> tuple[int, int]:
    seed, count, policy = args
    sim = NodeSimulator(node_model(f"n{seed}", policy))
    admitted = sum(sim.admit(p).admitted for p in workload(seed, count))
    return admitted, count


def replay_range(args: tuple[int, int, int, str]) -> tuple[int, int]:
    """Nodes ``start``..``stop`` - 1, one task: the pool's messages are a few ints per chunk of nodes."""
    start, stop, count, policy = args
    admitted = total = 0
    for seed in range(start, stop):
        a, n = replay((seed, count, policy))
        admitted += a
        total += n
    return admitted, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fleet-nodes", type=int, default=5000)
    ap.add_argument("--pods-per-node", type=int, default=30)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--sample", type=int, default=200, help="nodes actually replayed for the projection")
    ap.add_argument("--full", action="store_true", help="replay the whole fleet instead of projecting")
    args = ap.parse_args()

    for n in (2, 4, 8):
        print(f"merge, {n} NUMA nodes, 4 hint lists: {bench_merge(n):,.0f} merges/s")

    sim = NodeSimulator(node_model("replay", "single-numa-node"))
    pods = workload(7, 60)
    start = time.perf_counter()
    admitted = sum(sim.admit(p).admitted for p in pods)
    elapsed = time.perf_counter() - start
    print(f"replay 2-socket node (128 CPUs, 4 GPUs), 60 pods: {elapsed * 1000:.1f} ms ({admitted} admitted)")

    nodes = args.fleet_nodes if args.full else min(args.sample, args.fleet_nodes)
    # Node ranges as tasks, 16 per worker: each task is four ints out and two back, so neither the
    # pipe nor pickling costs anything, and no worker is left alone with a long last chunk.
    step = max(1, -(-nodes // (args.workers * 16)))
    jobs = [(lo, min(lo + step, nodes), args.pods_per_node, "single-numa-node") for lo in range(0, nodes, step)]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
    start = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        results = list(pool.map(replay_range, jobs))
    elapsed = time.perf_counter() - start
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
    admitted = sum(a for a, _ in results)
    total = sum(c for _, c in results)
    label = "actual" if args.full else f"projected from {nodes} nodes"
    scale = args.fleet_nodes / nodes
    print(
        f"fleet {args.fleet_nodes} nodes x {args.pods_per_node} Guaranteed pods on {args.workers} workers: "
        f"wall {elapsed * scale:.1f} s, workers' user CPU {cpu * scale:.1f} s ({label}; {admitted}/{total} pods "
        f"admitted; load average {os.getloadavg()[0]:.1f}; goal < 3 s wall on 2 cores)"
    )


if __name__ == "__main__":
    main()
