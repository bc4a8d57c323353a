"""Issue 20, "Feedback": a change the core estimates at more than about a second says so at once,
naming what runs and the estimated time; a cheap setting and a cached answer say nothing. Tested on
the estimates themselves (``dpviz.budget`` units), never on a clock."""

from __future__ import annotations

import streamlit as st
from streamlit.testing.v1 import AppTest

from dpviz import budget as budgets
from dpviz.budget import NOTICE_SECONDS, Cost
from dpviz.planner import gce, noise_cost
from dpviz.ui import feedback
from dpviz.views import attack as av
from dpviz.views import database_priors as dp
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


# --- Plan a budget: the noise calibration (σ search) ---------------------------------------------

NOISE = {"epsilon": 1.0, "delta": 1e-5, "sensitivity": 1.0}


def test_planner_announces_a_slow_noise_search(monkeypatch):
    """A small sampling rate: the subsampled Gaussian's σ is searched with the PLD accountant
    (measured 2 to 3.4 s of CPU at k = 1,000, q = 0.001, benchmarks/calibrate_feedback.py)."""
    estimate = planner.noise_cost(**NOISE, k=1000, sampling_rate=0.001)
    assert estimate.seconds > NOTICE_SECONDS
    text = budgets.notice(estimate)
    assert text is not None and text.startswith("Searching the smallest σ of the Gaussian: about ")
    monkeypatch.setattr(planner, "noise_plans", lambda **_kw: st.stop())
    at = run_page(PLANNER, k="1000", sampling_rate="0.001")
    assert f"{text}…" in _infos(at)


def test_noise_search_estimate_grows_as_the_sampling_rate_falls():
    costs = [planner.noise_cost(**NOISE, k=1000, sampling_rate=q).seconds for q in (0.1, 0.01, 0.001)]
    assert costs == sorted(costs) and costs[0] < costs[-1]
    assert budgets.notice(planner.noise_cost(**NOISE, k=1000, sampling_rate=0.01)) is None


def test_a_closed_form_noise_search_costs_nothing():
    """The Gaussian without subsampling is calibrated by its exact closed form (Steinke Cor. 8)."""
    assert noise_cost.search_cost("gaussian", k=10_000, epsilon=1.0, delta=1e-5, sensitivity=1.0).seconds == 0
    assert noise_cost.search_cost("gaussian", k=10_000, epsilon=1.0, delta=1e-5, sensitivity=1.0,
                                  sampling_rate=0.01).seconds > 0
    # the page's default (q = 1): Laplace, geometric, randomized response and the discrete Gaussian
    default = planner.noise_cost(**NOISE, k=100, sampling_rate=1.0)
    assert default.seconds > 0 and budgets.notice(default) is None


# --- Database priors: the exact worst case --------------------------------------------------------

PRIORS = "pages/3_Database_priors.py"
SLOW_PRIOR = {"preset": "custom", "kind": "uniform-nonzero", "k": 20000, "delta0": 1e-7}
"""In at least one of 20,000 databases, δ0 > 0: the exact worst case's count classes (measured
0.8 s of CPU on a quiet machine, benchmarks/calibrate_feedback.py)."""


def _prior_values(change: dict) -> dict:
    return {**dp.SPEC.defaults(), **change}


def test_priors_announce_a_slow_exact_worst_case(monkeypatch):
    estimate = dp.build_cost(**_prior_values(SLOW_PRIOR))
    assert estimate.seconds > NOTICE_SECONDS
    text = budgets.notice(estimate)
    assert text is not None and text.startswith("Computing the exact worst case of 20,000 databases: about ")
    monkeypatch.setattr(dp, "build_question", lambda *_a, **_kw: st.stop())
    at = run_page(PRIORS, preset=dp.PRESET_TITLES["custom"], kind=dp.KIND_LABELS["uniform-nonzero"],
                  k="20000", delta0="1e-7")
    assert f"{text}…" in _infos(at)


def test_priors_default_says_nothing_of_time(monkeypatch):
    monkeypatch.setattr(dp, "build_question", lambda *_a, **_kw: st.stop())
    at = run_page(PRIORS)
    assert not any(": about " in text for text in _infos(at))  # the scenario's own text says "about"
    assert budgets.notice(dp.build_cost(**dp.SPEC.defaults())) is None


def test_priors_estimate_grows_with_k_and_stays_within_the_budget():
    costs = [dp.build_cost(**_prior_values({**SLOW_PRIOR, "k": k})).seconds for k in (100, 2000, 20000)]
    assert costs == sorted(costs) and costs[0] < costs[-1]
    # each route is counted only where its share of the page's budget admits it: never above it
    assert dp.build_cost(**_prior_values({**SLOW_PRIOR, "k": 100000})).seconds <= budgets.PAGE.seconds
