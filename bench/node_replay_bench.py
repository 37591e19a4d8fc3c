"""Whole-node replay speed: the conformance runner on generated ``node_replay`` cases (prints figures).

    .venv/bin/python bench/node_replay_bench.py [--cases 800] [--seed 7] [--write cases.jsonl]

The set has the shape of the kind's real use: 1-16 NUMA nodes, 4-192 CPUs, up to 14 pods per node,
every Topology Manager policy and scope, the static CPU policy with and without options, the Static
memory manager with a matching reservedMemory. It prints the per-case time in process and the
whole-process time of ``python -m tmnb.kubelet.conformance`` over all cases (interpreter start and
imports included), the figure to hold against the Go kubelet's own code on the same cases.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import subprocess
import sys
import time
from typing import Any

from tmnb.conformance.runner import answer

GI = 1 << 30
POLICIES = ("none", "best-effort", "restricted", "single-numa-node")
CPU_OPTIONS = (
    {},
    {"full-pcpus-only": "true"},
    {"distribute-cpus-across-numa": "true"},
    {"strict-cpu-reservation": "true"},
)


def machine(rng: random.Random) -> tuple[list[dict[str, int]], list[dict[str, Any]]]:
    numa = rng.choice((1, 1, 2, 2, 2, 4, 4, 8, 16))
    threads = rng.choice((1, 2))
    cores_per_numa = max(1, rng.choice((2, 4, 6, 8, 12)) if numa < 16 else rng.choice((2, 4, 6)))
    while numa * cores_per_numa * threads > 192:
        cores_per_numa -= 1
    while numa * cores_per_numa * threads < 4:
        cores_per_numa += 1
    sockets = 1 if numa == 1 else rng.choice([s for s in (1, 2, 4) if numa % s == 0])
    cores = numa * cores_per_numa
    cpus = []
    for t in range(threads):
        for core in range(cores):
            node = core // cores_per_numa
            cpus.append({"cpu": t * cores + core, "core": core, "socket": node * sockets // numa, "numa": node})
    mem = rng.choice((16, 32, 64, 128)) * GI
    nodes = [
        {
            "id": i,
            "memory": mem,
            "hugepages": {"hugepages-1Gi": 0},
            "distances": [10 if i == j else (11 if i // 2 == j // 2 else 21) for j in range(numa)],
        }
        for i in range(numa)
    ]
    return sorted(cpus, key=lambda c: c["cpu"]), nodes


def pod(rng: random.Random, i: int, max_cpu: int) -> dict[str, Any]:
    def container(name: str) -> dict[str, Any]:
        if rng.random() < 0.2:
            return {"name": name, "resources": {"requests": {"cpu": "500m"}}}
        cpu = str(rng.randint(1, max(1, max_cpu)))
        mem = f"{rng.choice((1, 2, 4, 8))}Gi"
        r = {"cpu": cpu, "memory": mem}
        return {"name": name, "resources": {"requests": dict(r), "limits": dict(r)}}

    spec: dict[str, Any] = {"containers": [container(f"c{j}") for j in range(rng.choice((1, 1, 2, 3)))]}
    if rng.random() < 0.15:
        spec["initContainers"] = [container("init")]
    return {"metadata": {"name": f"p{i}", "namespace": "bench", "uid": f"uid-{i}"}, "spec": spec}


def case(rng: random.Random, n: int) -> dict[str, Any]:
    cpus, nodes = machine(rng)
    policy = rng.choice(POLICIES)
    kubelet: dict[str, Any] = {
        "cpuManagerPolicy": "static",
        "topologyManagerPolicy": policy,
        "topologyManagerScope": rng.choice(("container", "pod")),
        "kubeReserved": {"cpu": str(rng.choice((1, 2))), "memory": "1Gi"},
        "cpuManagerPolicyOptions": rng.choice(CPU_OPTIONS),
    }
    if len(nodes) > 8 and policy != "none" and rng.random() < 0.1:
        # Without this option the kubelet refuses to start above 8 NUMA nodes (most of these cases);
        # with it every provider's hints cover 2^16 masks, which is slow in Go too.
        kubelet["topologyManagerPolicyOptions"] = {"max-allowable-numa-nodes": "16"}
    if rng.random() < 0.4:
        kubelet["memoryManagerPolicy"] = "Static"
        kubelet["reservedMemory"] = [{"numaNode": 0, "limits": {"memory": "1124Mi"}}]
    per_numa = len(cpus) // len(nodes)
    pods = [pod(rng, i, per_numa) for i in range(rng.randint(1, 14))]
    return {
        "id": f"bench/{n}",
        "kind": "node_replay",
        "input": {"cpus": cpus, "numa_nodes": nodes, "kubelet": kubelet, "pods": pods},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=800)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--write", help="also write the generated cases to this JSONL file")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    cases = [case(rng, n) for n in range(args.cases)]
    lines = "".join(json.dumps(c, separators=(",", ":")) + "\n" for c in cases)
    if args.write:
        with open(args.write, "w") as f:
            f.write(lines)
    times, outcomes = [], {"refused": 0, "runner_error": 0, "pods": 0, "admitted": 0}
    for c in cases:
        start = time.perf_counter()
        got = answer(c)["expected"]
        times.append(time.perf_counter() - start)
        if "error" in got:
            outcomes["refused"] += 1
        elif "runner_error" in got:
            outcomes["runner_error"] += 1
        else:
            outcomes["pods"] += len(got["pods"])
            outcomes["admitted"] += sum(p["admit"] for p in got["pods"])
    times.sort()
    print(f"cases: {len(cases)}  {outcomes}")
    print(
        f"in process: total {sum(times):.2f} s, per case median {statistics.median(times) * 1e3:.2f} ms, "
        f"p95 {times[int(len(times) * 0.95)] * 1e3:.2f} ms, max {times[-1] * 1e3:.1f} ms"
    )
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "tmnb.kubelet.conformance"], input=lines, capture_output=True, text=True, check=True
    )
    wall = time.perf_counter() - start
    print(f"whole process (python -m tmnb.kubelet.conformance, {len(done.stdout.splitlines())} answers): {wall:.2f} s")


if __name__ == "__main__":
    main()
