"""A shown figure's arrays encoded by ``dpviz.ui.output._typed`` (float64 arrays by hand, issue 20) are
Plotly's own typed arrays (``to_typed_array_spec``): the same dictionary, or the same array Plotly
leaves as it is."""

from __future__ import annotations

import numpy as np
from _plotly_utils.utils import to_typed_array_spec
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from dpviz.ui.output import _encoded, _typed

dtypes = st.sampled_from([np.float64, np.dtype(">f8"), np.float32, np.int64, np.int32, np.uint8, bool])


@settings(max_examples=200)
@given(a=hnp.arrays(dtype=dtypes, shape=hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=9)),
       step=st.integers(1, 3), transpose=st.booleans())
def test_typed_arrays_are_plotlys(a: np.ndarray, step: int, transpose: bool) -> None:
    """Every dtype, empty arrays, 2-D arrays, strided and transposed views (not C-ordered)."""
    v = a[::step]
    v = v.T if transpose else v
    ours, plotly = _typed(v), to_typed_array_spec(v)
    if isinstance(plotly, dict):
        assert ours == plotly
    else:
        assert isinstance(ours, np.ndarray) and ours.dtype == plotly.dtype
        assert np.array_equal(ours, plotly, equal_nan=ours.dtype.kind == "f")


def test_a_trace_with_every_kind_of_value() -> None:
    """Plain values kept, containers copied, arrays typed, a float64 array by hand (one that is not
    C-ordered among them), others by Plotly."""
    x = np.linspace(0.0, 1.0, 12)
    trace = {"type": "scatter", "x": x, "y": x.reshape(3, 4).T.copy()[::2], "name": "a", "opacity": 0.5,
             "visible": True, "legendrank": 3, "meta": None, "customdata": np.arange(4),
             "line": {"color": "#123456", "width": 2.0}, "text": ["a", "b"], "ids": ("u", "v")}
    got = _encoded(trace)
    assert got["x"] == to_typed_array_spec(x) and got["y"] == to_typed_array_spec(trace["y"])
    assert got["customdata"] == to_typed_array_spec(trace["customdata"])
    plain = ("name", "opacity", "visible", "legendrank", "meta", "line", "text", "ids")
    assert {k: got[k] for k in plain} == {k: trace[k] for k in plain}
    assert got["line"] is not trace["line"]
