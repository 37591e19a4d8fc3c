"""The NodeResourceTopology object a resource-topology exporter would publish for a sandbox node:
zones with their distances, CPUs, memory and devices, and the kubelet's policy and scope.

A pure function of the node as its kubelet last read it and the CPUs it has free, so the sandbox
serves what topology-aware schedulers read without an exporter running.
"""

from __future__ import annotations

import uuid
from collections import Counter

from tmnb.cpuset import CPUSet
from tmnb.kubelet.names import CPU_STATIC, SCOPE_CONTAINER, TOPOLOGY_NONE
from tmnb.snapshot import Node
from tmnb.twin.sandbox.objects import Obj


def nrt_object(node: Node, free_cpus: CPUSet | None, node_object: Obj, resource_version: int) -> Obj:
    """``free_cpus`` None: the kubelet is down, so every zone shows all its CPUs available. Only the
    static CPU manager takes CPUs out of the pool; under ``none`` every CPU stays available."""
    settings = {k: s.value for k, s in node.kubelet.settings.items()}
    zones = []
    for z in sorted(node.numa, key=lambda z: z.id):
        cpus = CPUSet.parse(z.cpus)
        available = (
            len(cpus & free_cpus)
            if free_cpus is not None and settings.get("cpuManagerPolicy") == CPU_STATIC
            else len(cpus)
        )
        devices = Counter(d.resource for d in node.devices if d.numa and z.id in d.numa)
        resources = [
            {"name": "cpu", "capacity": str(len(cpus)), "allocatable": str(len(cpus)), "available": str(available)}
        ]
        resources.append(
            {
                "name": "memory",
                "capacity": str(z.memory_total),
                "allocatable": str(z.memory_total),
                "available": str(z.memory_free or z.memory_total),
            }
        )
        resources += [
            {"name": r, "capacity": str(n), "allocatable": str(n), "available": str(n)}
            for r, n in sorted(devices.items())
        ]
        zones.append(
            {
                "name": f"node-{z.id}",
                "type": "Node",
                "costs": [{"name": f"node-{i}", "value": d} for i, d in sorted(z.distances.items())],
                "resources": resources,
            }
        )
    return {
        "apiVersion": "topology.node.k8s.io/v1alpha2",
        "kind": "NodeResourceTopology",
        "metadata": {
            "name": node.name,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"nrt/{node.name}")),
            "resourceVersion": str(resource_version),
            "creationTimestamp": node_object["metadata"]["creationTimestamp"],
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": node.name, "uid": node_object["metadata"]["uid"]}
            ],
        },
        "attributes": [
            {"name": "topologyManagerScope", "value": str(settings.get("topologyManagerScope", SCOPE_CONTAINER))},
            {"name": "topologyManagerPolicy", "value": str(settings.get("topologyManagerPolicy", TOPOLOGY_NONE))},
        ],
        "zones": zones,
    }
