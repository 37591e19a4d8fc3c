"""Lint rules as objects: metadata on the rule, read by readiness from there, one entry per validator code."""

import dataclasses
import re

import pytest

from conftest import ROOT
from factories import node, pod, settings, snapshot
from tmnb.analysis import lint, readiness, validator_rule
from tmnb.analysis.rules import Finding, Hit, LintContext, Rule, ValidatorCode
from tmnb.replay import plan_for
from tmnb.settings.findings import Finding as ValidatorFinding
from tmnb.snapshot import KubeletInfo

STATIC = KubeletInfo(settings=settings(cpuManagerPolicy="static", reservedSystemCPUs="0,8"))


def test_a_rule_gives_its_findings_its_metadata():
    def check(c):
        yield Hit("reservedSystemCPUs", "one core", "two cores", "Too many.", fill={"n": "2"})
        yield Hit("cpuManagerPolicy", "static", "none", "Quiet.", severity="info", area="cpu manager", fill={"n": "0"})

    rule = Rule[LintContext]("demo", "versions", "warning", "Use {n} fewer in {setting} ({detected}).", check)
    found = list(rule.run(LintContext(plan_for(node("a"), {}))))
    assert found == [
        Finding(
            "demo",
            "a",
            "versions",
            "reservedSystemCPUs",
            "one core",
            "two cores",
            "warning",
            "Too many.",
            "Use 2 fewer in reservedSystemCPUs (two cores).",
        ),
        Finding(
            "demo",
            "a",
            "cpu manager",
            "cpuManagerPolicy",
            "static",
            "none",
            "info",
            "Quiet.",
            "Use 0 fewer in cpuManagerPolicy (none).",
        ),
    ]


def test_readiness_has_no_list_of_its_own():
    assert not hasattr(readiness, "MANUAL_ACTION_RULES")
    assert not hasattr(lint, "REMEDIES") and not hasattr(lint, "COVERED_BY_PLAN_RULES")


def _swap(monkeypatch, rule_id, **changes):
    """Replace one rule by a copy with other metadata, in the rules lint runs and in the registry."""
    old = lint.REGISTRY[rule_id]
    new = dataclasses.replace(old, **changes)
    monkeypatch.setattr(lint, "RULES", tuple(new if r is old else r for r in lint.RULES))
    monkeypatch.setitem(lint.REGISTRY, rule_id, new)


def test_readiness_takes_manual_action_and_remedy_from_the_rule(monkeypatch):
    """Node c runs the CPU manager's none policy: single-numa-node there warns cpu-none-strict-topology.
    Marked manual, that warning makes c "needs action" and its remedy, filled, the plan's manual step."""
    snap = snapshot([node("a", kubelet=STATIC), node("c")], [pod("small", "a", cpu="2")])
    target = {"topologyManagerPolicy": "single-numa-node"}
    before = readiness.assess(snap, target)
    assert before.verdicts.set_index("node")["verdict"].to_dict() == {"a": "ready", "c": "ready"}
    assert set(before.plan["manual action required"]) == {""}
    assert not readiness.lint_by_rule(before.lint).set_index("rule").loc["cpu-none-strict-topology", "manual step"]

    _swap(monkeypatch, "cpu-none-strict-topology", manual=True, remedy="Page the owner of {setting} on c.")
    after = readiness.assess(snap, target)
    assert after.verdicts.set_index("node")["verdict"].to_dict() == {"a": "ready", "c": "needs action"}
    plan = after.plan.set_index("node")["manual action required"]
    assert plan["c"] == "Page the owner of cpuManagerPolicy on c." and plan["a"] == ""
    by_rule = readiness.lint_by_rule(after.lint).set_index("rule").loc["cpu-none-strict-topology"]
    assert by_rule["manual step"] and by_rule["remedy"] == "Page the owner of cpuManagerPolicy on c."


def test_a_validator_code_carries_its_manual_flag_and_remedy(monkeypatch):
    """config.unknown-field (a warning) for a misspelt field set by the plan: not manual, then manual."""
    snap = snapshot([node("a", kubelet=STATIC)])
    target = {"topologyManagerPolicy": "restricted"}
    monkeypatch.setattr(
        "tmnb.analysis.validator_rule.validate_settings",
        lambda *a, **k: [
            ValidatorFinding("config.unknown-field", "topologyManagerPolicy", "warning", "unknown field", "v1.36.1")
        ],
    )
    assert readiness.assess(snap, target).verdicts.loc[0, "verdict"] == "ready"
    entry = ValidatorCode("config.unknown-field", "Fix {setting} by hand.", manual=True)
    monkeypatch.setitem(validator_rule.VALIDATOR_CODES, "config.unknown-field", entry)
    monkeypatch.setitem(lint.REGISTRY, "config.unknown-field", entry)
    report = readiness.assess(snap, target)
    assert report.verdicts.loc[0, "verdict"] == "needs action"
    assert report.plan.loc[0, "manual action required"] == "Fix topologyManagerPolicy by hand."
    assert report.findings[0].remedy == "Fix topologyManagerPolicy by hand."


def _validator_codes() -> set[str]:
    """Every finding code the settings validator can emit: its own (read from its source) and those of
    the kubelet's checks it runs step by step (each step declares its codes)."""
    from tmnb.kubelet.startup.checks import STAGES

    found = {code for stage in STAGES for step in stage.steps for code in step.codes}
    for path in (ROOT / "src" / "tmnb" / "settings").rglob("*.py"):
        found |= set(re.findall(r'"([a-z]+\.[a-z][a-z0-9-]*)"', path.read_text()))
    return found


def test_every_validator_code_has_one_entry_and_every_entry_a_code():
    assert _validator_codes() == set(validator_rule.VALIDATOR_CODES)
    ids = [r.id for r in (*lint.RULES, *lint.FLEET_RULES)] + list(validator_rule.VALIDATOR_CODES)
    assert len(ids) == len(set(ids)) == len(lint.REGISTRY)


@pytest.mark.parametrize("code", sorted(validator_rule.VALIDATOR_CODES))
def test_validator_remedies_fill_from_the_setting_alone(code):
    assert validator_rule.VALIDATOR_CODES[code].fill("cpuManagerPolicy")


def test_covered_codes_name_a_rule_that_exists():
    for code in validator_rule.VALIDATOR_CODES.values():
        if code.covered is not None:
            assert {r.strip() for r in code.reported_by.split(",")} <= set(lint.REGISTRY), code.id


def test_the_plan_aware_rule_replaces_the_validators_finding():
    """cpuManagerPolicy none with single-numa-node: the validator's topology.no-cpu-memory-hints is
    left out for cpu-none-strict-topology, which reads the plan."""
    rules = {f.rule for f in lint.lint(snapshot([node("a")]), {"topologyManagerPolicy": "single-numa-node"})}
    assert "cpu-none-strict-topology" in rules and "topology.no-cpu-memory-hints" not in rules
