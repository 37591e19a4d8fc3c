"""tmnb: plan, execute, verify and recover kubelet Topology Manager changes."""

#: The one place the version is written (pyproject reads it): looking it up in the installed
#: metadata costs ``tmnb --help`` a third of its time.
__version__ = "0.1.0"
