"""Bitmask rules, merge internals and the four policies' merge, against expectations that do not
come from the code under test: the kubelet's own test tables (pkg/kubelet/cm/topologymanager
policy_test.go, policy_best_effort_test.go, policy_restricted_test.go,
policy_single_numa_node_test.go, restated here as data), cases worked out by hand, and a literal
fold over every permutation with its own port of the kubelet's hint comparison."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tmnb.errors import InputError
from tmnb.kubelet.names import BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE, TOPOLOGY_NONE
from tmnb.kubelet.options import TopologyManagerOptions
from tmnb.kubelet.topologymanager.bitmask import bits_of, iterate_masks, mask_of
from tmnb.kubelet.topologymanager.hints import ProviderHints, TopologyHint
from tmnb.kubelet.topologymanager.merge import (
    NUMAInfo,
    _compare,
    best_non_preferred_count,
    filter_provider_hints,
    filter_single_numa,
    merge_lists,
)
from tmnb.kubelet.topologymanager.policy import policy_for


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


# ---------------------------------------------------------------- the policies' merge, case by case

NIL_T, NIL_F = TopologyHint(None, True), TopologyHint(None, False)
FOUR = NUMAInfo((0, 1, 2, 3))
TWO = NUMAInfo((0, 1))


def F(*bits: int) -> TopologyHint:  # noqa: N802 - a non-preferred hint, as in the tables
    return H(*bits, p=False)


def one(**resources: list[TopologyHint] | None) -> dict[str, list[TopologyHint] | None]:
    """One provider answering for the given resources."""
    return dict(resources)


def merged(policy: str, numa: NUMAInfo, providers: Sequence[ProviderHints]) -> tuple[TopologyHint, bool]:
    return policy_for(policy, numa).merge(providers)


# (what the case shows, providers, merged hint) from commonPolicyMergeTestCases: every hint that wins
# is preferred and names one node, so best-effort and restricted (on four nodes) and single-numa-node
# (on two) all store it and admit the pod.
COMMON = [
    ("same single node from both, node 0", [one(r1=[H(0)]), one(r2=[H(0)])], H(0)),
    ("same single node from both, node 1", [one(r1=[H(1)]), one(r2=[H(1)])], H(1)),
    ("a provider without hints does not constrain, node 0", [None, one(r=[H(0)])], H(0)),
    ("a provider without hints does not constrain, node 1", [None, one(r=[H(1)])], H(1)),
    ("two choices meet one, node 0", [one(r1=[H(0), H(1)]), one(r2=[H(0)])], H(0)),
    ("two choices meet one, node 1", [one(r1=[H(0), H(1)]), one(r2=[H(1)])], H(1)),
    ("the narrower preferred hint both offer", [one(r1=[H(0), H(1)]), one(r2=[H(0), F(0, 1)])], H(0)),
    (
        "a wider preferred hint beats a narrower non-preferred merge",
        [one(r1=[H(1), F(0, 1)]), one(r2=[H(0), H(1), F(0, 1)])],
        H(1),
    ),
    ("two resources of one provider", [one(r1=[H(1), F(0, 1)], r2=[H(0), H(1), F(0, 1)])], H(1)),
]


@pytest.mark.parametrize(("case", "providers", "hint"), COMMON, ids=[c[0] for c in COMMON])
@pytest.mark.parametrize(("policy", "numa"), [(BEST_EFFORT, FOUR), (RESTRICTED, FOUR), (SINGLE_NUMA_NODE, TWO)])
def test_common_table(policy, numa, case, providers, hint):
    assert merged(policy, numa, providers) == (hint, True)


def best_effort_table(*machine: int) -> list[tuple[str, list[ProviderHints], TopologyHint, bool]]:
    """(what the case shows, providers, merged hint, restricted admits) from the best-effort table
    (mergeTestCases); ``machine`` is the default mask the kubelet falls back to. Restricted merges the
    same way (it embeds best-effort) but admits only preferred hints."""
    return [
        ("equal pairs of masks: the numerically lower", [one(r1=[H(0, 1), H(0, 2)]), one(r2=[H(0, 1), H(0, 2)])],
         H(0, 1), True),
        ("no providers: any node, preferred", [], H(*machine), True),
        ("an empty hint map: any node, preferred", [{}], H(*machine), True),
        ("a nil hint list: any node, preferred", [one(r=None)], H(*machine), True),
        ("an empty hint list: cannot be satisfied", [one(r=[])], F(*machine), False),
        ("a preferred nil hint", [one(r=[NIL_T])], H(*machine), True),
        ("a non-preferred nil hint", [one(r=[NIL_F])], F(*machine), False),
        ("no common node: the whole machine, not preferred", [one(r1=[H(0)]), one(r2=[H(1)])], F(*machine), False),
        ("same node, one side not preferred, node 0", [one(r1=[H(0)]), one(r2=[F(0)])], F(0), False),
        ("same node, one side not preferred, node 1", [one(r1=[H(1)]), one(r2=[F(1)])], F(1), False),
        ("different preferred masks merge to a non-preferred one, node 0", [one(r1=[H(0)]), one(r2=[H(0, 1)])],
         F(0), False),
        ("different preferred masks merge to a non-preferred one, node 1", [one(r1=[H(1)]), one(r2=[H(0, 1)])],
         F(1), False),
        ("two choices against one wide non-preferred", [one(r1=[H(0), H(1)]), one(r2=[F(0, 1)])], F(0), False),
        ("non-preferred: stop at the best count (2)", [one(r1=[F(0, 1, 2, 3), F(0, 1)]), one(r2=[F(0, 1)])],
         F(0, 1), False),
        ("non-preferred: any mask of the best count", [one(r1=[F(0, 1, 2, 3), F(0, 1)]), one(r2=[F(0, 3)])],
         F(0, 3), False),
        ("non-preferred: the merge that reaches the count", [one(r1=[F(0, 1, 2, 3), F(0, 1)]), one(r2=[F(1, 2)])],
         F(1, 2), False),
        ("non-preferred: the merge that reaches the count, upper pair", [one(r1=[F(0, 1, 2, 3), F(0, 1)]),
         one(r2=[F(2, 3)])], F(2, 3), False),
    ]  # fmt: skip


#: Two merges reach the best count (2): without prefer-closest-numa-nodes the numerically lower wins
#: (mergeTestCasesNoPolicies); with it, the pair at the shorter distance (mergeTestCasesClosestNUMA).
TWO_AT_THE_COUNT = [one(r1=[F(0, 1, 2, 3), F(0, 1)]), one(r2=[F(1, 2), F(2, 3)])]
SEVERAL_AT_THE_COUNT = [one(r1=[F(0, 1, 2, 3), F(0, 1)]), one(r2=[F(1, 2, 3), F(1, 2), F(1, 3), F(2, 3)])]

BEST_EFFORT_TABLE = [
    *best_effort_table(0, 1, 2, 3),
    ("non-preferred: the lower of two merges at the count", TWO_AT_THE_COUNT, F(1, 2), False),
    ("non-preferred: the lowest of several merges at the count", SEVERAL_AT_THE_COUNT, F(1, 2), False),
]

# commonNUMAInfoEightNodes: two groups of four, 30 apart; inside a group 0-1 and 2-3 are 11 apart,
# the other pairs 12 (row 7 says 13 to node 6, which no case below reaches).
EIGHT = NUMAInfo(
    tuple(range(8)),
    {
        0: [10, 11, 12, 12, 30, 30, 30, 30],
        1: [11, 10, 12, 12, 30, 30, 30, 30],
        2: [12, 12, 10, 11, 30, 30, 30, 30],
        3: [12, 12, 11, 10, 30, 30, 30, 30],
        4: [30, 30, 30, 30, 10, 11, 12, 12],
        5: [30, 30, 30, 30, 11, 10, 12, 12],
        6: [30, 30, 30, 30, 12, 12, 10, 11],
        7: [30, 30, 30, 30, 12, 12, 13, 10],
    },
)
CLOSEST_TABLE = [
    *best_effort_table(*range(8)),
    ("closest: the pair at distance 12 over the pair at 30", [one(r1=[H(0, 4), H(0, 2)]), one(r2=[H(0, 4), H(0, 2)])],
     H(0, 2), True),
    ("closest: a single node stays narrower than a close pair", [one(r1=[H(4), H(0, 2)]), one(r2=[H(4), H(0, 2)])],
     H(4), True),
    ("closest: of two merges at the count, the closer pair", TWO_AT_THE_COUNT, F(2, 3), False),
    ("closest: of several merges at the count, the closest pair", SEVERAL_AT_THE_COUNT, F(2, 3), False),
]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "providers", "hint", "restricted_admits"), BEST_EFFORT_TABLE, ids=[c[0] for c in BEST_EFFORT_TABLE]
)
def test_best_effort_and_restricted_table(case, providers, hint, restricted_admits):
    assert merged(BEST_EFFORT, FOUR, providers) == (hint, True)
    assert merged(RESTRICTED, FOUR, providers) == (hint, restricted_admits)


@pytest.mark.parametrize(("case", "providers", "hint"), COMMON, ids=[c[0] for c in COMMON])
def test_common_table_with_prefer_closest_numa_on_eight_nodes(case, providers, hint):
    closest = TopologyManagerOptions(prefer_closest_numa=True)
    assert policy_for(BEST_EFFORT, EIGHT, closest).merge(providers) == (hint, True)


@pytest.mark.parametrize(
    ("case", "providers", "hint", "restricted_admits"), CLOSEST_TABLE, ids=[c[0] for c in CLOSEST_TABLE]
)
def test_prefer_closest_numa_table_on_eight_nodes(case, providers, hint, restricted_admits):
    """TestPolicyBestEffortMergeClosestNUMA and its restricted twin."""
    closest = TopologyManagerOptions(prefer_closest_numa=True)
    assert policy_for(BEST_EFFORT, EIGHT, closest).merge(providers) == (hint, True)
    assert policy_for(RESTRICTED, EIGHT, closest).merge(providers) == (hint, restricted_admits)


# (what the case shows, providers, stored hint, admitted) from the single-numa-node table on two
# nodes: a merge that spans the machine is stored as nil. Admission as TestPolicySingleNumaNodeCanAdmitPodResult
# states it: a non-preferred hint is refused.
SINGLE_NUMA_TABLE = [
    ("no providers", [], NIL_T, True),
    ("an empty hint map", [{}], NIL_T, True),
    ("a nil hint list", [one(r=None)], NIL_T, True),
    ("an empty hint list", [one(r=[])], NIL_F, False),
    ("a preferred nil hint", [one(r=[NIL_T])], NIL_T, True),
    ("a non-preferred nil hint", [one(r=[NIL_F])], NIL_F, False),
    ("no common node", [one(r1=[H(0)]), one(r2=[H(1)])], NIL_F, False),
    ("same node, one side not preferred, node 0", [one(r1=[H(0)]), one(r2=[F(0)])], NIL_F, False),
    ("same node, one side not preferred, node 1", [one(r1=[H(1)]), one(r2=[F(1)])], NIL_F, False),
    ("two choices against one wide non-preferred", [one(r1=[H(0), H(1)]), one(r2=[F(0, 1)])], NIL_F, False),
    ("a preferred two-node hint is filtered out", [one(r1=[H(0, 1)], r2=[H(0), H(1), F(0, 1)])], NIL_F, False),
    ("a nil provider next to single-node choices", [one(r1=[H(0), H(1), F(0, 1)]), None], H(0), True),
]


@pytest.mark.parametrize(
    ("case", "providers", "hint", "admitted"), SINGLE_NUMA_TABLE, ids=[c[0] for c in SINGLE_NUMA_TABLE]
)
def test_single_numa_node_table(case, providers, hint, admitted):
    assert merged(SINGLE_NUMA_NODE, TWO, providers) == (hint, admitted)


def test_none_policy_admits_without_affinity():
    # by hand: the none policy never merges, whatever the providers say
    assert merged(TOPOLOGY_NONE, TWO, [one(r=[])]) == (NIL_F, True)
    assert merged(TOPOLOGY_NONE, TWO, [one(r1=[H(0)]), one(r2=[H(1)])]) == (NIL_F, True)


def test_non_preferred_merge_climbs_to_the_best_count():
    # by hand, four nodes. Lists: cpu [{0,1,2}], gpu [{0}, {1,2,3}], all non-preferred. The best
    # non-preferred count is max(3, 1) = 3. Permutations: {0,1,2}&{0} = {0} (1 node) and
    # {0,1,2}&{1,2,3} = {1,2} (2 nodes). Below the count, the wider one is closer: {1,2}.
    providers = [one(cpu=[F(0, 1, 2)]), one(gpu=[F(0), F(1, 2, 3)])]
    assert merged(BEST_EFFORT, FOUR, providers) == (F(1, 2), True)
    assert merged(RESTRICTED, FOUR, providers) == (F(1, 2), False)
    # single-numa-node drops every non-preferred hint: both lists are empty, so nothing merges and the
    # machine-wide default is stored as nil
    assert merged(SINGLE_NUMA_NODE, FOUR, providers) == (NIL_F, False)


def test_prefer_closest_numa_picks_the_nearer_pair():
    # by hand, four nodes where 0 is near 2 and 1 near 3. {0,1}: (10+20+20+10)/4 = 15;
    # {0,2}: (10+11+11+10)/4 = 10.5. Without the option equal counts fall back to the lower mask.
    rows = {0: [10, 20, 11, 20], 1: [20, 10, 20, 11], 2: [11, 20, 10, 20], 3: [20, 11, 20, 10]}
    providers = [one(cpu=[H(0, 1), H(0, 2)])]
    closest = TopologyManagerOptions(prefer_closest_numa=True)
    assert policy_for(BEST_EFFORT, NUMAInfo((0, 1, 2, 3), rows)).merge(providers) == (H(0, 1), True)
    assert policy_for(BEST_EFFORT, NUMAInfo((0, 1, 2, 3), rows), closest).merge(providers) == (H(0, 2), True)
    assert policy_for(RESTRICTED, NUMAInfo((0, 1, 2, 3), rows), closest).merge(providers) == (H(0, 2), True)
    # single-numa-node ignores the option: both hints span two nodes and are filtered out
    assert policy_for(SINGLE_NUMA_NODE, NUMAInfo((0, 1, 2, 3), rows), closest).merge(providers) == (NIL_F, False)


def test_policy_names_and_alignment():
    names = {p: policy_for(p, TWO).name for p in (TOPOLOGY_NONE, BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE)}
    assert names == {"none": "none", "best-effort": "best-effort", "restricted": "restricted",
                     "single-numa-node": "single-numa-node"}  # fmt: skip
    aligned = [p for p in names if policy_for(p, TWO).aligns_single_numa]
    assert aligned == ["single-numa-node"]


# ---------------------------------------------------------------- a literal reference fold

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


def _ref_lists(providers):
    """The kubelet's filterProvidersHints, restated: a nil answer or nil list means any node is fine,
    an empty list means the resource cannot be satisfied."""
    out = []
    for provider in providers:
        if not provider:
            out.append([NIL_T])
            continue
        for hints in provider.values():
            out.append([NIL_T] if hints is None else [NIL_F] if hints == [] else list(hints))
    return out


def _ref_narrower(a: int, b: int) -> bool:
    """bitmask IsNarrowerThan: fewer bits, or as many bits and a lower value."""
    return a.bit_count() < b.bit_count() or (a.bit_count() == b.bit_count() and a < b)


def _ref_average(rows, mask: int) -> float:
    nodes = [i for i in range(64) if mask >> i & 1]
    return sum(float(rows[i][j]) for i in nodes for j in nodes) / (len(nodes) ** 2)


def _ref_fitter(current: tuple[int, bool], candidate: tuple[int, bool], rows) -> tuple[int, bool]:
    """The mask comparison: narrowest, or with prefer-closest-numa-nodes the lowest average distance
    among masks of equal size (ties again by narrowness)."""
    cur, cand = current[0], candidate[0]
    if rows is not None and cur.bit_count() == cand.bit_count():
        dc, dn = _ref_average(rows, cur), _ref_average(rows, cand)
        if dc != dn:
            return candidate if dn < dc else current
    return candidate if _ref_narrower(cand, cur) else current


def _ref_pick(current, candidate, count: int, rows):
    """HintMerger.compare as the kubelet's comments lay it out, case by case."""
    if current is None:
        return candidate
    if current[1] != candidate[1]:
        return candidate if candidate[1] else current
    if current[1]:
        return _ref_fitter(current, candidate, rows)
    c, n = current[0].bit_count(), candidate[0].bit_count()
    if c > count:  # (1) above the count: anything fitter
        return _ref_fitter(current, candidate, rows)
    if c == count:  # (2) at the count: only a fitter mask of the same count
        return _ref_fitter(current, candidate, rows) if n == count else current
    if n > count:  # (3a)
        return current
    if n == count:  # (3b)
        return candidate
    if n != c:  # (3ca), (3cb): climb towards the count
        return candidate if n > c else current
    return _ref_fitter(current, candidate, rows)  # (3cc)


