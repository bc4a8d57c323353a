"""Issue 20, "Feedback": a change the core estimates at more than about a second says so at once,
naming what runs and the estimated time; a cheap setting and a cached answer say nothing. Tested on
the estimates themselves (``dpviz.budget`` units), never on a clock."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from dpviz import budget as budgets
from dpviz.budget import NOTICE_SECONDS, Cost
from dpviz.planner import gce
from dpviz.ui import feedback
from dpviz.views import attack as av
from dpviz.views import mechanisms as mv
from dpviz.views import planner
from tests.app.helpers import TIMEOUT, run_page

PAGE = "pages/4_Mechanisms.py"
SLOW = {"mechanism": "gaussian", "sigma": "0.8", "sampling_rate": "0.001", "k": "100000", "compare": "true"}
"""DP-SGD-like, a small sampling rate: a fine PLD grid (h ≈ 4e-5; about 1.2 s of wall time measured on
a quiet machine, twice that under load) and privacy buckets."""


def _values(query: dict[str, str]) -> mv.Values:
    values = {p.key: p.parse(query[p.key]) for p in mv.mechanism_params(query["mechanism"])
              if p.key in query}
    values["sampling_rate"] = float(query["sampling_rate"])
    for p in mv.mechanism_params(query["mechanism"]):
        values.setdefault(p.key, p.check(p.default))
    values.setdefault("neighbouring", "add-remove")
    return mv.as_values(values)


def _estimate(query: dict[str, str]) -> Cost:
    args = (query["mechanism"], _values(query))
    first = mv.quick_for(*args, k=int(query["k"]), delta=1e-5)
    return mv.refine_cost_for(*args, k=int(query["k"]), first=first, delta=1e-5, compare=True)


def _stop_instead(monkeypatch) -> None:
    """The refinement stops the run where it would start: the page as a person sees it meanwhile."""
    def stopped(*_args, **_kwargs):
        st.stop()
    monkeypatch.setattr(mv, "refine_for", stopped)


def _status_labels(at: AppTest) -> list[str]:
    return [s.label for s in at.status]


def test_a_slow_refinement_is_announced_with_its_estimate(monkeypatch):
    estimate = _estimate(SLOW)
    assert estimate.seconds > NOTICE_SECONDS
    _stop_instead(monkeypatch)
    at = run_page(PAGE, **SLOW)
    text = budgets.notice(estimate)
    assert text is not None and text.startswith("Refining with the PLD grid and privacy buckets: about ")
    assert f"{text}…" in _status_labels(at)


def test_a_cheap_default_says_nothing_of_time(monkeypatch):
    _stop_instead(monkeypatch)
    at = run_page(PAGE)
    labels = _status_labels(at)
    assert labels and not any("about" in label for label in labels)


def test_refinement_estimate_grows_with_k_and_buckets():
    small = _estimate({**SLOW, "k": "100"})
    large = _estimate(SLOW)
    assert small.seconds < large.seconds
    wide = _estimate({**SLOW, "sampling_rate": "0.01", "sigma": "1"})  # a coarser grid suffices
    assert wide.seconds < large.seconds and budgets.notice(wide) is None
    args = ("gaussian", _values(SLOW))
    first = mv.quick_for(*args, k=100000, delta=1e-5)
    without = mv.refine_cost_for(*args, k=100000, first=first, delta=1e-5, compare=False)
    assert without.seconds < large.seconds and "buckets" not in without.what


def test_an_exact_quick_answer_needs_no_grid():
    """δ at ε of the Gaussian without subsampling is its exact closed form (Steinke Cor. 8): no PLD
    estimate (the same law at small q has one)."""
    for rate, none in (("1", True), ("0.001", False)):
        args = ("gaussian", _values({"mechanism": "gaussian", "sampling_rate": rate, "k": "100000"}))
        first = mv.quick_for(*args, k=100000, epsilon=1.0)
        assert (mv.refine_cost_for(*args, k=100000, first=first, epsilon=1.0).seconds == 0.0) is none


def test_notice_threshold():
    assert budgets.notice(Cost(NOTICE_SECONDS, what="x")) is None
    text = budgets.notice(Cost(3.2, what="Refining with the PLD grid"))
    assert text == "Refining with the PLD grid: about 3 s"


def test_a_cached_answer_says_nothing():
    """``ui.pending`` is None once ``ui.cached`` answered the same arguments, in a real script run."""
    def script() -> None:
        import streamlit as st

        from dpviz import ui
        from dpviz.budget import Cost

        def square(x: int) -> int:
            return x * x

        def slow() -> Cost:
            return Cost(5.0, what="Squaring")

        st.text(f"before: {ui.pending(slow, square, 3)}")
        ui.cached(square)(3)
        st.text(f"after: {ui.pending(slow, square, 3)}")
        st.text(f"other: {ui.pending(slow, square, 4)}")

    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    assert [t.value for t in at.text] == ["before: Squaring: about 5 s", "after: None",
                                          "other: Squaring: about 5 s"]


def test_the_mirror_forgets_as_the_cache_does():
    def f(x: int) -> int:
        return x
    for x in range(feedback.CACHE_ENTRIES + 1):
        feedback.remember(f, (x,), {})
    assert not feedback.is_cached(f, 0)  # least recently used: evicted
    assert feedback.is_cached(f, 1) and feedback.is_cached(f, feedback.CACHE_ENTRIES)
    assert not feedback.is_cached(f, [1])  # unhashable arguments are never taken as cached


# --- Plan a budget: the database-prior rows' searches ------------------------------------------

PLANNER = "pages/5_Plan_a_budget.py"
GCE = {"epsilon": 1.0, "delta": 1e-5, "delta0": 1e-7, "cap": 1}


def _infos(at: AppTest) -> list[str]:
    return [i.value for i in at.info]


def test_planner_announces_a_slow_prior_search(monkeypatch):
    estimate = planner.gce_cost(**GCE, k=30, prior="uniform-nonzero")
    assert estimate.seconds > NOTICE_SECONDS
    monkeypatch.setattr(planner, "gce_plans", lambda **_kw: st.stop())
    at = run_page(PLANNER, k="30", prior="uniform-nonzero", delta0="1e-7")
    assert f"{budgets.notice(estimate)}…" in _infos(at)


def test_planner_default_says_nothing_of_time(monkeypatch):
    monkeypatch.setattr(planner, "gce_plans", lambda **_kw: st.stop())
    at = run_page(PLANNER)
    assert not any("about" in text for text in _infos(at))


def test_prior_search_estimate_grows_with_k():
    costs = [gce.run_cost(k=k, epsilon=1.0, prior="uniform-nonzero", delta0=1e-7, budget=budgets.CLI).seconds
             for k in (10, 30, 100)]
    assert costs == sorted(costs) and costs[0] < costs[-1]
    assert gce.run_cost(k=100, epsilon=1.0, prior=None, delta0=1e-7).seconds == 0.0  # no model: no notice


# --- Attack lab: the trials ----------------------------------------------------------------------

def test_attack_estimate_grows_with_trials():
    few, many = (av.trials_cost(av.attack_of({"mechanism": "gaussian", "trials": t}))
                 for t in (20_000, 1_800_000))
    assert few.seconds < many.seconds
    assert budgets.notice(few) is None  # the page's default
    assert budgets.notice(many) == "Sampling 1,800,000 trials per hypothesis: about 2 s"
