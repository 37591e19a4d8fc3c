"""Live collection through the Kubernetes API (official client; kubeconfig context or in-cluster)."""

from tmnb.sources.cluster.api import ClusterApi, connect
from tmnb.sources.cluster.collect import DEFAULT_WORKERS, EVENT_REASONS, collect_cluster

__all__ = ["DEFAULT_WORKERS", "EVENT_REASONS", "ClusterApi", "collect_cluster", "connect"]
