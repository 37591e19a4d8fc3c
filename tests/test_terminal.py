"""Tables and paragraphs for a terminal, as kubectl prints them: left-aligned columns three blanks
apart under upper-case headers, no trailing blanks, within a width (cells cut, a note wrapped)."""

from __future__ import annotations

from tmnb.cli.terminal import clip, columns, header, table, wrap

ROWS = [("w1", "kube-system", "Admitted", "shared pool"), ("gpu-h100-02", "ml", "TopologyAffinityError", "")]


def test_columns_are_left_aligned_three_blanks_apart_without_trailing_blanks() -> None:
    assert table(("node", "namespace", "status", "cpuset"), ROWS) == [
        "NODE          NAMESPACE     STATUS                  CPUSET",
        "w1            kube-system   Admitted                shared pool",
        "gpu-h100-02   ml            TopologyAffinityError",
    ]


def test_headers_keep_units_and_sizes() -> None:
    assert header("headroom 4 CPU / 8Gi") == "HEADROOM 4 CPU / 8Gi"
    assert header("as today's kubelet") == "AS TODAY'S KUBELET"


def test_elastic_columns_give_way_first_and_are_cut_with_an_ellipsis() -> None:
    rows = [("a", "x" * 30, "y" * 30)]
    lines = table(("name", "first", "second"), rows, width=50, elastic=("second",))
    assert lines[1] == "a      " + "x" * 30 + "   " + "y" * 9 + "…"
    assert max(map(len, lines)) == 50


def test_without_a_width_every_cell_is_whole() -> None:
    rows = [("a", "x" * 300)]
    assert table(("name", "text"), rows, width=None, elastic=("text",))[1] == "a      " + "x" * 300


def test_a_wrapped_last_column_goes_on_below_itself() -> None:
    note = "the kubelet would not start: unsupported on machines with more than 8 NUMA Nodes"
    lines = table(("node", "note"), [("gb200-01", note)], width=40, wrapped="note")
    assert lines == [
        "NODE       NOTE",
        "gb200-01   the kubelet would not start:",
        "           unsupported on machines with",
        "           more than 8 NUMA Nodes",
    ]


def test_a_cell_stays_on_its_row() -> None:
    assert table(("a", "b"), [("x\ny", "1\t2")]) == ["A     B", "x y   1 2"]


def test_wide_characters_take_two_columns() -> None:
    assert columns("ノード") == 6 and columns("e\u0301") == 1 and columns("…") == 1
    assert clip("ノードノード", 7) == "ノード…"


def test_paragraphs_wrap_without_breaking_words() -> None:
    path = "/var/lib/kubelet/" + "d" * 30
    assert wrap(f"restored {path} and restarted the kubelet", 30) == [
        "restored",
        f"  {path}",
        "  and restarted the kubelet",
    ]
    assert wrap("one line", None, first="> ") == ["> one line"]


def test_a_command_in_backticks_is_never_split() -> None:
    text = "it is still cordoned; `tmnb rollout rollback --change-id c1 --node w3 --approve rollback` puts it back"
    assert wrap(text, 40) == [
        "it is still cordoned;",
        "  `tmnb rollout rollback --change-id c1 --node w3 --approve rollback`",
        "  puts it back",
    ]
