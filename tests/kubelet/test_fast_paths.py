"""The kubelet port's fast paths give what the plain loops they stand for give."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from tmnb.errors import InputError
from tmnb.kubelet.memorymanager.hints import best_hint, calculate_hints
from tmnb.kubelet.memorymanager.policy_static import MemoryStaticPolicy
from tmnb.kubelet.pod import Container, Pod
from tmnb.kubelet.topologymanager.bitmask import has_mask, iterate_masks, mask_of, masks_reaching, subset_sums
from tmnb.kubelet.topologymanager.hints import TopologyHint, hint_objects, sized_hints

GI = 1 << 30


def _plain_sums(nodes: list[int], values: dict[int, int]) -> dict[int, int]:
    sums = {0: 0}
    for node in nodes:
        sums.update({mask | 1 << node: total + values[node] for mask, total in list(sums.items())})
    return sums


@pytest.mark.parametrize("sparse", [False, True])
def test_subset_sums_either_form_reads_like_the_dict(sparse: bool) -> None:
    rng = random.Random(sparse)
    for _ in range(200):
        k = rng.randint(0, 6)
        nodes = sorted(rng.sample(range(10), k)) if sparse else list(range(k))
        values = {n: rng.randint(0, 5) for n in nodes}
        plain, fast = _plain_sums(nodes, values), subset_sums(nodes, values)
        for mask in range(1 << 10):
            assert has_mask(fast, mask) == (mask in plain)
            if mask in plain:
                assert fast[mask] == plain[mask]
        for size in range(-1, 12):
            assert masks_reaching(fast, size) == {m for m, v in plain.items() if v >= size}


def test_iterate_masks_as_sums_of_bits_matches_mask_of_and_refuses_the_same_ids() -> None:
    for bits in ([0, 1, 2, 3], [3, 1, 7], [2, 2, 5], []):
        plain = tuple(mask_of(c) for size in range(1, len(bits) + 1) for c in combinations(bits, size))
        assert iterate_masks(bits) == plain
    with pytest.raises(InputError, match="64"):
        iterate_masks([1, 64])


def test_sized_hints_is_the_comprehension() -> None:
    nodes = (0, 1, 2, 3)
    preferred, other = hint_objects(nodes)
    rng = random.Random(3)
    masks = iterate_masks(nodes)
    for _ in range(200):
        found = [m for m in masks if rng.random() < 0.5]
        size = rng.randint(0, 5)
        assert sized_hints(nodes, found, size) == [preferred[m] if m.bit_count() == size else other[m] for m in found]


def is_narrower(a: int, b: int) -> bool:
    """The kubelet's ``bitmask.IsNarrowerThan``: fewer nodes wins; equal counts compare the masks as
    unsigned numbers (not lexicographically)."""
    return a < b if a.bit_count() == b.bit_count() else a.bit_count() < b.bit_count()


def test_default_hint_scan_narrower_is_count_then_numeric() -> None:
    def best(*masks: int) -> int | None:
        return best_hint([TopologyHint(m, True) for m in masks]).affinity

    assert best(mask_of([0, 3]), mask_of([1, 2])) == mask_of([1, 2])  # 6 < 9 although {0,3} has the lower node
    assert best(mask_of([1, 2]), mask_of([0, 3])) == mask_of([1, 2])
    assert best(mask_of([0, 1]), mask_of([7])) == mask_of([7])


def test_default_hint_scan_is_the_kubelets() -> None:
    def plain(hints: list[TopologyHint]) -> TopologyHint:
        best = TopologyHint(None, False)
        for h in hints:
            if (
                best.affinity is None
                or (h.preferred and not best.preferred)
                or (h.preferred == best.preferred and is_narrower(h.affinity, best.affinity))  # type: ignore[arg-type]
            ):
                best = h
        return best

    rng = random.Random(5)
    for _ in range(300):
        hints = [TopologyHint(rng.randint(1, 15), rng.random() < 0.5) for _ in range(rng.randint(0, 8))]
        assert best_hint(hints) == plain(hints)


def test_memory_hints_follow_the_state_through_allocation_and_release() -> None:
    policy = MemoryStaticPolicy({0: 8 * GI, 1: 8 * GI}, reserved={0: {"memory": GI}})
    r = {"cpu": "1", "memory": "4Gi"}
    pods = [Pod(uid=f"u{i}", name=f"p{i}", containers=(Container("c", r, r),)) for i in range(3)]
    for pod in pods:
        c = pod.containers[0]
        assert policy.get_topology_hints(pod, c) == calculate_hints(policy.state, {"memory": 4 * GI}, {})
        policy.allocate(pod, c, TopologyHint(None, False))
    policy.remove_container("u0", "c")
    c = pods[0].containers[0]
    assert policy.get_topology_hints(pods[0], c) == calculate_hints(policy.state, {"memory": 4 * GI}, {})
    assert policy.requested(c) == {"memory": 4 * GI} and policy.requested(c) is not policy.requested(c)
