"""tmnb: plan, execute, verify and recover kubelet Topology Manager changes."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("tmnb")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+unknown"
