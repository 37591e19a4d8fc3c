"""Topology, CPU and memory manager rules: what a kubelet of a given version does with the settings.

One module a manager (``topology``, ``cpu``, ``memory``): each lists the kubelet's refusals of its
area by running the start-up steps of ``tmnb.kubelet.startup.checks`` (``shared.kubelet_refusals``), then
adds what is tmnb's own and no kubelet check: options the kubelet ignores, settings without effect,
policy names that differ only in case, a sum it cannot check without the node's memory.
"""
