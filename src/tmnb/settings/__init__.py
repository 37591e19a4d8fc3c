"""Effective kubelet settings with provenance (``effective``), their version-aware validation
(``validate``) and the field names a change may set (``target``)."""
