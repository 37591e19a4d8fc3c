"""Compare two snapshots taken before and after a change: settings per node, and every container.

Containers are matched by namespace, owner (the controller, e.g. ``Deployment/web``; the pod
itself when it has none) and container name, because recreated pods get new names. Replicas
of one owner are interchangeable, so they are paired to show as few changes as there are: by pod
name first (StatefulSets, pods that were not recreated), then same node and CPUs, then same node,
then admitted with admitted, then in creation order.

A container's **alignment**:

- ``aligned``: exclusive CPUs on one NUMA zone (or on as few zones as its CPU count needs), and
  its pinned memory and its devices with NUMA affinity on those zones;
- ``cross-NUMA``: exclusive CPUs, but spread over more zones than needed, or memory or devices
  on other zones;
- ``shared``: CPUs from the shared pool (alignment does not apply);
- ``rejected``: the kubelet refused the pod at admission;
- ``not running``: pending, unbound or finished; ``unknown``: running, but the snapshot has no
  allocation for it (the why says whether the node's cpu_manager_state was read at all). Under
  ``cpuManagerPolicy: none`` the kubelet keeps no CPU state and every container is ``shared``.

The **verdict** of a matched pair, worst first: ``now rejected``, ``lost alignment``, ``gone``
(no running counterpart after the change), ``newly aligned``, ``moved`` (other node or CPUs),
``new`` (only after), ``unchanged``. Shared-pool containers only move when their node changes:
the pool itself shifts whenever any exclusive allocation on the node changes.
"""

from tmnb.analysis.compare.answer import alert, evidence_folder, headline, verdict_block
from tmnb.analysis.compare.confounders import CONFOUNDER_COLUMNS, confounders, describe_confounders
from tmnb.analysis.compare.containers import (
    ALIGNMENTS,
    CONTAINER_COLUMNS,
    QUOTA_GATE,
    VERDICTS,
    Side,
    alignment,
    alignment_matrix,
    attention,
    containers,
    owner_of,
    pair,
    summary,
    verdict,
)
from tmnb.analysis.compare.settings import DIFF_COLUMNS, settings_changes, settings_diff

__all__ = [
    "ALIGNMENTS",
    "CONFOUNDER_COLUMNS",
    "CONTAINER_COLUMNS",
    "DIFF_COLUMNS",
    "QUOTA_GATE",
    "VERDICTS",
    "Side",
    "alert",
    "alignment",
    "alignment_matrix",
    "attention",
    "confounders",
    "containers",
    "describe_confounders",
    "evidence_folder",
    "headline",
    "owner_of",
    "pair",
    "settings_changes",
    "settings_diff",
    "summary",
    "verdict",
    "verdict_block",
]
