"""Lint rules as objects: what a rule is, what it reads and what it reports.

A ``Rule`` carries its metadata (id, area, severity, whether its findings need a manual step during
the rollout, its remedy) and its check. The check reads one context (``LintContext``: the node's
plan, which holds both kubelet profiles, its pods and the API server's version; or ``FleetContext``
for rules across nodes) and yields ``Hit``s: what it found, in words. ``Rule.run`` turns each hit
into a ``Finding`` with the rule's metadata, so readiness and the reports read the manual-action
flag and the remedy from the rule that found it, never from a list beside it.

Validator findings (``tmnb.settings.validate``) reach lint through one rule, each with its own
code; a ``ValidatorCode`` gives each code the same metadata (``lint.REGISTRY`` holds both kinds).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, Literal, Protocol, TypeVar

from tmnb.kubelet.profiles import KubeletProfile
from tmnb.replay import DrainSteps, NodePlan, drain_steps
from tmnb.settings.findings import Finding as ValidatorFinding
from tmnb.snapshot import Node, Pod, Snapshot
from tmnb.versions import KubeVersion

Severity = Literal["blocker", "warning", "info"]
SEVERITY_ORDER: dict[str, int] = {"info": 0, "warning": 1, "blocker": 2}
#: A remedy with no placeholder of its own still names the setting.
DEFAULT_REMEDY = "Correct {setting} in the plan before rolling it out."
#: The remedies of a validator finding on a field the target does not set (the node keeps its own value):
#: a warning or blocker, then a note. Neither speaks of the plan's value, which is the node's.
KEPT_REMEDY = (
    "The plan leaves {setting} as the node has it, and this finding is about that value: add {setting} to the "
    "target with a corrected value, or correct it on the node before the rollout."
)
KEPT_NOTE = (
    "Nothing to change for this plan, which leaves {setting} as the node has it; to change it in the same "
    "rollout, add {setting} to the target."
)


@dataclass(frozen=True)
class Finding:
    rule: str
    node: str
    area: str
    setting: str
    expected: str
    detected: str
    severity: Severity
    explanation: str
    remedy: str


@dataclass(frozen=True)
class Hit:
    """What a check found; the rule adds its id, area, severity and remedy."""

    setting: str
    expected: str
    detected: str
    explanation: str
    #: None: the rule's severity
    severity: Severity | None = None
    #: None: the rule's area
    area: str | None = None
    #: values for the remedy's placeholders besides ``setting``, ``expected`` and ``detected``
    fill: Mapping[str, str] = field(default_factory=dict)
    #: fleet rules: where the finding is (a pool); None: the context's node
    where: str | None = None
    #: the validator's code, for the one rule that reports validator findings (``ValidatorCode``)
    code: str | None = None
    #: the remedy of ``code``, filled (set by that rule from the code's entry)
    remedy: str | None = None


class Context(Protocol):
    @property
    def where(self) -> str: ...


@dataclass(frozen=True)
class LintContext:
    """What a node rule reads: the node's plan (current and planned settings, today's kubelet minor and
    the one after the change), the node's pods and the API server's version."""

    plan: NodePlan
    pods: tuple[Pod, ...] = ()
    server: KubeVersion | None = None
    #: the node's drain and checkpoint steps when the caller decided them already (readiness does)
    decided: DrainSteps | None = None
    #: the settings validator's findings by everything it reads, shared by the nodes of one lint run
    #: (thousands of nodes of one shape and configuration on a fleet)
    validated: dict[tuple[object, ...], tuple[ValidatorFinding, ...]] = field(default_factory=dict, compare=False)

    @property
    def where(self) -> str:
        return self.plan.node.name

    @property
    def node(self) -> Node:
        return self.plan.node

    @property
    def steps(self) -> DrainSteps:
        """The drain and checkpoint steps the rollout takes on this node (``replay.drain``)."""
        return self.decided if self.decided is not None else drain_steps(self.plan, self.pods)

    @property
    def profile(self) -> KubeletProfile:
        """The kubelet minor the change runs on (the target's ``kubeletVersion``, else today's)."""
        return self.plan.planned_kubelet

    @property
    def today(self) -> KubeletProfile:
        """The kubelet minor the node is predicted as today."""
        return self.plan.kubelet.profile


@dataclass(frozen=True)
class FleetContext:
    """What a fleet rule reads: the whole snapshot and the label naming node pools."""

    snapshot: Snapshot
    pool_label: str | None = None

    @property
    def where(self) -> str:
        return ""


C = TypeVar("C", bound=Context)


@dataclass(frozen=True)
class Rule(Generic[C]):
    """One pitfall: its metadata and its check.

    ``severity`` is that of its findings unless the check gives a hit its own (``flag-overrides-file``
    is only ``info`` while the plan leaves the flagged field alone). ``manual``: its warnings and
    blockers need a step by hand during the rollout (drain, delete a file, edit a unit), which readiness
    lists in the plan and counts toward ``needs action``; ``fleet``: that step is taken once for the
    whole cluster, not on each node (kubeadm's kubelet-config ConfigMap, the control plane's upgrade), so
    readiness says it once on top and, below ``fail_on``, does not count it toward a node's verdict.
    ``remedy`` is a template filled from each hit (``{setting}``, ``{expected}``, ``{detected}`` and the
    hit's ``fill``)."""

    id: str
    area: str
    severity: Severity
    remedy: str
    check: Callable[[C], Iterable[Hit]]
    manual: bool = False
    fleet: bool = False
    #: one line: the pitfall, for the reports' list of rules
    summary: str = ""

    def run(self, context: C) -> Iterator[Finding]:
        for hit in self.check(context):
            fill = {"setting": hit.setting, "expected": hit.expected, "detected": hit.detected, **hit.fill}
            yield Finding(
                hit.code or self.id,
                hit.where if hit.where is not None else context.where,
                hit.area or self.area,
                hit.setting,
                hit.expected,
                hit.detected,
                hit.severity or self.severity,
                hit.explanation,
                hit.remedy if hit.remedy is not None else self.remedy.format(**fill),
            )


@dataclass(frozen=True)
class ValidatorCode:
    """Lint's metadata for one validator finding code (``tmnb.settings`` reports the finding, in the
    kubelet's words where it has them; its severity is the validator's)."""

    id: str
    #: the remedy where the target sets ``field``: it speaks of the plan's value
    remedy: str = DEFAULT_REMEDY
    manual: bool = False
    #: the lint rule that reports this finding with the plan in mind, when ``covered`` says so
    reported_by: str = ""
    #: when lint leaves the validator's finding out for ``reported_by``'s (None: never)
    covered: Callable[[LintContext], bool] | None = None
    summary: str = ""
    #: the remedy where the target leaves ``field`` as the node has it: which field to add to the target
    #: and why, or that the change needs nothing ("": ``remedy`` when it does not speak of the plan, else
    #: ``KEPT_REMEDY`` or ``KEPT_NOTE`` by the finding's severity)
    kept: str = ""
    #: the field the remedy changes, when it is not the finding's own ("": the finding's)
    field: str = ""

    def fill(self, setting: str, target: Collection[str] = (), severity: str = "warning") -> str:
        """The remedy of a finding on ``setting`` under a target that sets the fields ``target``."""
        if (self.field or setting) in target or (self.remedy != DEFAULT_REMEDY and not self.kept):
            template = self.remedy
        else:
            template = self.kept or (KEPT_NOTE if severity == "info" else KEPT_REMEDY)
        return template.format(setting=setting)


def always(_: LintContext) -> bool:
    return True
