"""The memory manager: mirrors the kubelet's pkg/kubelet/cm/memorymanager (1.33–1.37).

``state`` (the per-NUMA tables and blocks: memorymanager/state), ``hints`` (which NUMA masks can hold
a request), ``policy_static`` (the Static policy: hints, allocation, release), ``validate`` (its
``validateState`` of a restored state at start) and ``memory_manager`` (``NewManager``'s checks).
Above the Topology Manager; its state file is read in ``kubelet.checkpoints``.
"""