def reference_merge(lists, nodes, rows=None) -> TopologyHint:
    """Every permutation in nested-loop order, merged and folded with ``_ref_pick``."""
    machine = sum(1 << n for n in nodes)
    count = max((min(h.affinity.bit_count() for h in hs if h.affinity is not None)
                 for hs in lists if any(h.affinity is not None for h in hs)), default=0)  # fmt: skip
    best = None
    for perm in itertools.product(*lists):
        masks = [h.affinity for h in perm if h.affinity is not None]
        mask = machine
        for m in masks:
            mask &= m
        preferred = all(h.preferred for h in perm) and all(m == masks[0] for m in masks)
        if mask:
            best = _ref_pick(best, (mask, preferred), count, rows)
    return TopologyHint(machine, False) if best is None else TopologyHint(*best)


def test_reference_merge_agrees_with_the_tables():
    """The reference is itself checked against the kubelet's cases before it judges the code."""
    for _, providers, hint, _ in BEST_EFFORT_TABLE:
        assert reference_merge(_ref_lists(providers), FOUR.nodes) == hint
    for _, providers, hint in COMMON:
        assert reference_merge(_ref_lists(providers), FOUR.nodes) == hint
    for _, providers, hint, _ in CLOSEST_TABLE:
        assert reference_merge(_ref_lists(providers), EIGHT.nodes, EIGHT.distances) == hint


