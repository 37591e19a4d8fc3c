"""A faithful model of kubelet 1.36 Topology Manager admission (see facts/kubelet-admission.md)."""
