import gzip
import json

import pytest

from factories import node, pod, snapshot
from tmnb.errors import InputError, SnapshotError
from tmnb.snapshot import SCHEMA_ID, digest, from_dict, json_schema, load, save, to_dict
from tmnb.snapshot.io import manifest_path


def sample_doc():
    return to_dict(snapshot([node("a"), node("b")], [pod("p1", "a"), pod("p2", "b", cpu="500m", qos="Burstable")]))


@pytest.mark.parametrize("name", ["snap.json", "snap.json.gz"])
def test_round_trip(tmp_path, name):
    snap = snapshot([node("a")], [pod("p1", "a")])
    manifest = save(snap, tmp_path / name)
    again = load(tmp_path / name)
    assert again == snap
    assert manifest["sha256"] == digest(snap)
    assert json.loads(manifest_path(tmp_path / name).read_text())["nodes"] == 1


def test_gzip_and_plain_share_the_canonical_digest(tmp_path):
    snap = snapshot()
    a, b = save(snap, tmp_path / "x.json"), save(snap, tmp_path / "x.json.gz")
    assert a["sha256"] == b["sha256"]
    assert a["file_sha256"] != b["file_sha256"]


def test_schema_field_is_written():
    assert sample_doc()["schema"] == SCHEMA_ID


def test_tampered_file_fails_manifest_check(tmp_path):
    path = tmp_path / "s.json"
    save(snapshot(), path)
    doc = json.loads(path.read_text())
    doc["nodes"][0]["name"] = "edited"
    path.write_text(json.dumps(doc))
    with pytest.raises(SnapshotError, match="does not match its manifest"):
        load(path)


def test_truncated_json_names_file_and_line(tmp_path):
    path = tmp_path / "cut.json"
    text = json.dumps(sample_doc(), indent=1)
    path.write_text(text[: len(text) // 2])
    with pytest.raises(SnapshotError) as err:
        load(path)
    assert str(path) in str(err.value)
    assert "truncated" in str(err.value)
    assert err.value.line is not None


def test_truncated_gzip(tmp_path):
    path = tmp_path / "cut.json.gz"
    data = gzip.compress(json.dumps(sample_doc()).encode())
    path.write_bytes(data[: len(data) - 20])
    with pytest.raises(SnapshotError, match="gzip data is truncated or corrupt"):
        load(path)


def test_missing_file():
    with pytest.raises(SnapshotError, match="cannot read snapshot"):
        load("/nonexistent/snap.json")


@pytest.mark.parametrize(
    ("mutate", "path", "expected"),
    [
        (
            lambda d: d["nodes"][0].update(cpus=[{"cpu": -1, "core": 0, "socket": 0, "numa": 0}]),
            "$.nodes[0].cpus[0].cpu",
            "greater than or equal to 0",
        ),
        (lambda d: d["pods"][1].update(qos_class="Gold"), "$.pods[1].qos_class", "'Guaranteed', 'Burstable'"),
        (lambda d: d["nodes"][1]["numa"][0].update(cpus="0-3,x"), "$.nodes[1].numa[0].cpus", "pattern"),
        (lambda d: d["pods"][0].pop("uid"), "$.pods[0].uid", "required"),
        (lambda d: d["nodes"][0].update(colour="blue"), "$.nodes[0].colour", "Unexpected keyword argument"),
        (lambda d: d.update(source={"kind": "live", "token": "REDACTED"}), "$.source.token", "Unexpected"),
    ],
)
def test_validation_reports_json_path(mutate, path, expected):
    doc = sample_doc()
    mutate(doc)
    with pytest.raises(SnapshotError) as err:
        from_dict(doc, source="evidence/snap.json")
    message = str(err.value)
    assert message.startswith(f"evidence/snap.json: {path}: ")
    assert expected in message


def test_newer_schema_is_refused_clearly():
    doc = sample_doc()
    doc["schema"] = "tmnb.snapshot/v2"
    with pytest.raises(SnapshotError, match="upgrade tmnb"):
        from_dict(doc)


def test_not_a_snapshot():
    with pytest.raises(SnapshotError, match=r"\$\.schema"):
        from_dict({"kind": "PodList"})
    with pytest.raises(SnapshotError, match="JSON object"):
        from_dict([1, 2])


def test_published_schema_matches_the_model(root):
    published = json.loads((root / "docs" / "snapshot.schema.json").read_text())
    assert published == json_schema(), "regenerate docs/snapshot.schema.json: python -m tmnb.snapshot.schema"


def test_node_lookup_and_pods_on():
    snap = snapshot([node("a"), node("b")], [pod("p1", "a"), pod("p2", "b")])
    assert snap.node("b").name == "b"
    assert [p.name for p in snap.pods_on("a")] == ["p1"]
    with pytest.raises(InputError, match="no node named 'zzz' in this snapshot \\(nodes: a, b\\)"):
        snap.node("zzz")