@settings(max_examples=300, deadline=None)
@given(machines_and_providers(), st.booleans())
def test_merge_equals_literal_permutation_fold(data, prefer_closest):
    nodes, providers, rows = data
    numa = NUMAInfo(nodes, rows)
    expected = reference_merge(_ref_lists(providers), nodes, rows if prefer_closest else None)
    assert merge_lists(filter_provider_hints(providers), numa, prefer_closest=prefer_closest) == expected


@settings(max_examples=200, deadline=None)
@given(machines_and_providers())
def test_restricted_admits_exactly_when_a_preferred_merge_exists(data):
    nodes, providers, _ = data
    expected = reference_merge(_ref_lists(providers), nodes)
    assert merged(RESTRICTED, NUMAInfo(nodes), providers) == (expected, expected.preferred)
    assert merged(BEST_EFFORT, NUMAInfo(nodes), providers) == (expected, True)


@settings(max_examples=200, deadline=None)
@given(machines_and_providers())
def test_single_numa_node_against_the_reference(data):
    nodes, providers, _ = data
    single = [[h for h in hs if h.preferred and (h.affinity is None or h.affinity.bit_count() == 1)]
              for hs in _ref_lists(providers)]  # fmt: skip
    best = reference_merge(single, nodes)
    stored = TopologyHint(None, best.preferred) if best.affinity == sum(1 << n for n in nodes) else best
    hint, admit = merged(SINGLE_NUMA_NODE, NUMAInfo(nodes), providers)
    assert (hint, admit) == (stored, stored.preferred)
    assert hint.affinity is None or hint.affinity.bit_count() == 1


@settings(max_examples=200, deadline=None)
@given(machines_and_providers(), st.sampled_from([BEST_EFFORT, RESTRICTED, SINGLE_NUMA_NODE]), st.randoms())
def test_merge_independent_of_provider_and_hint_order(data, policy, rnd):
    nodes, providers, rows = data
    tm = policy_for(policy, NUMAInfo(nodes, rows), TopologyManagerOptions(prefer_closest_numa=True))
    shuffled = [None if p is None else dict(rnd.sample(list(p.items()), len(p))) for p in providers]
    shuffled = [
        p if p is None else {k: None if v is None else rnd.sample(v, len(v)) for k, v in p.items()} for p in shuffled
    ]
    rnd.shuffle(shuffled)
    assert tm.merge(providers) == tm.merge(shuffled)
