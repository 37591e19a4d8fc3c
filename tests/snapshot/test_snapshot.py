import gzip
import json

import pytest

from bounded import run_bounded
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


def test_a_reindented_file_still_verifies_by_its_canonical_digest(tmp_path):
    path = tmp_path / "s.json"
    save(snapshot([node("a")], [pod("p1", "a")]), path)
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4))  # other bytes, same content
    assert load(path).nodes[0].name == "a"


@pytest.mark.parametrize("name", ["snap.json", "snap.json.gz"])
def test_saving_a_loaded_snapshot_keeps_the_files_bytes(tmp_path, name):
    """The run folder's copy of an unnarrowed input is the input file itself, and its manifest names
    the digest a fresh encoding gives."""
    original = snapshot([node("a"), node("b")], [pod("p1", "a"), pod("p2", "b")])
    save(original, tmp_path / name)
    path = tmp_path / name
    body = path.read_bytes()  # made other bytes of the same content, so the manifest vouches by content
    path.write_bytes(gzip.compress(gzip.decompress(body), 1) if name.endswith(".gz") else body.replace(b"\n", b"\n  "))
    loaded = load(path)
    manifest = save(loaded, tmp_path / "copy" / name)
    assert (tmp_path / "copy" / name).read_bytes() == path.read_bytes()
    assert manifest["sha256"] == digest(original)
    assert load(tmp_path / "copy" / name) == original


def test_a_narrowed_or_changed_snapshot_is_encoded_afresh(tmp_path):
    from tmnb.snapshot.select import select_nodes

    path = tmp_path / "s.json.gz"
    save(snapshot([node("a", labels={"pool": "x"}), node("b")], [pod("p1", "a"), pod("p2", "b")]), path)
    loaded = load(path)
    narrowed = select_nodes(loaded, "pool=x")
    assert save(narrowed, tmp_path / "narrowed.json.gz")["sha256"] == digest(narrowed)
    assert [n.name for n in load(tmp_path / "narrowed.json.gz").nodes] == ["a"]
    save(snapshot([node("c")]), path)  # the input file is replaced after it was read
    assert save(loaded, tmp_path / "later.json.gz")["sha256"] == digest(loaded)
    assert load(tmp_path / "later.json.gz") == loaded


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


# ---------------------------------------------------------------------------------------------
# Hostile files: devices, bombs, numbers no field can hold


def test_dev_zero_is_refused_at_once():
    # Reading /dev/zero to its end never finishes; under a 512 MiB ceiling only an early refusal passes.
    result = run_bounded(
        """
        from tmnb.errors import SnapshotError
        from tmnb.snapshot import load
        try:
            load("/dev/zero")
        except SnapshotError as exc:
            print("refused:", exc)
        """,
        memory=512 << 20,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert "refused: /dev/zero: not a snapshot: it starts with byte 0x00" in result.stdout


def test_cli_whatif_on_dev_zero_exits_with_an_error():
    result = run_bounded(
        """
        import sys
        from tmnb.cli.main import main
        sys.exit(main(["whatif", "--snapshot", "/dev/zero", "--set", "topologyManagerPolicy=restricted"]))
        """,
        memory=1 << 30,
    )
    assert result.returncode == 2, result.stderr[-2000:]
    assert "tmnb: error: /dev/zero: --snapshot: not a snapshot" in result.stderr


def test_oversized_file_is_refused_with_the_cap(tmp_path):
    path = tmp_path / "big.json"
    path.write_text(json.dumps(sample_doc()) + " " * 4096)
    with pytest.raises(SnapshotError, match="larger than 4 KiB"):
        load(path, limit=4096)


def test_gzip_bomb_stops_at_the_cap(tmp_path):
    path = tmp_path / "bomb.json.gz"
    path.write_bytes(gzip.compress(b"{" + b" " * (8 << 20) + b"}"))  # 8 MiB of spaces, a few KiB on disk
    assert path.stat().st_size < 64 << 10
    with pytest.raises(SnapshotError, match="decompresses to more than 1 MiB"):
        load(path, limit=1 << 20)


def test_binary_file_is_not_a_snapshot(tmp_path):
    path = tmp_path / "disk.img"
    path.write_bytes(b"\x7fELF\x02\x01\x01" + bytes(100))
    with pytest.raises(SnapshotError, match="starts with byte 0x7f"):
        load(path)


def _write_raw(tmp_path, text):
    path = tmp_path / "edited.json"
    path.write_text(text)
    return path


def test_huge_integer_is_refused_with_its_path(tmp_path):
    doc = sample_doc()
    doc["nodes"][0]["numa"][0]["memory_total"] = 10**400
    with pytest.raises(SnapshotError) as err:
        load(_write_raw(tmp_path, json.dumps(doc)))
    assert "$.nodes[0].numa[0].memory_total" in str(err.value)
    assert "does not fit in a 64-bit integer" in str(err.value)


def test_integer_of_thousands_of_digits_is_refused_not_a_crash(tmp_path):
    doc = sample_doc()
    doc["nodes"][1]["numa"][0]["memory_total"] = 0
    text = json.dumps(doc).replace('"memory_total": 0', '"memory_total": ' + "9" * 5000, 1)
    with pytest.raises(SnapshotError) as err:
        load(_write_raw(tmp_path, text))
    assert "$.nodes[1].numa[0].memory_total" in str(err.value)
    assert "5000-digit number" in str(err.value)


def test_infinite_float_is_refused(tmp_path):
    doc = sample_doc()
    text = json.dumps(doc).replace('"memory_total": ', '"memory_total": 1e400, "x": ', 1)
    with pytest.raises(SnapshotError, match=r"\$\.nodes\[0\]\.numa\[0\]\.memory_total: .*infinity"):
        load(_write_raw(tmp_path, text))


@pytest.mark.parametrize(
    ("mutate", "path", "expected"),
    [
        (lambda d: d["nodes"][0]["capacity"].update(cpu="-4"), "$.nodes[0].capacity.cpu", "negative quantity"),
        (lambda d: d["nodes"][1]["allocatable"].update(memory="-1Gi"), "$.nodes[1].allocatable.memory", "negative"),
        (lambda d: d["nodes"][0]["capacity"].update(memory="1e400"), "$.nodes[0].capacity.memory", "larger than"),
        (lambda d: d["nodes"][0]["capacity"].update(pods="lots"), "$.nodes[0].capacity.pods", "not a Kubernetes"),
        (
            lambda d: d["pods"][0]["containers"][0]["requests"].update(cpu="-500m"),
            "$.pods[0].containers[0].requests.cpu",
            "negative",
        ),
    ],
)
def test_bad_quantities_are_refused_with_their_path(mutate, path, expected):
    doc = sample_doc()
    mutate(doc)
    with pytest.raises(SnapshotError) as err:
        from_dict(doc, source="snap.json")
    assert str(err.value).startswith(f"snap.json: {path}: ")
    assert expected in str(err.value)
