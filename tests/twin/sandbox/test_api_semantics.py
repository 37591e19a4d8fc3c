"""List and eviction semantics without a server: selectors, pagination, budget arithmetic."""

from __future__ import annotations

import pytest

from tmnb.twin.sandbox.budgets import budget, check_eviction
from tmnb.twin.sandbox.errors import ApiError
from tmnb.twin.sandbox.selectors import field_matcher, label_matcher, paginate


@pytest.mark.parametrize(
    ("expr", "labels", "expected"),
    [
        ("app=web", {"app": "web"}, True),
        ("app==web,tier!=db", {"app": "web", "tier": "db"}, False),
        ("app in (web, api)", {"app": "api"}, True),
        ("app notin (web,api),env", {"app": "x", "env": "prod"}, True),
        ("!canary", {"canary": "true"}, False),
        ("", {}, True),
    ],
)
def test_label_selectors(expr: str, labels: dict[str, str], expected: bool) -> None:
    assert label_matcher(expr)(labels) is expected


def test_field_selectors_follow_dotted_paths() -> None:
    pod = {"metadata": {"name": "a"}, "spec": {"nodeName": "w1"}, "status": {"phase": "Running"}}
    assert field_matcher("spec.nodeName=w1,status.phase!=Failed")(pod)
    assert not field_matcher("spec.nodeName=w2")(pod)
    with pytest.raises(ApiError) as bad:
        field_matcher("spec.nodeName in (w1)")
    assert bad.value.code == 400


def _obj(ns: str, name: str) -> dict:
    return {"metadata": {"namespace": ns, "name": name}}


def test_pagination_is_ordered_and_complete() -> None:
    items = [_obj(ns, n) for ns in ("b", "a") for n in ("y", "x", "z")]
    seen, query = [], {"limit": "4"}
    page, meta = paginate(items, query, 7)
    assert meta["remainingItemCount"] == 2 and meta["resourceVersion"] == "7"
    seen += page
    page, meta = paginate(items, {"limit": "4", "continue": meta["continue"]}, 7)
    seen += page
    assert "continue" not in meta
    assert [(o["metadata"]["namespace"], o["metadata"]["name"]) for o in seen] == sorted(
        (ns, n) for ns in "ab" for n in "xyz"
    )
    with pytest.raises(ApiError):
        paginate(items, {"continue": "!!"}, 7)


def _pod(name: str, *, ready: bool = True, phase: str = "Running") -> dict:
    conditions = [{"type": "Ready", "status": "True" if ready else "False"}]
    return {
        "metadata": {"namespace": "app", "name": name, "uid": name, "labels": {"app": "web"}, "ownerReferences": []},
        "status": {"phase": phase, "conditions": conditions},
    }


def _pdb(**spec: object) -> dict:
    return {
        "metadata": {"namespace": "app", "name": "web-pdb"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, **spec},
    }


@pytest.mark.parametrize(
    ("spec", "healthy", "allowed"),
    [
        ({"minAvailable": 2}, 3, 1),
        ({"minAvailable": "80%"}, 3, 0),  # ceil(2.4) = 3 desired
        ({"maxUnavailable": 1}, 3, 1),
        ({"maxUnavailable": "50%"}, 2, 1),  # ceil(1.5) = 2 may be unavailable: 1 desired
    ],
)
def test_budget_arithmetic(spec: dict, healthy: int, allowed: int) -> None:
    pods = [_pod(f"p{i}", ready=i < healthy) for i in range(3)]
    state = budget(_pdb(**spec), pods, lambda p: None)
    assert state.expected == 3
    assert state.current_healthy == healthy
    assert state.disruptions_allowed == allowed


def test_eviction_refusals() -> None:
    pods = [_pod("a"), _pod("b"), _pod("c", ready=False), _pod("d", phase="Failed")]
    pdb = _pdb(minAvailable=2)
    with pytest.raises(ApiError) as refused:
        check_eviction(pods[0], [pdb], pods, lambda p: None)
    assert refused.value.code == 429
    assert refused.value.details["causes"][0]["message"] == (
        "The disruption budget web-pdb needs 2 healthy pods and has 2 currently"
    )
    check_eviction(pods[2], [pdb], pods, lambda p: None)  # unready pod, budget met: allowed
    check_eviction(pods[3], [pdb], pods, lambda p: None)  # terminal pods are always evictable
    with pytest.raises(ApiError) as two:
        check_eviction(pods[0], [pdb, {**pdb, "metadata": {"namespace": "app", "name": "other"}}], pods, lambda p: None)
    assert two.value.code == 500
    assert two.value.message == (
        "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
    )
