"""The device manager: mirrors the kubelet's pkg/kubelet/cm/devicemanager (1.33–1.37).

``topology_hints`` (which NUMA masks hold enough of a resource's devices) and ``manager`` (the hint
provider and allocator over the devices the plugins list, and what it knows after a restart). Above
the Topology Manager; the device checkpoint itself is read by the callers, not modelled as a file.
"""
