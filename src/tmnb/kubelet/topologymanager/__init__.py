"""The Topology Manager: mirrors the kubelet's pkg/kubelet/cm/topologymanager (1.33–1.37).

The bottom of the model: NUMA masks (``bitmask``), hints and their JSON form (``hints``), the
providers' merge (``merge``), one type per policy (``policy``, registry ``POLICIES``), one class
per scope (``scope``, registry ``SCOPES``) and ``NewManager``'s checks and choices
(``topology_manager``). It imports nothing from the resource managers above it.
"""
