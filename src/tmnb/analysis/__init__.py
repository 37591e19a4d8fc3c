"""Tables and findings computed from snapshots (pandas lives here, not in kubelet/ or parse/)."""
