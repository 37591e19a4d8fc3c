import pytest

from notebook_factory import write_notebook
from tmnb.cli.run.params import declared_parameters, typed_parameters
from tmnb.errors import InputError

PARAMS = """\
node: str = "worker-1"
count: int = 3
ratio: float = 5.0
dry_run: bool = True
nodes: list = []
targets: dict = {}
since: str | None = None
untyped = 7
"""


@pytest.fixture
def nb(tmp_path):
    return write_notebook(tmp_path / "p.ipynb", PARAMS, "print(node)")


@pytest.mark.parametrize(
    ("name", "raw", "expected"),
    [
        ("node", "007", "007"),  # papermill -p would make this the int 7
        ("node", "true", "true"),
        ("count", "007", 7),
        ("ratio", "7", 7.0),
        ("dry_run", "false", False),  # papermill -p would pass the string "false"
        ("dry_run", "YES", True),
        ("nodes", '["a", "b"]', ["a", "b"]),
        ("nodes", "[a, b]", ["a", "b"]),
        ("targets", "{topologyManagerPolicy: restricted}", {"topologyManagerPolicy": "restricted"}),
        ("since", "none", None),
        ("since", "2026-12-01", "2026-12-01"),
        ("untyped", "8", 8),
    ],
)
def test_typed_against_parameters_cell(nb, name, raw, expected):
    value = typed_parameters(nb, [(name, raw)])[name]
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize(
    ("name", "raw", "message"),
    [
        ("count", "three", "expected int"),
        ("dry_run", "maybe", "expected true or false"),
        ("nodes", "{a: 1}", "expected a list"),
        ("nope", "1", "unknown parameter 'nope'"),
    ],
)
def test_bad_values_name_the_parameter(nb, name, raw, message):
    with pytest.raises(InputError, match=message):
        typed_parameters(nb, [(name, raw)])


def test_exactly_one_parameters_cell(tmp_path):
    import nbformat

    path = write_notebook(tmp_path / "two.ipynb", "a = 1", "b = 2")
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].metadata["tags"] = ["parameters"]
    nbformat.write(nb, path)
    with pytest.raises(InputError, match="found 2"):
        declared_parameters(path)
