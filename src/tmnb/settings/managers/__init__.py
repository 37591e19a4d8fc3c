"""Topology, CPU and memory manager rules: what a kubelet of a given version does with the settings.

Option parsing and maturity come from ``tmnb.kubelet.options``; here is when the kubelet parses them
(``none`` topology policy: never; the option-map gate: always) and the rules around them, one module
a manager: ``topology`` (policy, scope, options, NUMA limits), ``cpu`` (policy, options, the static
policy's reservation) and ``memory`` (policy, the reservedMemory entries and their sum); ``shared``
holds what two of them ask alike.
"""
