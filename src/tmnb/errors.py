"""The one exception family of tmnb.

Every failure a user can cause (bad files, bad parameters, unreachable clusters) ends in a
:class:`TmnbError` whose message names *where* (file, JSON path, field, node) and *what was
expected*, so the CLI can print one line and exit 2 instead of a traceback.
"""

from __future__ import annotations


class TmnbError(Exception):
    """Root of every error tmnb raises on purpose."""


class InputError(TmnbError):
    """Input that cannot be understood: a file, a field, a parameter or a literal value."""

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        where: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.where = where
        self.line = line
        super().__init__(self._render())

    def _render(self) -> str:
        loc = self.source or ""
        if self.line is not None:
            loc = f"{loc}:{self.line}" if loc else f"line {self.line}"
        if self.where:
            loc = f"{loc}: {self.where}" if loc else self.where
        return f"{loc}: {self.message}" if loc else self.message


class SnapshotError(InputError):
    """A snapshot file that is malformed, truncated, of an unknown schema or fails validation."""


class Tampered(InputError):
    """Evidence that does not match its manifest: exit 4, as ``tmnb evidence verify`` says it."""


class CollectError(TmnbError):
    """A source (cluster, node, bundle) could not be read; collectors record these per node."""


class RunError(TmnbError):
    """A notebook run failed: an error cell, a cell timeout or a dead kernel."""

    def __init__(self, message: str, *, output: str | None = None) -> None:
        self.output = output
        super().__init__(message if output is None else f"{message} (partial output kept at {output})")


class ConfigRejected(InputError):
    """The kubelet itself would refuse this configuration; the message is the kubelet's own text."""


class RolloutError(TmnbError):
    """A rollout step could not be carried out on a node (unreachable, refused, timed out, drifted)."""

    def __init__(self, message: str, *, node: str | None = None, step: str | None = None) -> None:
        self.node = node
        self.step = step
        where = ": ".join(p for p in (f"node {node}" if node else "", step or "") if p)
        super().__init__(f"{where}: {message}" if where else message)
