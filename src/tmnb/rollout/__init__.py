"""Guided rollout of a kubelet change: plan, node operations and executors, steps, gates, journal."""
