"""The registries of snapshot sources and node-file transports: what the help texts list, what a
wrong name is told, and the one check of parameters that apply to a single source."""

from __future__ import annotations

import pytest

from tmnb.cli.main import main
from tmnb.errors import InputError
from tmnb.sources.node_files import NODE_FILES, node_files_kind
from tmnb.sources.resolve import SOURCES, check_options, check_source, open_snapshot, source_kind


@pytest.mark.parametrize(
    "argv", [["snapshot"], ["whatif"], ["rollout", "plan"], ["sandbox", "up"]], ids=lambda a: " ".join(a)
)
def test_every_source_is_in_the_help(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main([*argv, "--help"])
    text = " ".join(capsys.readouterr().out.split())
    for kind in SOURCES:
        assert kind.describe().split(" (")[0] in text, kind


def test_rollout_help_lists_every_node_files_kind(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["rollout", "plan", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert all(f"'{kind.word}" in text for kind in NODE_FILES)


@pytest.mark.parametrize(
    ("source", "form"),
    [("sample", "sample"), ("sample-after", "sample-after"), ("live", "live"), ("node-root:/x", "node-root:DIR"),
     ("fleet.json", None), ("liveish", None)],
)  # fmt: skip
def test_each_name_has_one_kind(source: str, form: str | None) -> None:
    assert source_kind(source).form == form


def test_an_unknown_source_is_told_every_kind() -> None:
    with pytest.raises(InputError) as err:
        check_source("elsewhere")
    assert all(kind.describe() in err.value.message for kind in SOURCES)


@pytest.mark.parametrize(
    ("source", "given", "flags", "message"),
    [
        ("sample", {"node_files": "ssh"}, False, "node_files: node_files applies to source='live' only"),
        ("fleet.json", {"context": "c", "kubeconfig": "k"}, True,
         "--source: --context and --kubeconfig apply to --source live only"),
        ("live", {"node_name": "w1"}, True, "--source: --node-name applies to --source node-root:DIR only"),
        ("sample", {"node_name": ""}, False, "node_name: node_name applies to source='node-root:DIR' only"),
    ],
)  # fmt: skip
def test_parameters_of_one_source_are_refused_with_another(
    source: str, given: dict[str, str], flags: bool, message: str
) -> None:
    with pytest.raises(InputError) as err:
        check_options(source, given, flags=flags)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("source", "given"),
    [("live", {"context": "c", "kubeconfig": "k", "node_files": "pod"}), ("node-root:/x", {"node_name": "w1"}),
     ("sample", {"context": None, "node_name": None})],
)  # fmt: skip
def test_parameters_of_the_source_itself_pass(source: str, given: dict[str, str | None]) -> None:
    check_options(source, given)


def test_cli_names_the_flags_that_do_not_apply(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["snapshot", "--source", "sample", "--node-name", "w1", "--out", "x.json"]) == 2
    assert capsys.readouterr().err == "tmnb: error: --source: --node-name applies to --source node-root:DIR only\n"


@pytest.mark.parametrize(
    ("spec", "word", "arg"),
    [("ssh", "ssh", ""), ("ssh:core", "ssh", "core"), ("pod", "pod", ""), ("dir:/srv/nodes", "dir", "/srv/nodes")],
)
def test_node_files_specs(spec: str, word: str, arg: str) -> None:
    kind, got = node_files_kind(spec)
    assert (kind.word, got) == (word, arg)


@pytest.mark.parametrize("spec", ["nfs", "dir", "dir:", "pod:x", "ssh-core"])
def test_an_unknown_node_files_spec_is_refused_before_the_cluster_is_read(spec: str, tmp_path) -> None:
    # the kubeconfig does not exist: reading the cluster first would fail on it instead
    with pytest.raises(InputError) as err:
        open_snapshot("live", node_files=spec, kubeconfig=str(tmp_path / "none"))
    assert err.value.message.startswith(f"unknown node_files {spec!r}: expected '' (API only), 'ssh' or 'ssh:USER'")
    assert all(kind.describe() in err.value.message for kind in NODE_FILES)


def test_a_source_narrowed_to_one_node_keeps_its_pods_and_events() -> None:
    """gpu-h100-02 of the sample (docs/sample-fleet.md): its own pods and events, nothing of the others."""
    snap = open_snapshot("sample", node="gpu-h100-02")
    assert [n.name for n in snap.nodes] == ["gpu-h100-02"]
    assert snap.pods and {p.node for p in snap.pods} == {"gpu-h100-02"}
    assert all(e.node in (None, "gpu-h100-02") for e in snap.events)


@pytest.mark.parametrize(
    ("node", "message"),
    [
        ("gpu-h100-2", "no node named 'gpu-h100-2'; did you mean gpu-h100-02, gpu-h100-01?"),
        ("nowhere", "no node named 'nowhere' among the 14 nodes read"),
        ("gen-icx-01", "no node named 'gen-icx-01'"),  # the selector left it out
    ],
)
def test_a_node_the_source_lacks_is_an_error(node: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        open_snapshot("sample", "tmnb.dev/pool=gpu" if node == "gen-icx-01" else None, node=node)
    assert err.value.where == "node" and err.value.message.startswith(message)
