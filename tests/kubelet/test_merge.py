"""Bitmask rules, merge internals (ported from the kubelet's unit tables) and merge properties."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmnb.errors import InputError
from tmnb.kubelet.bitmask import bits_of, is_narrower, iterate_masks, mask_of
from tmnb.kubelet.hints import TopologyHint
from tmnb.kubelet.merge import (
    NUMAInfo,
    _compare,
    best_non_preferred_count,
    filter_provider_hints,
    filter_single_numa,
    merge_lists,
)
from tmnb.kubelet.options import TopologyManagerOptions
from tmnb.kubelet.policy import policy_for


def M(*bits: int) -> int:  # noqa: N802 - reads like the kubelet tables
    return mask_of(bits)


def H(*bits: int, p: bool = True) -> TopologyHint:  # noqa: N802
    return TopologyHint(M(*bits), p)


class TestBitmask:
    def test_range(self):
        assert mask_of([0, 63]) == (1 << 63) | 1
        for bad in (-1, 64):
            with pytest.raises(InputError, match="bit number must be in range 0-63"):
                mask_of([bad])

    def test_narrower_is_count_then_numeric(self):
        assert is_narrower(M(1, 2), M(0, 3))  # 6 < 9 although {0,3} has the lower node
        assert not is_narrower(M(0, 3), M(1, 2))
        assert is_narrower(M(7), M(0, 1))
        assert not is_narrower(M(0, 1), M(0, 1))

    def test_iterate_masks_order(self):
        assert [bits_of(m) for m in iterate_masks([0, 1, 2])] == [
            [0],
            [1],
            [2],
            [0, 1],
            [0, 2],
            [1, 2],
            [0, 1, 2],
        ]
        # order follows the list as given, not numeric order
        assert [bits_of(m) for m in iterate_masks([2, 0])] == [[2], [0], [0, 2]]
        assert iterate_masks([]) == ()


class TestMaxOfMinAffinityCounts:  # policy_test.go TestMaxOfMinAffinityCounts
    @pytest.mark.parametrize(
        ("lists", "expected"),
        [
            ([], 0),
            ([[H()]], 0),
            ([[H(0)]], 1),
            ([[H(0, 1)]], 2),
            ([[H(0, 1), H(0, 1, 2)]], 2),
            ([[H(0, 1), H(0, 1, 2)], [H(0, 1, 2)]], 3),
            ([[H(0, 1), H(0, 1, 2)], [H(0, 1, 2), H(0, 1, 2, 3)]], 3),
            ([[TopologyHint(None, True)], [H(0, 1)]], 2),
        ],
    )
    def test_table(self, lists, expected):
        assert best_non_preferred_count(lists) == expected


class TestCompareNarrowest:  # policy_test.go TestCompareHintsNarrowest
    @pytest.mark.parametrize(
        ("threshold", "current", "candidate", "expected"),
        [
            (-1, (M(0), False), (M(0), True), "candidate"),
            (-1, (M(0), True), (M(0), False), "current"),
            (-1, (M(0), True), (M(0), True), "current"),
            (-1, (M(0, 1), True), (M(0), True), "candidate"),
            (-1, (M(0), True), (M(0, 1), True), "current"),
            (1, (M(0, 1), False), (M(0, 1), False), "current"),
            (1, (M(1, 2), False), (M(0, 1), False), "candidate"),
            (1, (M(0, 1), False), (M(1, 2), False), "current"),
            (2, (M(0, 1), False), (M(0), False), "current"),
            (2, (M(0, 1), False), (M(0, 1), False), "current"),
            (2, (M(1, 2), False), (M(0, 1), False), "candidate"),
            (2, (M(0, 1), False), (M(1, 2), False), "current"),
            (2, (M(0), False), (M(0, 1, 2), False), "current"),
            (2, (M(0), False), (M(0, 1), False), "candidate"),
            (3, (M(0), False), (M(0, 1), False), "candidate"),
            (3, (M(0), False), (M(1, 2), False), "candidate"),
            (4, (M(0, 1), False), (M(1, 2, 3), False), "candidate"),
            (4, (M(1, 2, 3), False), (M(0, 1), False), "current"),
            (4, (M(0, 1, 2), False), (M(0, 1, 2), False), "current"),
            (4, (M(0, 1, 2), False), (M(1, 2, 3), False), "current"),
            (4, (M(1, 2, 3), False), (M(0, 1, 2), False), "candidate"),
        ],
    )
    def test_table(self, threshold, current, candidate, expected):
        got = _compare(NUMAInfo(()), threshold, False, current, candidate)
        assert got is (current if expected == "current" else candidate)

    def test_no_current(self):
        assert _compare(NUMAInfo(()), -1, False, None, (M(0), False)) == (M(0), False)


FOUR_D = {0: [10, 11, 12, 12], 1: [11, 10, 12, 12], 2: [12, 12, 10, 11], 3: [12, 12, 11, 10]}


class TestDistances:  # numa_info_test.go TestCalculateAvgDistanceFor / TestClosest
    @pytest.mark.parametrize(
        ("bits", "rows", "expected"),
        [
            ([0], {0: [10]}, 10),
            ([0], {0: [10, 11], 1: [11, 10]}, 10),
            ([0, 1], {0: [10, 11], 1: [11, 10]}, 10.5),
            ([0, 2], FOUR_D, 11),
            ([0, 2, 3], FOUR_D, 11.11111111111111),
            ([], {}, 0),
        ],
    )
    def test_average(self, bits, rows, expected):
        assert NUMAInfo(tuple(rows), rows).average_distance(M(*bits)) == expected

    def test_missing_row_is_input_error(self):
        with pytest.raises(InputError, match="no NUMA distance from node 0 to node 3"):
            NUMAInfo((0, 3), {0: [10, 20], 3: [20, 10]}).average_distance(M(0, 3))

    @pytest.mark.parametrize(
        ("current", "candidate", "rows", "expected"),
        [
            ((0,), (0, 2), {}, "current"),
            ((0, 1), (0, 2), {i: [10, 10, 10] for i in range(3)}, "current"),
            ((0, 3), (0, 2), {i: [10] * 4 for i in range(4)}, "candidate"),
            ((0, 3), (0, 1), FOUR_D, "candidate"),
            ((2, 3), (0, 3), FOUR_D, "current"),
        ],
    )
    def test_closest(self, current, candidate, rows, expected):
        numa = NUMAInfo(tuple(rows), rows)
        cur, cand = (M(*current), True), (M(*candidate), True)
        got = _compare(numa, 0, True, cur, cand)
        assert got is (cur if expected == "current" else cand)


class TestFilters:
    def test_provider_filtering(self):
        lists = filter_provider_hints([None, {}, {"a": None, "b": [], "c": [H(0), H(0)]}])
        assert [list(x) for x in lists] == [
            [TopologyHint(None, True)],
            [TopologyHint(None, True)],
            [TopologyHint(None, True)],
            [TopologyHint(None, False)],
            [H(0), H(0)],  # no de-duplication
        ]

    def test_single_numa_filter(self):  # policy_single_numa_node_test.go TestPolicySingleNumaNodeFilterHints
        nil_t, nil_f = TopologyHint(None, True), TopologyHint(None, False)
        assert filter_single_numa([]) == []
        assert filter_single_numa([[nil_f], [nil_t]]) == [[], [nil_t]]
        assert filter_single_numa([[H(0), nil_f], [H(1), nil_t]]) == [[H(0)], [H(1), nil_t]]
        assert filter_single_numa([[H(1), H(0), nil_f], []]) == [[H(1), H(0)], []]
        wide = [
            [H(0), H(1), H(1, 2, p=False), H(0, 1, 2, p=False), nil_f],
            [H(1, 2, p=False), H(0, 1, 2, p=False), H(0, 2, p=False), H(3, p=False)],
            [H(1, 2, p=False), H(0, 1, 2, p=False), H(0, 2, p=False)],
        ]
        assert filter_single_numa(wide) == [[H(0), H(1)], [], []]


# ---------------------------------------------------------------- property tests

NODE_COUNTS = st.sampled_from([1, 2, 3, 4])


@st.composite
def machines_and_providers(draw):
    n = draw(NODE_COUNTS)
    nodes = tuple(range(n))
    universe = (1 << (n + 1)) - 1  # one bit beyond the machine, to exercise masks outside it
    hint = st.builds(
        TopologyHint,
        st.one_of(st.none(), st.integers(0, universe)),
        st.booleans(),
    )
    hint_list = st.one_of(st.none(), st.lists(hint, max_size=4))
    provider = st.one_of(st.none(), st.dictionaries(st.sampled_from(["cpu", "memory", "gpu"]), hint_list, max_size=2))
    providers = draw(st.lists(provider, max_size=3))
    rows = {i: [10 if i == j else draw(st.integers(11, 40)) for j in range(n)] for i in nodes}
    return nodes, providers, rows


def reference_merge(lists, numa: NUMAInfo, prefer_closest: bool) -> TopologyHint:
    """The kubelet's literal fold: every permutation in nested-loop order, compare against best."""
    threshold = best_non_preferred_count(lists)
    best = None
    for perm in itertools.product(*lists):
        preferred = True
        merged = numa.default_mask
        first = None
        for affinity, hint_preferred in perm:
            if affinity is not None:
                merged &= affinity
                if first is None:
                    first = affinity
                elif affinity != first:
                    preferred = False
            if not hint_preferred:
                preferred = False
        if merged == 0:
            continue
        best = _compare(numa, threshold, prefer_closest, best, (merged, preferred))
    return TopologyHint(numa.default_mask, False) if best is None else TopologyHint(*best)


