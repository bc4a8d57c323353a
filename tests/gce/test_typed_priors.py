"""Priors and allowed sets typed as text (issue 12 item 4): the parser's forms and its one-line
messages, the rows for a typed pair (exact worst case against brute force over all b, the support
bound above it, the paper's rows for the paper's priors), the page (URL round trip, bad text named,
ε against ε0), and the free/paid preset's ε-against-k plot on a real axis."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dpviz.gce import hypotheses, summary
from dpviz.gce import questions as gq
from dpviz.gce import typed as tp
from dpviz.validation import ParameterError
from dpviz.views import database_priors as dp
from tests import oracles as brute
from tests.app.helpers import assert_clean, errors, figures, run_page, tables

PAGE = "pages/3_Database_priors.py"
TYPED = dp.KIND_LABELS["typed"]
ALLOWED = dp.KIND_LABELS["allowed"]


# ------------------------------------------------------------------ the parser


def test_weights_over_sizes_are_scaled_and_ranges_spread() -> None:
    p = tp.parse_prior("1:1, 2-3:4", k=5, field="prior")  # the range shares its weight
    assert isinstance(p, hypotheses.Exchangeable)
    assert np.exp(p.log_w).tolist() == pytest.approx([0, 0.2, 0.4, 0.4, 0, 0], abs=1e-15)
    same = tp.parse_prior("1, 2:2; 3:2", k=5, field="prior")  # no weight = 1; ; and spaces separate
    assert np.array_equal(same.log_w, p.log_w)


def test_weights_over_vectors_and_names() -> None:
    p = tp.parse_prior("0110:3, 1001:1", k=4, field="prior")
    assert isinstance(p, hypotheses.Explicit)
    assert dict(p.support) == pytest.approx({(0, 1, 1, 0): 0.75, (1, 0, 0, 1): 0.25})
    assert tp.parse_prior("uniform-nonzero", k=7, field="prior").family == "uniform-nonzero"
    assert tp.parse_prior("at-least:3", k=7, field="prior").threshold == 3
    assert tp.parse_prior("zero", k=7, field="prior").is_zero



def test_a_vector_typed_twice_adds_its_weights_without_overflow() -> None:
    """1.8e308 + 1e308 for one vector overflowed to a NaN weight and an error naming 'weight', a field
    nobody typed (found by scripts/fuzz_cli.py): the weights are scaled first, then added."""
    p = tp.parse_prior("000011:1.7976931348623157e308, 000011:1e308, 110000:2.7976931348623157e307",
                       k=6, field="prior")
    assert isinstance(p, hypotheses.Explicit)
    # the third weight is a tenth of the first vector's two together
    assert dict(p.support) == pytest.approx({(0, 0, 0, 0, 1, 1): 1.0 / 1.1, (1, 1, 0, 0, 0, 0): 0.1 / 1.1})
    again = tp.parse_prior("0110:3, 0110:1, 1001:1", k=4, field="prior")
    assert dict(again.support) == pytest.approx({(0, 1, 1, 0): 0.8, (1, 0, 0, 1): 0.2})

@pytest.mark.parametrize(("text", "k", "words"), [
    ("", 5, "zero, one, uniform-nonzero"),
    ("everyone", 5, "weights over |b|"),
    ("1:-2", 5, "positive numbers"),
    ("1:abc", 5, "positive numbers"),
    ("7:1", 5, "from 0 to k = 5"),
    ("3-1:1", 5, "lo ≤ hi"),
    ("0110:1, 2:1", 4, "not both"),
    ("0110", 30, "exactly k = 30 digits"),  # a vector, never the size 110
    ("at-least:9", 5, "[1, 5]"),
    ("0110110011001100110:1", 19, "k ≤ 16"),
])
def test_bad_prior_text_is_one_message_naming_the_field(text: str, k: int, words: str) -> None:
    with pytest.raises(ParameterError) as err:
        tp.parse_prior(text, k=k, field="prior")
    message = str(err.value)
    assert message.startswith("prior") and words in message and "\n" not in message, message


@pytest.mark.parametrize("text", ["", "1100, 001", "12, 34", "1", "1" * 17])
def test_bad_allowed_text_is_named(text: str) -> None:
    with pytest.raises(ParameterError, match=r"^allowed must be membership vectors"):
        tp.parse_allowed(text)


def test_support_distance_against_brute_force() -> None:
    for t0, t1, k in (("zero", "1-3:1", 6), ("0-1:1", "2:1", 5), ("1100, 0000", "0110, 0011", 4),
                      ("one", "0:1", 4), ("uniform-nonzero", "2-3:1", 5)):
        p0, p1 = tp.as_pair(tp.parse_prior(t0, k=k), tp.parse_prior(t1, k=k))
        s0 = [b for b, _ in hypotheses.to_explicit(p0).support]
        s1 = [b for b, _ in hypotheses.to_explicit(p1).support]
        want = max(sum(x != y for x, y in zip(a, b, strict=True)) for a in s0 for b in s1)
        assert tp.support_distance(p0, p1) == want, (t0, t1)


# ------------------------------------------------------------------ the rows


def _brute_exact(p0: dict, p1: dict, *, eps0: float, delta0: float, delta: float) -> float:
    p, q = brute.canonical(eps0, delta0)
    a, b = brute.mixture(p0, p, q), brute.mixture(p1, p, q)
    return brute.smallest_epsilon(lambda e: brute.hockey_stick(b, a, e), delta, hi=50.0)  # type: ignore[return-value]


@pytest.mark.parametrize(("null", "prior", "p0", "p1"), [
    ("paper", "1:0.5, 2-3:0.5", brute.zero(4), brute.by_level(4, [0, 0.5, 0.25, 0.25, 0])),
    ("1000", "0110:0.5, 1001:0.5", {(1, 0, 0, 0): 1.0}, {(0, 1, 1, 0): 0.5, (1, 0, 0, 1): 0.5}),
    ("0-1:1", "3-4:1", brute.by_level(4, [0.5, 0.5, 0, 0, 0]), brute.by_level(4, [0, 0, 0, 0.5, 0.5])),
])
def test_typed_rows_exact_against_brute_force_and_support_above_it(null: str, prior: str, p0: dict,
                                                                    p1: dict) -> None:
    q = gq.Question(kind="typed", k=4, eps0=0.3, delta0=1e-4, delta=1e-3, prior=prior, null=null)
    rows = gq.bounds(q, budget=None)
    want = _brute_exact(p0, p1, eps0=0.3, delta0=1e-4, delta=1e-3)
    assert rows["exact"].kind.value == "exact"
    assert rows["exact"].epsilon == pytest.approx(want, abs=1e-9)
    for key, g in rows.items():  # every bound is sound: at least the exact worst case
        if g.feasible and g.delta <= 1e-3:
            assert g.epsilon >= rows["exact"].epsilon * (1 - 1e-9), key
    assert rows["support_optimal"].epsilon <= rows["classic"].epsilon * (1 + 1e-12)
    # the support rows bound this pair's worst case from above: never labelled exact for it
    assert all(g.kind.value != "exact" for key, g in rows.items() if key.startswith("support_"))


def test_weights_typed_for_the_papers_prior_give_the_papers_exact_value() -> None:
    """U(B∖{0⃗}) typed as weights over |b| (C(k, j) / (2^k − 1)) runs the general recursion; the
    named prior runs its closed form: the same exact ε."""
    k = 9
    weights = ", ".join(f"{j}:{math.comb(k, j)}" for j in range(1, k + 1))
    q = gq.Question(kind="typed", k=k, eps0=0.2, delta0=1e-6, delta=1e-5, prior=weights)
    typed = gq.bounds(q, budget=None)["exact"]
    paper = summary.uniform_nonzero(k=k, eps0=0.2, delta0=1e-6, delta=1e-5)
    assert typed.epsilon == pytest.approx(paper["exact"].epsilon, rel=1e-9)
    named = gq.bounds(gq.Question(kind="typed", k=k, eps0=0.2, delta0=1e-6, delta=1e-5,
                                  prior="uniform-nonzero"), budget=None)
    assert set(named) == set(paper) and named["exact"] == paper["exact"]  # every row of the paper


def test_allowed_set_is_the_constraint() -> None:
    q = gq.Question(kind="allowed", k=1, eps0=0.1, delta0=0.0, delta=1e-5, allowed="110, 011, 000",
                    neighbouring="bounded")
    assert q.databases == 3 and q.compositions() == 2
    assert gq.bounds(q) == summary.allowed_set(((1, 1, 0), (0, 1, 1), (0, 0, 0)), neighbouring="bounded",
                                               eps0=0.1, delta0=0.0, delta=1e-5)


def test_typed_plot_runs_over_eps0_and_features_over_k() -> None:
    q = gq.Question(kind="typed", k=5, eps0=0.2, delta0=0.0, delta=1e-5, prior="1-2:1")
    xs, series = gq.epsilon_series(q)
    assert gq.series_axis(q) == "eps0" and xs[0] == pytest.approx(0.02) and xs[-1] == pytest.approx(0.8)
    assert np.all(np.diff(series["exact"]) > 0) and np.all(series["exact"] <= series["classic"])
    f = gq.Question(kind="features", k=12, eps0=0.1, delta0=0.0, delta=1e-5)
    ks, fs = gq.epsilon_series(f)
    assert ks.size >= 8 and ks[-1] == 12 and np.all(np.diff(ks) > 0)  # was the single point k = 12
    assert fs["exact"][-1] == pytest.approx(gq.classic_and_exact(f)["exact"].epsilon, rel=1e-12)
    assert np.all(fs["exact"] <= fs["classic"] * (1 + 1e-12))


# ------------------------------------------------------------------ the page

URL = {"preset": "Custom", "kind": TYPED, "k": "6", "prior": "1:0.5, 2-3:0.5", "null": "0-1:1",
       "delta0": "1e-06"}


def test_typed_prior_url_round_trip_and_tables_equal_the_view() -> None:
    at = run_page(PAGE, **URL)
    assert_clean(at)
    assert not errors(at)
    for key in ("k", "prior", "null", "delta0"):
        assert at.text_input(key=key).value == URL[key], key
    shown = tables(at)[0]
    built = dp.build(**{**dp.SPEC.defaults(), "preset": "custom", "kind": "typed", "k": 6,
                        "prior": URL["prior"], "null": URL["null"], "delta0": 1e-6})
    assert list(shown["bound"]) == [r["bound"] for r in built.tables["bounds"]]
    assert [str(x) for x in shown["ε"]] == [r["ε"] for r in built.tables["bounds"]]
    assert shown["bound"][1] == "Exact worst case" and shown["kind"][1] == "exact"
    curve = figures(at)[0]
    assert curve["layout"]["xaxis"]["title"]["text"].startswith("ε0")


@pytest.mark.parametrize(("params", "start"), [
    ({"prior": "1:0.5, 2:x"}, "prior must be weights that are positive numbers"),
    ({"null": "banana"}, "null hypothesis p0 must be zero, one"),  # the label the page shows
])
def test_bad_typed_text_on_the_page_is_one_message(params: dict, start: str) -> None:
    at = run_page(PAGE, **{**URL, **params})
    assert_clean(at)
    msgs = errors(at)
    assert len(msgs) == 1 and msgs[0].startswith(start), msgs
    assert tables(at), "the page goes on with the default text"


def test_prior_that_does_not_fit_k_stops_with_its_message() -> None:
    at = run_page(PAGE, **{**URL, "prior": "0110:1"})
    assert_clean(at)
    msgs = errors(at)
    assert len(msgs) == 1 and "exactly k = 6 digits" in msgs[0], msgs


def test_allowed_set_on_the_page() -> None:
    at = run_page(PAGE, preset="Custom", kind=ALLOWED, allowed="110, 011, 000", neighbouring="bounded")
    assert_clean(at)
    assert not errors(at)
    rows = tables(at)[0]
    assert rows["bound"][0].startswith("Classic") and str(rows["ε"][2]) == "0.2"  # 2 of 3 composed, basic
    assert at.text_input(key="allowed").value == "110, 011, 000"


@pytest.mark.parametrize("size", ["1" * 5000, "1" * 4299 + "2", "2-" + "1" * 5000, "9" * 4400])
def test_sizes_of_thousands_of_digits_are_named_not_a_traceback(size: str) -> None:
    """A fuzzed ``--prior 111…1`` (5,000 digits) reached ``int()``, which refuses over 4,300 digits:
    a ValueError traceback. A size with more digits than k is above k, and said so."""
    with pytest.raises(ParameterError, match=re.escape("prior must be ")) as refused:
        tp.parse_prior(f"{size}:1, 1:1", k=5)
    assert refused.value.field == "prior"
