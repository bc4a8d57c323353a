"""AppTest of the Mechanisms page's inputs (issues 8 and 11): every input in the URL under its CLI
flag, old links migrated, both directions, δ = 0, neighbouring relations, the mix editor, and the
downloads read back."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz import export
from dpviz.cli.mechanism import answer, load_spec
from dpviz.validation import ParameterError
from dpviz.views import mechanisms as mv
from tests.app.helpers import assert_clean, errors, run_page, tables

PAGE = "pages/4_Mechanisms.py"
CHEAP = {"k": "20", "sampling_rate": "1"}  # a small run: each page run stays well under a second


def _markdown(at) -> str:
    return " ".join(m.value for m in at.markdown)


def test_every_input_round_trips_through_the_url():
    """A link with every input set opens with those values and keeps them in the URL."""
    query = {"mechanism": "laplace", "scale": "3", "sensitivity": "2", "k": "25", "sampling_rate": "0.5",
             "neighbouring": "add-remove", "solve": "delta", "epsilon": "2", "compare": "true",
             "mix": '[{"mechanism":"geometric","eps0":0.2,"count":7}]', "het_delta": "0.001"}
    at = run_page(PAGE, **query)
    assert_clean(at)
    assert not errors(at)
    shown = {w.key: w.value for w in at.text_input} | {w.key: w.value for w in at.radio}
    for key in ("mechanism", "scale", "sensitivity", "k", "sampling_rate", "neighbouring", "solve",
                "epsilon", "het_delta"):
        assert str(shown[key]) == query[key], key
    assert {w.key: w.value for w in at.toggle}["compare"] is True
    assert mv.mix_spec(at.dataframe[1].value.to_dict("records")) == query["mix"]  # the mix editor
    assert "δ upper" in tables(at)[0].columns  # δ at ε


def test_changing_the_direction_answers_delta_at_epsilon():
    at = run_page(PAGE, **CHEAP)
    at.text_input(key="sigma").set_value("2.5").run()
    at.radio(key="solve").set_value("delta").run()
    at.text_input(key="epsilon").set_value("0.7").run()
    assert_clean(at)
    assert not errors(at)
    assert "δ ≤ **" in _markdown(at) or "δ ∈ [**" in _markdown(at)
    table = tables(at)[0]
    assert "δ upper" in table.columns and (table["δ lower"].dropna() <= table["δ upper"].min()).all()


def test_old_links_open_with_the_new_keys():
    """?mech_k=…&rate=…&mech_delta=…&mechanism=Laplace (earlier versions of the page)."""
    at = run_page(PAGE, mechanism="Laplace", scale="3.0", mech_k="20", rate="0.0", mech_delta="1e-06")
    assert_clean(at)
    assert not errors(at)
    assert at.radio(key="mechanism").value == "laplace"
    assert at.text_input(key="k").value == "20" and at.text_input(key="delta").value == "1e-06"
    # q = 0 meant "no subsampling" here; today q = 1 does, on every page and the CLI (issue 19)
    assert at.text_input(key="sampling_rate").value == "1"
    assert "mech_k" not in at.query_params and "rate" not in at.query_params


def test_no_subsampling_is_q_1_and_old_links_with_q_0_keep_their_meaning():
    """One convention (issue 19): q = 1 is no subsampling; ``sampling_rate=0`` of earlier links is
    read as 1, and the page's headline then equals the mechanism's own (the CLI without the flag)."""
    assert mv.legacy_query({"sampling_rate": "0"}) == {"sampling_rate": "1"}
    assert mv.legacy_query({"sampling_rate": "0.25"}) == {"sampling_rate": "0.25"}
    with pytest.raises(ParameterError, match="sampling rate q"):
        mv.SAMPLING_RATE.parse("0")
    old = run_page(PAGE, mechanism="laplace", scale="2", k="5", sampling_rate="0", delta="1e-06")
    assert_clean(old)
    assert not errors(old)
    plain = mv.make_mechanism("laplace", {"scale": 2.0, "sampling_rate": None})
    expected = mv.headline(mv.refine(plain, k=5, delta=1e-6).summary, solve="epsilon", refined=True)
    assert expected.split("**")[1] in _markdown(old)


def test_legacy_query_is_pure():
    assert mv.legacy_query({"mech_k": "5", "k": "7", "rate": "0.1", "mechanism": "Randomized response"}) == \
        {"k": "7", "sampling_rate": "0.1", "mechanism": "randomized-response"}


def test_pure_mechanism_at_delta_zero_is_exact():
    """Randomized response ε0 = 0.1, k = 30, δ = 0: ε = kε0 = 3 exactly (issue 8)."""
    at = run_page(PAGE, mechanism="randomized-response", eps0="0.1", delta="0", **CHEAP | {"k": "30"})
    assert_clean(at)
    assert not errors(at)
    table = tables(at)[0]
    assert table["ε upper"].min() == pytest.approx(3.0, rel=1e-12)
    assert table["ε lower"].max() == pytest.approx(3.0, rel=1e-12)
    assert "ε = **3** (" in _markdown(at)


def test_gaussian_at_delta_zero_says_why_there_is_no_epsilon():
    at = run_page(PAGE, delta="0", **CHEAP)
    assert_clean(at)
    assert "No route gives a finite upper bound" in _markdown(at)
    table = tables(at)[0]
    assert "impossible" in set(table["kind"])
    assert table["ε upper"].isna().all()


def test_replace_one_is_offered_where_implemented_and_refused_elsewhere():
    at = run_page(PAGE, k="20", sampling_rate="0.1", neighbouring="replace-one")
    assert_clean(at)
    assert not errors(at)
    replace = float(tables(at)[0]["ε upper"].min())
    at.radio(key="neighbouring").set_value("add-remove").run()
    assert float(tables(at)[0]["ε upper"].min()) < replace  # replacing a record leaks more
    at.radio(key="mechanism").set_value("finite").run()  # a finite pair: add/remove only
    at.radio(key="neighbouring").set_value("replace-one").run()
    assert_clean(at)
    msgs = errors(at)
    assert msgs and msgs[0].startswith("neighbouring must be"), msgs


def test_status_says_the_answer_was_refined():
    at = run_page(PAGE, **CHEAP)
    assert [s.label for s in at.status] and at.status[0].label.startswith("Refined (PLD grid); computed in")
    assert "refining" not in _markdown(at).lower()


def test_mix_from_the_url_matches_the_cli():
    spec = ('[{"mechanism":"randomized-response","eps0":0.1,"count":30},'
            '{"mechanism":"laplace","scale":10,"count":3}]')
    at = run_page(PAGE, mix=spec, delta="1e-12", **CHEAP)
    assert_clean(at)
    assert not errors(at)
    mix = tables(at)[1]
    cli = answer(load_spec(spec), delta=1e-12, epsilon=None, h=None, budget=None, compare=False)
    assert float(mix["ε upper"].min()) == pytest.approx(cli["epsilon"], rel=1e-7)
    assert float(mix["ε upper"].min()) >= cli["epsilon"] * (1 - 1e-12)  # shown rounded up


@pytest.mark.parametrize(("spec", "field"), [
    ("[{", "mix"), ("[]", "mix"), ('[{"mechanism":"laplace","scale":1,"count":0}]', "mix[0].count"),
    ('[{"mechanism":"cauchy","count":3}]', "mix[0].mechanism"),
    ('[{"mechanism":"laplace","scale":1,"count":3},{"mechanism":"laplace","scale":-1,"count":3}]',
     "mix[1].scale"),
])
def test_bad_mix_names_the_field(spec, field):
    at = run_page(PAGE, mix=spec, **CHEAP)
    assert_clean(at)
    msgs = errors(at)
    assert any(m.startswith(f"{field} must be") for m in msgs), msgs


def test_downloads_read_back():
    """The JSON and CSV bytes the page's download buttons carry (``dpviz.export``) parse back to
    the numbers in its tables."""
    mech = mv.make_mechanism("randomized-response", {"eps0": 0.5, "sampling_rate": None})
    view = mv.build(mech, k=12, delta=1e-6)
    payload = json.loads(export.payload_json(view.payload))
    assert payload["parameters"]["mechanism"] == "randomized-response" and payload["k"] == 12
    assert payload["best"]["upper"] == view.summary["upper"]
    rows = list(csv.DictReader(io.StringIO(export.columns_csv(view.csv["routes"]).decode())))
    assert [r["route"] for r in rows] == list(payload["results"])
    for r in rows:
        res = payload["results"][r["route"]]
        assert (float(r["upper"]) if r["upper"] else None) == res["upper"]
    band = list(csv.DictReader(io.StringIO(export.columns_csv(view.csv["delta_vs_epsilon"]).decode())))
    assert all(float(b["delta_lower"]) <= float(b["delta_upper"]) for b in band if b["delta_upper"])
    mix = mv.mix_view(mv.MIX.default, delta=1e-5)
    back = json.loads(export.payload_json(mix.payload))
    assert back["spec"] == json.loads(mv.MIX.default)
    assert load_spec(json.dumps(back["spec"]))  # the download is a spec the CLI reads


_cell = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789.-_", min_size=1, max_size=8)


@settings(max_examples=80, deadline=None)
@given(rows=st.lists(st.fixed_dictionaries({
    "mechanism": st.sampled_from(list(mv.KINDS.values())),
    "parameters": st.lists(st.tuples(st.from_regex(r"[a-z][a-z0-9_]{0,6}", fullmatch=True), _cell),
                           max_size=3, unique_by=lambda kv: kv[0]),
    "count": st.integers(1, 10**6).map(str),
    "sampling rate": st.sampled_from(["", "0.5", "1"]),
    "neighbouring": st.sampled_from(["", "add-remove", "replace-one"]),
}), min_size=1, max_size=5))
def test_mix_rows_and_spec_round_trip(rows):
    for r in rows:
        r["parameters"] = "; ".join(f"{k}={v}" for k, v in r["parameters"]
                                    if k not in ("mechanism", "count", "sampling_rate", "neighbouring"))
    spec = mv.mix_spec(rows)
    again = mv.mix_rows(spec)
    assert mv.mix_spec(again) == spec
    assert json.loads(spec) == mv.mix_entries(again)


def test_headline_never_shows_an_upper_below_a_certified_lower():
    from dpviz.guarantee import Guarantee, Kind

    up = Guarantee(epsilon=0.17036863236176553, delta=0.0, kind=Kind.UPPER, source="a")
    low = Guarantee(epsilon=0.17036863236176567, delta=0.0, kind=Kind.EXACT, source="b")
    best = mv.best({"generic": up, "pld": low})
    assert best["upper"] >= best["lower"]
    assert math.isclose(best["upper"], 0.17036863236176567)


def test_headline_says_when_routes_disagree_and_never_calls_it_exact():
    """A certified lower far above another route's sound upper is a contradiction (one route is
    wrong, which one is not known): both bounds are left out, as on the command line, the headline is
    the smallest upper nobody contradicts and it says so (it was shown as '=')."""
    from dpviz.guarantee import Guarantee, Kind

    up = Guarantee(epsilon=0.0, delta=1e-10, kind=Kind.UPPER, source="a", lower=0.0)
    low = Guarantee(epsilon=0.033, delta=1e-10, kind=Kind.EXACT, source="b")
    best = mv.best({"pld": up, "analytic": low})
    assert best["upper"] == 0.033 and best["upper_route"] == "analytic" and best["lower"] == 0.0
    assert "disagree" in best["note"]
    text = mv.headline(best, solve="epsilon", refined=True)
    assert "=" not in text.split("Warning")[0] and "routes disagree" in text


def test_an_engine_failure_is_a_row_not_a_traceback(monkeypatch):
    """A refining route that raises on some input (an engine bug, e.g. a math domain error) is
    shown as not computed with its reason; the cheap routes' sound answers stand."""
    from dpviz.mechanisms import routes

    def broken(*args, **kwargs):
        raise ValueError("math domain error")

    monkeypatch.setattr(routes, "pld", broken)
    mech = mv.make_mechanism("gaussian", {"sigma": 1.0, "sampling_rate": 0.01})
    view = mv.refine(mech, k=100, delta=1e-5)
    pld = view.payload["results"]["pld"]
    assert pld["status"] == "not_computed" and "math domain error" in pld["reason"]
    assert view.summary["upper_route"] == "rdp" and view.summary["upper"] is not None