@settings(max_examples=300, deadline=None)
@given(machines_and_providers(), st.booleans())
def test_merge_equals_literal_permutation_fold(data, prefer_closest):
    nodes, providers, rows = data
    numa = NUMAInfo(nodes, rows)
    lists = filter_provider_hints(providers)
    assert merge_lists(lists, numa, prefer_closest=prefer_closest) == reference_merge(lists, numa, prefer_closest)


@settings(max_examples=200, deadline=None)
@given(machines_and_providers(), st.sampled_from(["best-effort", "restricted", "single-numa-node"]), st.randoms())
def test_merge_independent_of_provider_and_hint_order(data, policy, rnd):
    nodes, providers, rows = data
    tm = policy_for(policy, NUMAInfo(nodes, rows), TopologyManagerOptions(prefer_closest_numa=True))
    shuffled = [None if p is None else dict(rnd.sample(list(p.items()), len(p))) for p in providers]
    shuffled = [
        p if p is None else {k: None if v is None else rnd.sample(v, len(v)) for k, v in p.items()} for p in shuffled
    ]
    rnd.shuffle(shuffled)
    assert tm.merge(providers) == tm.merge(shuffled)


@settings(max_examples=200, deadline=None)
@given(machines_and_providers())
def test_single_numa_node_never_multi_node(data):
    nodes, providers, _ = data
    hint, admit = policy_for("single-numa-node", NUMAInfo(nodes)).merge(providers)
    assert hint.affinity is None or hint.affinity.bit_count() == 1
    assert admit == hint.preferred


@settings(max_examples=200, deadline=None)
@given(machines_and_providers(), st.sampled_from(["restricted", "single-numa-node"]))
def test_restricted_and_single_numa_admit_only_preferred(data, policy):
    nodes, providers, _ = data
    hint, admit = policy_for(policy, NUMAInfo(nodes)).merge(providers)
    assert admit is hint.preferred


@settings(max_examples=200, deadline=None)
@given(machines_and_providers(), st.sampled_from(["best-effort", "none"]))
def test_best_effort_and_none_always_admit(data, policy):
    nodes, providers, _ = data
    hint, admit = policy_for(policy, NUMAInfo(nodes)).merge(providers)
    assert admit is True
    if policy == "none":
        assert hint == TopologyHint(None, False)
    else:
        assert hint.affinity is not None and hint.affinity & ~NUMAInfo(nodes).default_mask == 0


@settings(max_examples=100, deadline=None)
@given(machines_and_providers())
def test_restricted_hint_equals_best_effort_hint(data):
    nodes, providers, _ = data
    numa = NUMAInfo(nodes)
    assert policy_for("restricted", numa).merge(providers)[0] == policy_for("best-effort", numa).merge(providers)[0]
