import pytest

from factories import node, pod, snapshot
from tmnb.errors import InputError
from tmnb.snapshot.select import parse_selector, select_nodes

LABELS = {"pool": "gpu", "zone": "a", "kubernetes.io/hostname": "n1"}


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("", True),
        ("pool=gpu", True),
        ("pool==gpu", True),
        ("pool!=gpu", False),
        ("pool in (cpu, gpu)", True),
        ("pool notin (cpu,gpu)", False),
        ("zone", True),
        ("!zone", False),
        ("pool=gpu,zone=b", False),
        ("kubernetes.io/hostname=n1", True),
        ("missing!=x", True),
    ],
)
def test_selector(selector, expected):
    assert parse_selector(selector)(LABELS) is expected


@pytest.mark.parametrize("bad", ["pool=(gpu", "=x", "pool in gpu"])
def test_bad_selector(bad):
    with pytest.raises(InputError, match="invalid label selector"):
        parse_selector(bad)


def test_select_nodes_keeps_their_pods():
    a = node("a", labels={"pool": "gpu"})
    b = node("b", labels={"pool": "cpu"})
    snap = snapshot([a, b], [pod("p1", "a"), pod("p2", "b"), pod("pending", None)])
    picked = select_nodes(snap, "pool=gpu")
    assert [n.name for n in picked.nodes] == ["a"]
    assert [p.name for p in picked.pods] == ["p1"]
