"""The out-of-range walk: its fast pass without paths, and the loader's decoder hooks, agree with the
precise one."""

from hypothesis import given
from hypothesis import strategies as st

from tmnb.parse.numbers import INT64_MAX
from tmnb.snapshot.values import _all_in_range, _first_out_of_range

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.text(max_size=4)
    | st.integers(-2 * INT64_MAX, 2 * INT64_MAX)
    | st.floats(allow_nan=True, allow_infinity=True),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_the_fast_pass_agrees_with_the_precise_walk(doc):
    assert _all_in_range(doc) == (_first_out_of_range(doc, "$") is None)


@given(json_values | st.integers(min_value=10**20, max_value=10**40).map(lambda n: [n]))
def test_the_decoders_verdict_agrees_with_the_precise_walk(doc):
    """What the loader's number hooks saw while decoding the file's text, and what the walk finds in
    the document Python's own decoder makes of it (NaN and infinities written as JSON writes them)."""
    import json

    from tmnb.parse.numbers import json_int
    from tmnb.snapshot.io import _decoded

    text = json.dumps(doc).encode()
    _, in_range = _decoded(text, "doc.json")
    assert in_range == (_first_out_of_range(json.loads(text, parse_int=json_int), "$") is None)
