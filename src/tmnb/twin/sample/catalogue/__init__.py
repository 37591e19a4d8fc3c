"""The sample's catalogue, plain data: hardware shapes, kubelet configuration profiles, node pools
and workloads. Every step of the generator derives its records from these tables."""

from tmnb.twin.sample.catalogue.pools import POOLS, Pool
from tmnb.twin.sample.catalogue.profiles import PROFILES, Profile
from tmnb.twin.sample.catalogue.shapes import SHAPES, DeviceGroup, Shape
from tmnb.twin.sample.catalogue.workloads import WORKLOADS, ContainerSpec, Workload, guaranteed

__all__ = [
    "POOLS",
    "PROFILES",
    "SHAPES",
    "WORKLOADS",
    "ContainerSpec",
    "DeviceGroup",
    "Pool",
    "Profile",
    "Shape",
    "Workload",
    "guaranteed",
]
