"""Tables as numbers (issue 10 item 7): display numbers never understate a bound, and the page's
tables hold numbers, not strings."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpviz.figures.tables import format_number, table_number
from dpviz.ui import table_frame
from dpviz.ui.tables import table_arrow


@given(st.floats(min_value=1e-300, max_value=1e300), st.sampled_from([3, 4, 6, 8]))
def test_a_shown_number_is_never_below_the_value(x, digits):
    shown = float(format_number(x, digits))
    assert shown >= x - 4 * math.ulp(x)  # an upper bound is never rounded down
    assert shown <= x * (1 + 10.0 ** (1 - digits)) + 4 * math.ulp(x)  # and at most one unit up


@pytest.mark.parametrize("x,digits,text", [
    (0.1234564, 6, "0.123457"),  # rounding to nearest showed 0.123456, below the bound
    (1 / 3, 6, "0.333334"),
    (0.30000000000000004, 6, "0.3"),  # 3 × 0.1: a few ulps above its display is not rounded up
    (9.9999995, 6, "10"),
    (1e-5, 4, "1e-05"),
    (None, 6, "—"),
    (math.inf, 6, "—"),
])
def test_format_number_examples(x, digits, text):
    assert format_number(x, digits) == text


def test_table_frame_keeps_numbers_as_numbers():
    rows = [{"method": "Basic", "ε": "3", "δ": "1e-05", "kind": "upper", "source / note": "KOV Thm 3.1"},
            {"method": "KOV", "ε": "—", "δ": "—", "kind": "upper", "source / note": "needs δ ≥ 0.03"}]
    frame = table_frame(rows)
    assert str(frame["ε"].dtype) == "Float64" and frame["ε"][0] == 3.0 and frame["δ"][0] == 1e-5
    assert frame["ε"].isna()[1]
    assert frame["method"].tolist() == ["Basic", "KOV"]  # text stays text
    assert table_number("1e-05") == 1e-5 and table_number("—") is None


@given(st.floats(min_value=1e-300, max_value=1e300), st.sampled_from([3, 6, 8]))
def test_a_shown_lower_bound_is_never_above_the_value(x, digits):
    shown = float(format_number(x, digits, down=True))
    assert shown <= x + 4 * math.ulp(x)
    assert shown >= x * (1 - 10.0 ** (1 - digits)) - 4 * math.ulp(x)


_CELLS = st.one_of(st.floats(allow_nan=False, width=64).map(lambda x: format_number(x, 6)),
                   st.just("—"), st.sampled_from(["upper", "exact", "KOV Thm 3.4", "a (b) *c*", "3 ms"]))


@given(st.lists(st.fixed_dictionaries({"method": st.text(min_size=1, max_size=8)},
                                       optional={"ε": _CELLS, "δ": _CELLS, "kind": _CELLS}),
                min_size=1, max_size=6))
def test_the_shown_arrow_table_holds_the_frames_cells(rows):
    """``st.dataframe`` is given an Arrow table (``table_arrow``, issue 20); its cells are the frame's
    (``table_frame``, which the CSV tests read), number columns as float64 with nulls for '—', and a
    cell a row lacks is null in both (it was the text 'nan' in the Arrow table's first version)."""
    frame, table = table_frame(rows), table_arrow(rows)
    assert table.column_names == list(frame.columns)
    for c in frame.columns:
        numbers = str(frame[c].dtype) == "Float64"
        assert str(table.schema.field(c).type) == ("double" if numbers else "string")
        want = [None if v is pd.NA or v != v else (float(v) if numbers else v) for v in frame[c].tolist()]
        assert table.column(c).to_pylist() == want
    assert frame.equals(_frame_as_built_before(rows))


def _frame_as_built_before(rows):
    """``table_frame`` as it was written before its columns were parsed once for both tables."""
    frame = pd.DataFrame(list(rows), dtype=object)
    for column in frame.columns:
        try:
            numbers = [table_number(str(v)) for v in frame[column]]
        except ValueError:
            frame[column] = frame[column].astype(str)
            continue
        frame[column] = pd.array(numbers, dtype="Float64")
    return frame
