"""The command line with arguments and parameter values of every kind: a usage error or a one-line
``tmnb: error:`` (exit 2), never a traceback. Commands that would reach a cluster, start a server
or execute a notebook are fuzzed up to the point where they would (argument and parameter parsing).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest
from fuzzing import HOSTILE, cli_exit, edited_json, fuzz, quiet, replaced, scratch, survive
from hypothesis import event, example, given
from hypothesis import strategies as st

from factories import busy_snapshot, layered_node
from tmnb.cli.main import _parser
from tmnb.cli.run.params import coerce, declared_parameters
from tmnb.parse.kubelet_fields import FIELD_TYPES
from tmnb.snapshot import save
from tmnb.sources.node_render import write_node_root

pytestmark = pytest.mark.fuzz

CREATED = "2026-01-01T00:00:00Z"
ROOT = Path(__file__).resolve().parents[2]
_TMP = scratch("cli")
SNAP = str(_TMP / "busy.json")
save(busy_snapshot(), SNAP)
NODE_ROOT = str(write_node_root(layered_node(), _TMP / "w1"))
PODLIST = {
    "kind": "PodList",
    "apiVersion": "v1",
    "items": [
        {
            "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}", "creationTimestamp": CREATED},
            "spec": {
                "nodeName": "w1",
                "containers": [{"name": "main", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"},
                                                              "limits": {"cpu": cpu, "memory": "1Gi"}}}],
            },
            "status": {"phase": "Running", "qosClass": "Guaranteed"},
        }
        for name, cpu in (("pg-0", "4"), ("train", "2"))
    ],
}  # fmt: skip


def _options(parser: argparse.ArgumentParser) -> list[str]:
    found: list[str] = []
    for action in parser._actions:
        found += [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            found += list(action.choices) + [o for p in action.choices.values() for o in _options(p)]
    return sorted(set(found))


WORDS = _options(_parser())
VALUES = HOSTILE | st.text(max_size=10) | st.sampled_from(["sample", SNAP, "0", "-5", "1e9", "inf", "nan", "x=y"])


@fuzz
@given(st.lists(st.sampled_from(WORDS) | VALUES, max_size=8))
def test_any_arguments_parse_or_are_a_usage_error(argv: list[str]) -> None:
    with quiet():
        try:
            survive(_parser().parse_args, argv)
        except SystemExit as done:
            assert done.code in (0, 2), argv


SET_FIELDS = st.sampled_from(sorted(FIELD_TYPES)) | st.text(max_size=8)
SET_VALUES = VALUES | st.sampled_from(
    ["none", "static", "restricted", "single-numa-node", "pod", "{a: b}", "[1, 2]", "{prefer-closest-numa-nodes: true}",
     "{max-allowable-numa-nodes: '99999999999999999999'}", "0-3", "'", "{", "!!binary x"]
)  # fmt: skip


@fuzz
@given(
    st.lists(st.tuples(SET_FIELDS, SET_VALUES), min_size=1, max_size=3),
    st.sampled_from(["drain", "restart"]),
    st.sampled_from(["whatif", "rollout"]),
)
@example([("cpuManagerPolicy", "-1")], "drain", "rollout")  # a YAML integer reached lint: AttributeError
def test_settings_are_predicted_or_refused_in_one_line(
    settings: list[tuple[str, str]], mode: str, command: str
) -> None:
    sets = [a for field, value in settings for a in ("--set", f"{field}={value}")]
    if command == "whatif":
        argv = ["whatif", "--snapshot", SNAP, "--mode", mode, "--format", "json", *sets]
    else:
        argv = ["rollout", "plan", "--change-id", "fuzz", "--state-dir", str(_TMP / "r"), "--source", SNAP, *sets]
    with quiet() as err:
        code = survive(cli_exit, argv)
    event(f"exit {code}")
    assert code in (0, 2, 3), (argv, code, err.getvalue())
    if code == 2:
        assert err.getvalue().startswith(("tmnb: error: ", "usage: ")), err.getvalue()


LONG = "9" * 400  # longer than a file name may be
OUTS = st.sampled_from(
    [str(_TMP / "out.json"), str(_TMP), str(_TMP / f"{LONG}.json"), "/proc/no/out.json", str(_TMP / "o\0.json")]
)


@fuzz
@given(VALUES | st.builds(lambda v: f"node-root:{v}", VALUES), st.text(max_size=6) | st.none(), OUTS)
@example(LONG, None, str(_TMP / "out.json"))  # Path.exists raised ENAMETOOLONG
@example(f"node-root:{LONG}", None, str(_TMP / "out.json"))  # as did is_dir
@example("sample", None, str(_TMP))  # --out a directory: IsADirectoryError
@example("node-root:\0", None, str(_TMP / "out.json"))  # ValueError: embedded null byte
@example("sample", None, str(_TMP / "o\0.json"))
def test_snapshot_sources_are_written_or_refused_in_one_line(source: str, node_name: str | None, out: str) -> None:
    if source == "live":  # reaches for a cluster
        return
    argv = ["snapshot", "--source", source, "--out", out, "--force"]
    argv += ["--node-name", node_name] if node_name is not None else []
    with quiet() as err:
        code = survive(cli_exit, argv)
    event(f"exit {code}")
    assert code in (0, 2), (argv, code, err.getvalue())
    if code == 2:
        assert err.getvalue().startswith(("tmnb: error: ", "usage: ")), err.getvalue()


REQUEST = ("items", 0, "spec", "containers", 0, "resources", "requests", "cpu")


@fuzz
@given(edited_json(PODLIST))
@example(replaced(PODLIST, REQUEST, None))  # str(None) became the quantity "None": a pydantic ValidationError traceback
@example(replaced(PODLIST, REQUEST, []))
def test_pod_lists_are_predicted_or_refused_in_one_line(pods: dict[str, object]) -> None:
    path = _TMP / "pods.json"
    path.write_text(json.dumps(pods))
    argv = ["whatif", "--node-root", NODE_ROOT, "--pods", str(path), "--set", "topologyManagerPolicy=restricted"]
    with quiet() as err:
        code = survive(cli_exit, [*argv, "--format", "json"])
    event(f"exit {code}")
    assert code in (0, 2, 3), (code, err.getvalue())
    if code == 2:
        assert err.getvalue().startswith("tmnb: error: "), err.getvalue()


@fuzz
@given(VALUES | OUTS)
@example(str(_TMP / "p\0.json"))  # open() raised ValueError: embedded null byte
def test_pod_list_paths_are_read_or_refused_in_one_line(path: str) -> None:
    argv = ["whatif", "--node-root", NODE_ROOT, "--pods", path, "--set", "topologyManagerPolicy=restricted"]
    with quiet() as err:
        code = survive(cli_exit, [*argv, "--format", "json"])
    assert code in (0, 2, 3), (code, err.getvalue())


NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
DECLARED = [(nb.name, name, spec) for nb in NOTEBOOKS for name, spec in declared_parameters(nb).items()]


@fuzz
@given(st.sampled_from(DECLARED), VALUES | st.sampled_from(["[a, b]", "{a: 1}", "true", "None", "~", "007", "1.5"]))
def test_run_parameter_values_are_typed_or_refused(declared: tuple[str, str, dict[str, object]], raw: str) -> None:
    notebook, name, spec = declared
    survive(coerce, name, raw, spec, source=notebook)


NOTEBOOK_JSON = json.loads((ROOT / "notebooks" / "03-readiness.ipynb").read_text())


@fuzz
@given(edited_json(NOTEBOOK_JSON))
@example(replaced(NOTEBOOK_JSON, ("cells", 0, "source"), [None]))  # nbformat's reader raised TypeError
@example(replaced(NOTEBOOK_JSON, ("cells", 0, "metadata"), None))
def test_notebooks_of_any_shape_are_refused_before_running(notebook: dict[str, object]) -> None:
    path = _TMP / "nb.ipynb"
    path.write_text(json.dumps(notebook))
    argv = ["run", str(path), "-p", "zz_not_declared", "1", "--out", str(_TMP / "run")]  # refused before papermill
    with quiet() as err:
        code = survive(cli_exit, argv)
    assert code == 2, (code, err.getvalue())
    assert err.getvalue().startswith("tmnb: error: "), err.getvalue()
