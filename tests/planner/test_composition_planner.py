"""The composition planner (issue 9): every answer fits when composed forward, the next value up
does not; closed forms; optimal ≥ KOV ≥ basic allowances."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from dpviz.composition import METHODS, homogeneous, parse_levels
from dpviz.planner import composition as pc
from dpviz.planner.result import fits_state

CASES = [
    dict(k=1, epsilon=1.0, delta=1e-5, delta0=0.0),
    dict(k=100, epsilon=1.0, delta=1e-5, delta0=0.0),
    dict(k=100, epsilon=1.0, delta=1e-5, delta0=1e-8),
    dict(k=2000, epsilon=0.5, delta=1e-6, delta0=0.0),
    dict(k=37, epsilon=3.0, delta=1e-3, delta0=1e-6),
]


def _forward(method: str, k: int, eps0: float, delta0: float, delta: float):
    return METHODS[method].epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=delta0), delta=delta)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{k}{v}" for k, v in c.items()))
def test_eps0_fits_and_next_up_does_not(case: dict) -> None:
    plans = pc.max_eps0(**case)
    assert set(plans) == set(METHODS)  # every method, including ones added later
    for key, plan in plans.items():
        assert plan.feasible, (key, plan.reason)
        g = _forward(key, case["k"], plan.value, case["delta0"], case["delta"])
        assert g.feasible and g.epsilon <= case["epsilon"], (key, g)
        assert g.delta <= case["delta"]
        up = _forward(key, case["k"], plan.value * (1 + 1e-9), case["delta0"], case["delta"])
        assert fits_state(up, case["epsilon"]) is not True, (key, up)
        assert plan.check.epsilon == g.epsilon and f"{case['k']:,} ×" in plan.check_text


def test_basic_is_epsilon_over_k() -> None:
    for k in (1, 3, 100, 12345):
        p = pc.max_eps0(k=k, epsilon=0.7, delta=1e-5, methods=["basic"])["basic"]
        assert p.value * k <= 0.7 and p.value == pytest.approx(0.7 / k, rel=1e-9)


def test_advanced_matches_an_independent_root() -> None:
    k, eps, delta = 250, 1.0, 1e-6

    def f(e0: float) -> float:
        return math.sqrt(2 * k * math.log(1 / delta)) * e0 + k * e0 * math.expm1(e0) - eps

    ref = brentq(f, 1e-9, 1.0, xtol=1e-15, rtol=1e-15)
    p = pc.max_eps0(k=k, epsilon=eps, delta=delta, methods=["advanced"])["advanced"]
    assert p.value == pytest.approx(ref, rel=1e-9)
    assert p.value <= ref * (1 + 1e-12)


def test_issue_example_optimal_eps0() -> None:
    """The issue's line: composing 100 × ε0 = 0.02706 gives ε = 0.99999… ≤ 1."""
    p = pc.max_eps0(k=100, epsilon=1.0, delta=1e-5, methods=["optimal"])["optimal"]
    assert round(p.value, 5) == 0.02706
    assert p.check.kind.value == "exact" and p.check.epsilon <= 1.0
    assert p.check_text.startswith("composing 100 × ε0 = 0.0270592")


def test_no_eps0_fits_when_delta0_terms_exceed_delta() -> None:
    plans = pc.max_eps0(k=1000, epsilon=1.0, delta=1e-5, delta0=1e-6)
    for key, p in plans.items():
        assert p.value is None and p.reason and p.to_json()["eps0"] is None, key
        assert p.to_json()["status"] == "impossible"


@pytest.mark.parametrize("eps0", [0.01, 0.003, 0.05])
def test_max_k_fits_and_k_plus_one_does_not(eps0: float) -> None:
    plans = pc.max_k(eps0=eps0, epsilon=1.0, delta=1e-5)
    for key, p in plans.items():
        k = int(p.value)
        assert _forward(key, k, eps0, 0.0, 1e-5).epsilon <= 1.0
        assert _forward(key, k + 1, eps0, 0.0, 1e-5).epsilon > 1.0, key
    assert plans["basic"].value == math.floor(1.0 / eps0 + 1e-9) or eps0 == 0.003
    assert plans["optimal"].value >= plans["kov"].value >= plans["basic"].value


def test_max_k_none_and_limit() -> None:
    assert pc.max_k(eps0=5.0, epsilon=1.0, delta=1e-5, methods=["basic"])["basic"].value is None
    p = pc.max_k(eps0=1e-9, epsilon=1.0, delta=1e-5, methods=["kov"], k_max=1000)["kov"]
    assert p.value == 1000 and "1,000" in p.note


def test_factor_of_a_mix_fits_and_next_up_does_not() -> None:
    levels = parse_levels("0.1:1e-7:30,0.5:0:10")
    plans = pc.max_factor(levels, epsilon=1.0, delta=1e-5)
    for key, p in plans.items():
        m = METHODS[key]
        assert m.epsilon_for_delta(pc.scaled(levels, p.value), delta=1e-5).epsilon <= 1.0
        up = m.epsilon_for_delta(pc.scaled(levels, p.value * (1 + 1e-9)), delta=1e-5)
        assert fits_state(up, 1.0) is not True, key
    assert plans["basic"].value == pytest.approx(1.0 / (30 * 0.1 + 10 * 0.5), rel=1e-9)
    assert plans["optimal"].value >= plans["kov"].value * (1 - 1e-9) >= plans["basic"].value * (1 - 2e-9)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(1, 3000), epsilon=st.floats(0.05, 8.0), log_delta=st.floats(-10, -2),
       delta0_share=st.sampled_from([0.0, 1e-3, 0.1]))
