"""Cells read as a person writes them, every row reaches the HTML, and each table has its CSV."""

import pandas as pd
import pytest

from tmnb.report import tables


@pytest.mark.parametrize(
    ("value", "column", "shown"),
    [
        (None, "", ""),
        (pd.NA, "", ""),
        (float("nan"), "", ""),
        ({"kube-proxy": None}, "numa", "any"),
        ({"app": [0, 1], "sidecar": None}, "numa", "app: 0,1; sidecar: any"),
        ([0, 1, 2, 3, 8], "cpuset", "0-3,8"),
        ([1, 0], "numa", "0,1"),
        (3.0e1, "", "30"),
        (137439000000.0, "", "137,439,000,000"),
        (True, "", "yes"),
        ("{}", "topologyManagerPolicyOptions", ""),
        (pd.Timestamp("2026-12-03T08:03:18.535803Z"), "time", "2026-12-03 08:03:18.535"),
        (pd.Timestamp("2026-12-03T08:03:18Z"), "time", "2026-12-03 08:03:18"),
    ],
)
def test_cells(value, column, shown):
    assert tables.cell(value, column) == shown


@pytest.mark.parametrize(
    ("x", "unit", "shown"),
    [(30, "CPUs", "30 CPUs"), (1, "CPUs", "1 CPU"), (137438953472, "bytes", "128 GiB"), (0.5, "GiB", "512 MiB")],
)
def test_quantities(x, unit, shown):
    assert tables.quantity(x, unit) == shown


def test_a_unit_column_makes_numbers_quantities():
    frame = pd.DataFrame(
        {"resource": ["cpu", "memory"], "unit": ["cpus", "GiB"], "capacity": [30.0, 128.0], "fraction": [0.5, 0.25]}
    )
    shown = tables.humanize(frame)
    assert list(shown.columns) == ["resource", "capacity", "fraction"]
    assert list(shown["capacity"]) == ["30 CPUs", "128 GiB"]
    assert list(shown["fraction"]) == ["50 %", "25 %"]


def test_show_writes_the_csv_and_every_row(tmp_path, capsys):
    frame = pd.DataFrame({"node": [f"n{i}" for i in range(260)], "remedy": ["x" * 300] * 260})
    from IPython.core.interactiveshell import InteractiveShell

    InteractiveShell.instance()
    tables.show(frame, "pods", tmp_path, empty="never")
    csv = pd.read_csv(tmp_path / "tables" / "pods.csv")
    assert len(csv) == 260 and csv["remedy"].str.len().min() == 300


def test_an_empty_table_is_a_sentence(tmp_path):
    tables.show(pd.DataFrame(columns=["a"]), "none", tmp_path, empty="Nothing matched: no pod is rejected.")
    assert not (tmp_path / "tables").exists()


def test_the_csv_holds_numbers_with_units_in_the_headers(tmp_path):
    frame = pd.DataFrame(
        {"pool": ["gpu", "gpu"], "cpus": [448.0, 12000.0], "fraction": [0.745454, 0.5], "cpuset": [[0, 1, 2], None]}
    )
    tables.show(frame, "pools", tmp_path, empty="never", units={"cpus": "CPUs"})
    csv = pd.read_csv(tmp_path / "tables" / "pools.csv", keep_default_na=False)
    assert list(csv.columns) == ["pool", "cpus (CPUs)", "fraction (%)", "cpuset"]
    assert list(csv["cpus (CPUs)"]) == [448, 12000] and csv["fraction (%)"][0] == pytest.approx(74.5454)
    assert list(csv["cpuset"]) == ["0-2", "shared pool"]


def test_row_order_is_no_column_and_one_is_singular():
    frame = pd.DataFrame({"node": ["b", "a"], "unit": ["devices", "devices"], "amount": [1.0, 2.0]})
    shown = tables.humanize(frame.sort_values("node"))
    assert list(shown.columns) == ["node", "amount"]
    assert list(shown["amount"]) == ["2 devices", "1 device"]
    named = frame.set_index("node")
    assert list(tables.humanize(named).columns) == ["node", "amount"]


def test_csv_rows_from_the_report_text_are_the_rows_made_afresh():
    """``show`` hands ``csv_rows`` the table it already humanized; the CSV is the one made without it."""
    frame = pd.DataFrame(
        {
            "node": pd.array(["a", "b", None], dtype="string"),
            "admitted": [True, False, True],
            "cpuset": [[0, 1, 2], [], None],
            "pods": [12_000, 3, None],
            "capacity_gib": [1.5, 2.0, 0.25],
            "mixed": ["x", 4, {"k": 1}],
        }
    )
    text = tables.humanize(frame)
    assert tables.csv_rows(frame, text=text).to_csv(index=False) == tables.csv_rows(frame).to_csv(index=False)
    assert list(tables.csv_rows(frame, text=text)["pods"][:2]) == [12_000, 3]  # numbers stay numbers
