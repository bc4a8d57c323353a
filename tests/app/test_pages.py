"""AppTest for the home, privacy-regions and composition-curves pages and the navigation."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from tests.app.helpers import assert_clean, editors, errors, figures, run_page, tables, trace_names
from tests.oracles import assert_sound_and_tight, mp_zcdp_epsilon

PAGES = ["app.py", "pages/1_Privacy_regions.py", "pages/2_Composition_curves.py",
         "pages/3_Database_priors.py", "pages/4_Mechanisms.py", "pages/6_Attack_lab.py"]


@pytest.mark.parametrize("path", PAGES)
def test_page_renders_without_exception(path):
    at = run_page(path)
    assert_clean(at)
    assert not errors(at)
    assert at.title, "every page opens with a title"


def test_home_links_and_describes_each_view():
    at = run_page("app.py")
    links = [el.proto.label for el in at.get("page_link")]
    text = " ".join(m.value for m in at.markdown)
    for view in ("Privacy regions", "Composition curves", "Database priors", "Mechanisms"):
        assert view in links or view in text, view
    assert "hypothesis test" in text and "exact optimum" in text


def test_regions_page_draws_every_method():
    at = run_page("pages/1_Privacy_regions.py")
    figs = figures(at)
    assert len(figs) == 3  # one mechanism and k-fold, the methods, nested k
    names = " ".join(trace_names(figs[1]))
    for label in ("Basic", "Advanced", "KOV Thm 3.4", "zCDP", "Optimal"):
        assert label in names


def test_regions_page_k_changes_the_figure():
    at = run_page("pages/1_Privacy_regions.py")
    before = figures(at)[0]["data"][1]["y"]
    at.text_input(key="k").set_value("7").run()  # any k, not only a slider's stops (issue 21)
    assert_clean(at)
    after = figures(at)[0]["data"][1]["y"]
    assert before != after


@pytest.mark.parametrize("key,value,field", [
    ("eps0", "-1", "ε0 (each mechanism)"), ("delta0", "1.5", "δ0 (each mechanism)"),
    ("eps0", "nan", "ε0 (each mechanism)"), ("delta0", "abc", "δ0 (each mechanism)"),
])  # the label the user sees (issue 19)
def test_regions_page_bad_input_names_the_field(key, value, field):
    at = run_page("pages/1_Privacy_regions.py")
    at.text_input(key=key).set_value(value).run()
    assert_clean(at)
    msgs = errors(at)
    assert msgs and msgs[0].startswith(f"{field} must be"), msgs
    assert "[" in msgs[0] or "(" in msgs[0], "the message states the allowed range"


@pytest.mark.parametrize("value", ["0", "abc", "1e9", "10001"])
def test_regions_page_k_outside_its_range_falls_back_with_notice(value):
    at = run_page("pages/1_Privacy_regions.py", k=value)
    assert_clean(at)
    # the notice names the label the user sees (issue 19 item 3), its range, and the fallback
    label = "k (mechanisms composed)"
    assert any(m.startswith(f"{label} must be a whole number in [1, 10,000], got ")
               and m.endswith(f"Showing the default {label} = 30 instead.") for m in errors(at)), errors(at)
    assert "k = 30" in figures(at)[1]["layout"]["title"]["text"], "the default k is drawn"


@pytest.mark.parametrize("value", ["7", "9", "11", "30", "40", "10000"])
def test_regions_page_takes_any_k_and_old_slider_links(value):
    """k = 7, 9, 11 were not among the slider's stops; links that carried a stop (30, 40) still open."""
    at = run_page("pages/1_Privacy_regions.py", k=value)
    assert_clean(at)
    assert not errors(at)
    assert f"k = {int(value)} " in figures(at)[1]["layout"]["title"]["text"].replace("<br>", " ")


def test_curves_page_table_and_figures():
    at = run_page("pages/2_Composition_curves.py")
    assert_clean(at)
    figs = figures(at)
    assert len(figs) == 2
    assert "Optimal" in " ".join(trace_names(figs[0]))
    table = tables(at)[0]
    assert list(table["method"]) == ["Basic (KOV Thm 3.1)", "Advanced (DRV, KOV Thm 3.2)", "KOV Thm 3.4",
                                     "KOV Thm 3.4, simplified",
                                     "zCDP (Steinke Thm 18/22)", "Optimal (KOV Thm 3.3)"]
    eps = {m: float(v) for m, v in zip(table["method"], table["ε"], strict=True)}
    # sound theorems: optimal is the smallest; zCDP's ½kε0² never loses to DRV's kε0(e^ε0 − 1)
    assert eps["Optimal (KOV Thm 3.3)"] == min(eps.values())
    assert eps["zCDP (Steinke Thm 18/22)"] <= eps["Advanced (DRV, KOV Thm 3.2)"]
    assert eps["KOV Thm 3.4"] <= eps["KOV Thm 3.4, simplified"]  # kε0² ≥ kε0 tanh(ε0/2)


def test_curves_page_explains_lemma7_at_the_chosen_eps0():
    """Roth Lemma 7 where advanced composition is explained, with its number at the URL's ε0."""
    at = run_page("pages/2_Composition_curves.py", eps0="0.5")
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "Roth Lemma 7" in text
    assert "At ε0 = 0.5: Lemma 7 gives 0.3244" in text  # 0.5 (e^0.5 − 1) = 0.32436…


def _optimal_y(at) -> list:
    return next(t["y"] for t in figures(at)[0]["data"] if t.get("name", "").startswith("Optimal"))


def test_curves_page_widget_changes_the_curve():
    at = run_page("pages/2_Composition_curves.py")
    optimal_before = _optimal_y(at)
    at.text_input(key="eps0").set_value("0.5").run()
    assert_clean(at)
    optimal_after = _optimal_y(at)
    assert optimal_before != optimal_after