def test_optimal_allows_at_least_kov_at_least_basic(k: int, epsilon: float, log_delta: float,
                                                     delta0_share: float) -> None:
    delta = 10.0**log_delta
    delta0 = delta0_share * delta / k
    plans = pc.max_eps0(k=k, epsilon=epsilon, delta=delta, delta0=delta0, methods=["basic", "kov", "optimal"])
    b, kv, o = (plans[m].value for m in ("basic", "kov", "optimal"))
    assert b is not None and kv is not None and o is not None
    assert o >= kv * (1 - 1e-9)
    assert kv >= b * (1 - 1e-9)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(epsilon=st.floats(0.1, 5.0), ratio=st.floats(0.002, 0.5))
def test_max_k_optimal_at_least_kov_at_least_basic(epsilon: float, ratio: float) -> None:
    plans = pc.max_k(eps0=epsilon * ratio, epsilon=epsilon, delta=1e-6, methods=["basic", "kov", "optimal"])
    b, kv, o = (plans[m].value for m in ("basic", "kov", "optimal"))
    assert b is not None and kv is not None and o is not None
    assert o >= kv >= b


def test_a_method_added_later_is_planned_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """The planner reads ``METHODS``: a new entry gets its row without a change here."""
    from dpviz.composition import Method, basic

    extra = dict(METHODS) | {"basic_again": Method("basic_again", "Basic, again", basic)}
    monkeypatch.setattr(pc, "METHODS", extra)
    plans = pc.max_eps0(k=20, epsilon=1.0, delta=1e-5, methods=list(extra))
    assert list(plans) == list(extra)
    assert plans["basic_again"].value == plans["basic"].value == pytest.approx(0.05, rel=1e-9)


def test_k_is_never_one_whose_forward_epsilon_is_above_the_target() -> None:
    """Regression (found by the plan CLI fuzz): δ_opt(ε) ≤ δ held at k = 1 but ε(δ), rounded up,
    was 1e-5 + 1 ulp > ε = 1e-5; the answer k = 1 did not fit by its own check."""
    plans = pc.max_k(eps0=1e-5, epsilon=1e-5, delta=1e-5, delta0=1e-5)
    for key, p in plans.items():
        if p.feasible:
            assert p.check.epsilon <= 1e-5, key
        else:
            assert p.value is None and p.reason, key


def test_delta_zero_optimal_is_pure_composition() -> None:
    """Regression: at δ = 0 the score compared ∞ with ∞ (NaN) and the optimum found no ε0; the
    exact answer at δ = 0 is kε0 ≤ ε (δ_opt(ε) = 0 exactly when ε ≥ kε0)."""
    plans = pc.max_eps0(k=10, epsilon=1.0, delta=0.0)
    assert plans["optimal"].value == pytest.approx(0.1, rel=1e-9) and plans["optimal"].check.epsilon <= 1.0
    k = pc.max_k(eps0=0.1, epsilon=1.0, delta=0.0)["optimal"]
    assert k.value in (9, 10) and k.check.epsilon <= 1.0  # 10 × 0.1 is 1 + 1 ulp once rounded up soundly


def test_k_delta0_above_the_total_delta_fits_nothing_at_once() -> None:
    """k·δ0 > δ: no ε0 fits by any method (the optimum's floor 1 − (1 − δ0)^k is above δ). Each
    method's search says so after its probe at the smallest ε0, not after halving down to it."""
    from dpviz.composition import METHODS
    from dpviz.planner import composition

    calls: dict[str, int] = {}
    original = composition.score_fn

    def counting(method, **kw):  # type: ignore[no-untyped-def]
        score = original(method, **kw)

        def counted(levels):  # type: ignore[no-untyped-def]
            calls[method.key] = calls.get(method.key, 0) + 1
            return score(levels)
        return counted

    composition.score_fn = counting
    try:
        plans = composition.max_eps0(k=50, epsilon=1.0, delta=1e-5, delta0=1e-6)
    finally:
        composition.score_fn = original
    assert set(plans) == set(METHODS)
    assert all(not p.feasible and p.value is None for p in plans.values())
    assert all(n <= 2 for n in calls.values()), calls


def test_utility_series_gives_the_tables_answers() -> None:
    """One answer: the utility figure's ε0 at each of its k is the ε0 the table (and ``plan eps0``)
    gives for that k, bit for bit; only the check of the next value up is left out."""
    from dpviz.planner import composition
    from dpviz.views import planner

    ks, series = planner.eps0_series(epsilon=0.7, delta=3e-6, delta0=1e-8, k_max=300)
    for k, at_k in list(zip(ks, series, strict=True))[::3]:
        table = composition.max_eps0(k=int(k), epsilon=0.7, delta=3e-6, delta0=1e-8)
        assert {m: p.value for m, p in at_k.items()} == {m: p.value for m, p in table.items()}
        assert all(p.beyond is None for p in at_k.values())
        assert any(p.beyond is not None for p in table.values())
