"""The resource managers' state files: mirrors the kubelet's pkg/kubelet/cm/cpumanager/state and
pkg/kubelet/cm/memorymanager/state checkpoints, with pkg/kubelet/checkpointmanager (1.33–1.37).

``restore`` (what both managers' ``restoreState`` share: the wrapper texts, the policy comparison,
the walk over a minor's formats), ``marshal`` (``json.Marshal`` of a checkpoint), one module per
manager's file (``cpu_state``, ``memory_state``) and ``files`` (both files of a root directory).
Above the managers whose state they hold; the node simulator restores them at its start.
"""
