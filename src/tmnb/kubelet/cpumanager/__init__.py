"""The CPU manager: mirrors the kubelet's pkg/kubelet/cm/cpumanager (1.33–1.37).

``topology`` (the machine's CPUs by core, socket, NUMA node and uncore cache: cpumanager/topology),
``cpu_assignment`` (which CPUs the static policy takes), ``policy_static`` (the static policy: hints,
allocation, its state and ``validateState``) and ``cpu_manager`` (``NewManager``'s checks). Above the
Topology Manager, whose hints and masks it uses; its state file is read in ``kubelet.checkpoints``.
"""
