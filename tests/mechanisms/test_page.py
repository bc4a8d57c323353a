"""AppTest for pages/4_Mechanisms.py: every mechanism renders, widgets change results, bad input
is named. Uses small k through the URL so that each run stays around a second."""

from __future__ import annotations

import pytest

from dpviz.validation import ParameterError
from dpviz.views import mechanisms as mv
from tests.app.helpers import assert_clean, errors, figures, run_page, tables

PAGE = "pages/4_Mechanisms.py"


def _pld_row(at) -> dict:
    """The best certified bounds of the routes' table: the largest lower, the smallest upper."""
    table = tables(at)[0]
    return {"lower": float(table["ε lower"].max()), "upper": float(table["ε upper"].min())}


@pytest.mark.parametrize("kind", list(mv.KINDS.values()))
def test_each_mechanism_renders(kind):
    at = run_page(PAGE, k="40")
    at.radio(key="mechanism").set_value(kind).run()
    assert_clean(at)
    assert not errors(at)
    assert len(figures(at)) == 4  # histogram, region, δ band, ε against k
    row = _pld_row(at)
    assert row["lower"] <= row["upper"]


def test_default_is_dp_sgd_like_and_beats_generic():
    at = run_page(PAGE)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "ε ∈ [**" in text and "(PLD" in text and "refining" not in text.lower()
    generic = tables(at)[0].set_index("method")["ε upper"]
    assert generic.filter(like="Generic").iloc[0] > generic.filter(like="PLD").iloc[0]


def test_changing_sigma_changes_epsilon():
    at = run_page(PAGE, k="40", sampling_rate="0")
    before = _pld_row(at)
    at.text_input(key="sigma").set_value("3").run()
    assert_clean(at)
    after = _pld_row(at)
    assert after["upper"] < before["lower"]  # more noise, strictly more privacy


def test_subsampling_rate_changes_epsilon():
    at = run_page(PAGE, k="40", sampling_rate="0")
    full = _pld_row(at)
    at.text_input(key="sampling_rate").set_value("0.1").run()
    assert_clean(at)
    assert _pld_row(at)["upper"] < full["lower"]


@pytest.mark.parametrize(("key", "value", "field"), [
    ("sigma", "-1", "noise σ"), ("k", "0", "k (compositions)"), ("sampling_rate", "2", "sampling rate q"),
    ("delta", "1", "target total δ"), ("sigma", "abc", "noise σ"),
])  # the label the user sees (issue 19)
def test_bad_input_names_the_field(key, value, field):
    at = run_page(PAGE, k="40")
    at.text_input(key=key).set_value(value).run()
    assert_clean(at)
    msgs = errors(at)
    assert msgs and msgs[0].startswith(f"{field} must be"), msgs


def test_heterogeneous_table_has_exact_pld_kov():
    at = run_page(PAGE, k="40")
    methods = list(tables(at)[-1]["method"])  # the last table: (ε, δ, count) rows
    assert any(m.startswith("Exact") for m in methods) and any(m.startswith("PLD") for m in methods)
    assert any("3.5" in m for m in methods)


def test_heterogeneous_bad_row_names_row():
    with pytest.raises(ParameterError, match=r"eps0 \(row 2\) must be"):
        mv.heterogeneous([{"ε": 0.1, "δ": 0.0, "count": 3}, {"ε": -1, "δ": 0.0, "count": 3}], delta=1e-4)


def test_view_spec_builds_headless():
    """The ViewSpec the figure CLI would use: same figures as the page, no Streamlit."""
    values = {**mv.SPEC.defaults(), "mechanism": "randomized-response", "k": 20, "sampling_rate": None}
    view = mv.SPEC.build(**values)
    assert list(view.figures) == ["histogram", "delta", "region", "epsilon_vs_k"]
    assert view.payload["parameters"]["mechanism"] == "randomized-response"
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        mv.MECHANISM.check("cauchy")
