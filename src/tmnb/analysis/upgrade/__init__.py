"""What a target that changes the kubelet minor changes on a node, from the two minors' facts.

The lint rules here compare the node's kubelet today (``LintContext.today``) with the minor after the
change (``LintContext.profile``) through their profiles only (``tmnb.kubelet.profiles``), one module per
kind of fact: the feature gates the planned configuration sets that the new minor removed or locked, or
whose dependencies it checks and finds off (``gates``); configured fields it does not know, and what
today's minor would make of the planned configuration after a rollback (``fields``); policy options
whose maturity changes (``options``); whether it reads the checkpoints today's kubelet wrote, and whether
today's minor reads the ones it writes (``checkpoints``); how its resource managers treat the node's pods
with pod-level resources, and its device hints on a node whose devices sit on some NUMA nodes only
(``managers``). They fire only when the plan changes the minor; the texts quote the kubelet where it
prints one. The direction does not matter: a target older than today's minor is compared the same way.
Whether the upgrade itself is supported is ``policy``'s: the planned kubelet against the API server,
minors skipped, and the drain a minor upgrade needs.

``admission.admission_changes`` says which pods the planned minor admits or pins differently than
today's minor does under the same configuration: the node's pods replayed as both.
"""

from tmnb.analysis.rules import LintContext, Rule
from tmnb.analysis.upgrade.checkpoints import (
    UPGRADE_CHECKPOINT_INLINE,
    UPGRADE_CHECKPOINT_REFUSED,
    UPGRADE_ROLLBACK_CHECKPOINT_REFUSED,
)
from tmnb.analysis.upgrade.fields import UPGRADE_FIELD_UNKNOWN, UPGRADE_ROLLBACK_CONFIG
from tmnb.analysis.upgrade.gates import UPGRADE_GATE_DEPENDENCY, UPGRADE_GATE_LOCKED, UPGRADE_GATE_REMOVED
from tmnb.analysis.upgrade.managers import UPGRADE_DEVICE_HINTS, UPGRADE_POD_LEVEL_RESOURCES
from tmnb.analysis.upgrade.options import UPGRADE_OPTION_GATE_DROPPED, UPGRADE_OPTION_GATE_NEEDED
from tmnb.analysis.upgrade.policy import (
    UPGRADE_BEYOND_SKEW,
    UPGRADE_DRAIN_FIRST,
    UPGRADE_NEWER_THAN_SERVER,
    UPGRADE_SKIPS_MINORS,
)

#: The upgrade rules, in the order their findings are listed (after lint's other node rules).
UPGRADE_RULES: tuple[Rule[LintContext], ...] = (
    UPGRADE_NEWER_THAN_SERVER,
    UPGRADE_BEYOND_SKEW,
    UPGRADE_SKIPS_MINORS,
    UPGRADE_DRAIN_FIRST,
    UPGRADE_GATE_REMOVED,
    UPGRADE_GATE_LOCKED,
    UPGRADE_GATE_DEPENDENCY,
    UPGRADE_FIELD_UNKNOWN,
    UPGRADE_OPTION_GATE_NEEDED,
    UPGRADE_OPTION_GATE_DROPPED,
    UPGRADE_CHECKPOINT_REFUSED,
    UPGRADE_ROLLBACK_CHECKPOINT_REFUSED,
    UPGRADE_CHECKPOINT_INLINE,
    UPGRADE_ROLLBACK_CONFIG,
    UPGRADE_POD_LEVEL_RESOURCES,
    UPGRADE_DEVICE_HINTS,
)
