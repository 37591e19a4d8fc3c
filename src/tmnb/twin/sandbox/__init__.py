"""A simulated cluster on 127.0.0.1 that the real kubectl drives and whose nodes admit pods with
tmnb.kubelet: rehearse a Topology Manager rollout on a twin of a snapshot (docs/sandbox.md)."""

from tmnb.twin.sandbox.cluster import Cluster
from tmnb.twin.sandbox.errors import ApiError
from tmnb.twin.sandbox.faults import Faults
from tmnb.twin.sandbox.kubelet import KubeletDown, SimKubelet
from tmnb.twin.sandbox.server import Sandbox

__all__ = ["ApiError", "Cluster", "Faults", "KubeletDown", "Sandbox", "SimKubelet"]
