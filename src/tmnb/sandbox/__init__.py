"""A simulated cluster on 127.0.0.1 that the real kubectl drives and whose nodes admit pods with
tmnb.kubelet: rehearse a Topology Manager rollout on a twin of a snapshot (docs/sandbox.md)."""

from tmnb.sandbox.cluster import Cluster
from tmnb.sandbox.errors import ApiError
from tmnb.sandbox.faults import Faults
from tmnb.sandbox.kubelet import KubeletDown, SimKubelet
from tmnb.sandbox.server import Sandbox

__all__ = ["ApiError", "Cluster", "Faults", "KubeletDown", "Sandbox", "SimKubelet"]
