"""One entry per node and per pod (issue 25, item 2): a snapshot or a PodList that repeats one is
refused naming both entries, not predicted twice onto the same exclusive CPUs."""

from __future__ import annotations

import dataclasses
import json

import pytest

from factories import node, pod, snapshot
from tmnb.cli.main import main
from tmnb.errors import InputError, SnapshotError
from tmnb.snapshot import load, save
from tmnb.sources.kube_objects import pods_from_list
from tmnb.sources.node_render import write_node_root

P0, P1 = pod("p0", "w1"), pod("p1", "w1")


def _saved(tmp_path, nodes, pods):
    path = tmp_path / "s.json"
    save(snapshot(nodes, pods), path)
    return path


def test_a_node_listed_twice_is_refused_naming_both(tmp_path):
    w1 = node("w1")
    with pytest.raises(SnapshotError) as err:
        load(_saved(tmp_path, [w1, node("w2"), w1], []))
    assert str(err.value) == f"{tmp_path / 's.json'}: $.nodes[2]: node 'w1' is listed twice, at $.nodes[0] and here"


@pytest.mark.parametrize(
    ("second", "expected"),
    [
        (P0, "$.pods[2]: pod app/p0 (uid uid-p0) has the uid 'uid-p0' of $.pods[0], app/p0 (uid uid-p0)"),
        (  # one namespace/name with two uids
            dataclasses.replace(P0, uid="uid-other"),
            "$.pods[2]: pod app/p0 (uid uid-other) has the name app/p0 of $.pods[0], app/p0 (uid uid-p0)",
        ),
        (  # one uid with two names
            dataclasses.replace(P1, uid="uid-p0"),
            "$.pods[2]: pod app/p1 (uid uid-p0) has the uid 'uid-p0' of $.pods[0], app/p0 (uid uid-p0)",
        ),
    ],
)
def test_a_pod_listed_twice_in_a_snapshot_is_refused_naming_both(tmp_path, second, expected):
    with pytest.raises(SnapshotError) as err:
        load(_saved(tmp_path, [node("w1")], [P0, P1, second]))
    assert str(err.value) == f"{tmp_path / 's.json'}: {expected}: one pod listed twice"


def _item(name: str, uid: str, namespace: str = "app") -> dict:
    spec = {"nodeName": "w1", "containers": [{"name": "main"}]}
    meta = {"name": name, "namespace": namespace, "uid": uid, "creationTimestamp": "2026-11-30T10:00:00Z"}
    return {"metadata": meta, "spec": spec, "status": {"phase": "Running", "qosClass": "BestEffort"}}


@pytest.mark.parametrize(
    ("items", "expected"),
    [
        ([_item("a", "u1"), _item("b", "u2"), _item("a", "u1")], "$.items[2]: pod app/a (uid u1) has the uid 'u1'"),
        ([_item("a", "u1"), _item("a", "u2")], "$.items[1]: pod app/a (uid u2) has the name app/a of $.items[0]"),
        ([_item("a", "u1"), _item("b", "u1")], "$.items[1]: pod app/b (uid u1) has the uid 'u1' of $.items[0]"),
    ],
)
def test_a_pod_listed_twice_in_a_pods_file_is_refused_naming_both(items, expected):
    with pytest.raises(InputError) as err:
        pods_from_list({"kind": "PodList", "items": items}, source="pods.json")
    assert str(err.value).startswith(f"pods.json: {expected}")


def test_same_name_in_two_namespaces_is_two_pods():
    pods = pods_from_list({"kind": "PodList", "items": [_item("a", "u1"), _item("a", "u2", "other")]}, source="p")
    assert [(p.namespace, p.name) for p in pods] == [("app", "a"), ("other", "a")]


def test_whatif_refuses_a_pods_file_with_one_pod_twice(tmp_path, capsys):
    root = write_node_root(node("w1"), tmp_path / "w1")
    podlist = tmp_path / "pods.json"
    podlist.write_text(json.dumps({"kind": "PodList", "items": [_item("a", "u1"), _item("a", "u1")]}))
    argv = ["whatif", "--node-root", str(root), "--pods", str(podlist), "--set", "topologyManagerPolicy=restricted"]
    assert main(argv) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [f"tmnb: error: {podlist}: $.items[1]: pod app/a (uid u1) has the uid 'u1' of $.items[0], app/a "
                   "(uid u1): one pod listed twice"]  # fmt: skip