def test_curves_page_shows_infeasible_as_gap_not_crash():
    at = run_page("pages/2_Composition_curves.py", delta="0.0001", delta0="0.001")
    assert_clean(at)
    table = tables(at)[0]
    assert pd.isna(table["ε"][0])  # basic needs δ ≥ kδ0 = 0.03: no number, the note says why
    assert "needs δ" in table["source / note"][0]


def test_curves_page_url_parameters_restore_the_view():
    at = run_page("pages/2_Composition_curves.py", eps0="0.25", k="7", delta="1e-3")
    assert_clean(at)
    assert at.text_input(key="eps0").value == "0.25"
    assert "k = 7" in " ".join(s.value for s in at.subheader)


def test_curves_page_malformed_url_falls_back_with_notice():
    at = run_page("pages/2_Composition_curves.py", eps0="zzz")
    assert_clean(at)
    assert any(m.startswith("ε0 (each mechanism) must be") and "default" in m for m in errors(at))


def test_curves_page_heterogeneous_table_and_bad_levels():
    at = run_page("pages/2_Composition_curves.py")
    hetero = tables(at)[1]
    assert "KOV Thm 3.5" in " ".join(hetero["source / note"])
    assert editors(at)[0].values.tolist() == [["0.1", "1e-6", "30"], ["0.5", "0", "10"]]  # as typed
    bad = run_page("pages/2_Composition_curves.py", levels="0.1:1e-6")
    assert_clean(bad)
    assert any(m.startswith("levels must be") for m in errors(bad))
    cell = run_page("pages/2_Composition_curves.py", levels="0.1:1e-6:30,0.5:x:10")
    assert_clean(cell)
    messages = errors(cell)
    assert any(m.startswith("δ (row 2) must be a number in [0, 1), got `'x'`") for m in messages), messages
    assert len(tables(cell)) == 1, "no heterogeneous results for rows that are not all valid"


def test_curves_page_csv_download_contents():
    at = run_page("pages/2_Composition_curves.py")
    buttons = at.get("download_button")
    assert len(buttons) >= 2
    # The CSV bytes are produced by dpviz.ui.columns_csv: parse the ε-against-k one.
    from dpviz.composition.curves import epsilon_vs_k, k_grid
    from dpviz.ui import columns_csv

    ks = tuple(int(v) for v in k_grid(1000))
    s = epsilon_vs_k(eps0=0.1, delta0=0.001, delta=0.05, ks=ks)
    text = columns_csv({"k": s.x, **{f"epsilon_{m}": s.y[m] for m in s.y}}).decode()
    header, first = text.splitlines()[:2]
    assert header == ("k,epsilon_basic,epsilon_advanced,epsilon_kov,epsilon_kov_simplified,epsilon_zcdp,"
                      "epsilon_optimal")
    cells = dict(zip(header.split(","), first.split(","), strict=True))
    assert cells["k"] == "1.0" and float(cells["epsilon_basic"]) == 0.1  # k = 1, basic: ε = ε0
    # k = 1, exact: δ0 + (1 − δ0)(p_B − e^ε p_C) = δ for the canonical pair, solved for ε
    p_b, p_c = math.exp(0.1) / (1 + math.exp(0.1)), 1 / (1 + math.exp(0.1))
    expected = math.log((p_b - (0.05 - 0.001) / (1 - 0.001)) / p_c)
    # 1e-9: closed form vs log-space solve
    assert math.isclose(float(cells["epsilon_optimal"]), expected, rel_tol=1e-9)
    # k = 1, zCDP: ρ = ε0²/2 (Prop. 16), δ′ = δ − δ0 (Thm 22), Prop. 14's 50-digit infimum
    assert_sound_and_tight(float(cells["epsilon_zcdp"]), mp_zcdp_epsilon(0.1**2 / 2, 0.05 - 0.001))


@pytest.mark.parametrize("params,expected", [
    ({"k": "100", "cap": "100"}, "C = 100 ≥ k = 100"),
    ({"k": "10", "cap": "365"}, "C = 365 ≥ k = 10"),
    ({"k": "10", "cap": "6", "nb": "bounded"}, "2C = 12 (bounded) ≥ k = 10"),
])
def test_priors_page_says_when_the_cap_does_not_bind(params, expected):
    """Regression (issue 10): C ≥ k read "only 100 of the 100 mechanisms"."""
    at = run_page("pages/3_Database_priors.py", **params)
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "The cap does not bind" in text and expected in text
    assert "only **" not in text
    binding = run_page("pages/3_Database_priors.py", k="10", cap="3")
    assert "only **3** of the 10 mechanisms" in " ".join(m.value for m in binding.markdown)


def test_log_k_switch_restyles_without_recomputing(monkeypatch):
    """Issue 10 item 8: the log-k switch changes the axis, not a number: no ε is computed again,
    and the curve's points are the same on both axes."""
    from dpviz.views import curves

    calls = []
    original = curves.epsilon_vs_k

    def counted(**kwargs):
        calls.append(kwargs["ks"])
        return original(**kwargs)

    monkeypatch.setattr(curves, "epsilon_vs_k", counted)
    at = run_page("pages/2_Composition_curves.py", eps0="0.1234", k_max="700")  # not cached elsewhere
    before = len(calls)
    log_axis = figures(at)[0]
    at.toggle(key="log_k").set_value(False).run()
    assert_clean(at)
    linear_axis = figures(at)[0]
    assert len(calls) == before, "toggling the axis computed ε again"
    assert linear_axis["layout"]["xaxis"]["type"] == "linear" != log_axis["layout"]["xaxis"]["type"]
    assert linear_axis["data"][3]["y"] == log_axis["data"][3]["y"]
