"""Contract of every accounting route (issue 11 item 2; the pattern of dp_accounting's
``privacy_accountant_test.py``): each composition method, each GCE bound and each mechanism
route answers with one :class:`~dpviz.guarantee.Guarantee` that keeps the same promises.

Properties (one test each, parametrized over the routes; new methods in ``composition.METHODS``
and new mechanisms in ``mechanisms.registry.MECHANISMS`` are covered without editing this file):

- shape: ε and δ are floats or ``None``; ``solved`` says which was computed; JSON is finite-or-null;
- kind/status: a value ⇔ status OK ⇔ kind ≠ INFEASIBLE; no value ⇒ a reason; the bracket
  lower ≤ upper, and it agrees with the kind (EXACT: lower = value = upper; UPPER: value = upper);
- the δ of an ε-answer is the δ it holds at: never above the target;
- monotone in δ: a larger target never gives a larger ε, and never loses a value;
- round trip: δ(ε(δ)) ≤ δ for upper bounds (up to rounding of the closed forms' inversion);
- vectorised = scalar: ``delta_curve`` equals ``delta_for_epsilon`` point by point;
- IMPOSSIBLE vs NOT_COMPUTED: below the floor 1 − Π(1 − δ_i) every method proves "impossible";
  over the budget the optimum is "not computed" (or a closed form stands in, as an upper bound).
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest

from dpviz.budget import Budget
from dpviz.composition import METHODS, advanced, basic, homogeneous, kov, optimal, parse_levels
from dpviz.composition.levels import log_no_delta
from dpviz.gce import constraints, paper_bounds, summary
from dpviz.gce.hypotheses import at_least, below
from dpviz.gce.refinement import refinement_bound
from dpviz.guarantee import DIRECTION_TEXT, DeltaCurve, Guarantee, Kind, Status
from dpviz.mechanisms import routes as mechanism_routes
from dpviz.mechanisms.registry import MECHANISMS, make

TINY = Budget(seconds=1e-9, max_bytes=1e18)

LEVELS = {
    "pure": homogeneous(k=20, eps0=0.3, delta0=0.0),
    "approx": homogeneous(k=50, eps0=0.5, delta0=1e-7),
    "one": homogeneous(k=1, eps0=1.0, delta0=1e-3),
    "mixed": parse_levels("0.1:1e-6:30,0.5:0:10"),
    "zero-eps": homogeneous(k=5, eps0=0.0, delta0=1e-4),
}
DELTAS = (0.0, 1e-10, 1e-6, 1e-3, 0.2)
EPSILONS = (0.0, 0.05, 0.5, 2.0, 6.0, 40.0)
ROUND_TRIP_RTOL = 1e-9
"""Closed forms invert ε(δ) in floating point: δ(ε(δ)) may exceed δ by a few ulps, no more."""


def check_shape(g: Guarantee) -> None:
    assert isinstance(g, Guarantee)
    for name in ("epsilon", "delta", "lower", "upper"):
        v = getattr(g, name)
        assert v is None or type(v) is float, (name, v)
    assert g.solved in ("epsilon", "delta")
    assert g.directions in DIRECTION_TEXT
    text = json.dumps(g.to_json(), allow_nan=False)  # finite numbers or null only
    assert json.loads(text)["status"] == g.status.value


def check_kind_status(g: Guarantee) -> None:
    has_value = g.value is not None
    assert (g.status is Status.OK) == (g.kind is not Kind.INFEASIBLE), g
    if g.status is Status.OK:
        assert has_value, g
    else:
        assert g.reason, g
        assert g.value is None, g
    if g.lower is not None and g.upper is not None:
        assert g.lower <= g.upper, g
    if g.status is Status.OK and g.kind is Kind.EXACT:
        assert g.lower == g.value == g.upper, g
    if g.status is Status.OK and g.kind is Kind.UPPER:
        assert g.upper == g.value, g


# ---------------------------------------------------------------- composition methods

@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", list(LEVELS))
def test_composition_answers_keep_the_contract(method: str, case: str) -> None:
    levels = LEVELS[case]
    for delta in DELTAS:
        g = METHODS[method].epsilon_for_delta(levels, delta=delta)
        check_shape(g)
        check_kind_status(g)
        assert g.solved == "epsilon"
        if g.feasible:
            assert g.delta <= delta, (g, delta)  # the δ it holds at, never above the target
    for eps in EPSILONS:
        g = METHODS[method].delta_for_epsilon(levels, epsilon=eps)
        check_shape(g)
        check_kind_status(g)
        assert g.solved == "delta"
        if g.feasible:
            assert g.epsilon == eps and 0.0 <= g.delta <= 1.0


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", list(LEVELS))
def test_epsilon_is_monotone_in_delta(method: str, case: str) -> None:
    levels = LEVELS[case]
    answers = [METHODS[method].epsilon_for_delta(levels, delta=d) for d in DELTAS]
    for small, large in itertools.pairwise(answers):
        if small.feasible:
            assert large.feasible, (small, large)
            assert large.epsilon <= small.epsilon, (small, large)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", list(LEVELS))
def test_delta_of_epsilon_of_delta_is_at_most_delta(method: str, case: str) -> None:
    levels = LEVELS[case]
    for delta in DELTAS:
        g = METHODS[method].epsilon_for_delta(levels, delta=delta)
        if not g.feasible:
            continue
        back = METHODS[method].delta_for_epsilon(levels, epsilon=g.epsilon)
        assert back.feasible, (g, back)
        assert back.delta <= delta * (1 + ROUND_TRIP_RTOL) + 1e-300, (g, back)


@pytest.mark.parametrize("method", list(METHODS))
@pytest.mark.parametrize("case", list(LEVELS))
def test_vectorised_delta_curve_equals_scalar(method: str, case: str) -> None:
    levels = LEVELS[case]
    eps = np.array(EPSILONS)
    curve = METHODS[method].delta_curve(levels, eps)
    assert isinstance(curve, DeltaCurve)
    assert np.array_equal(curve.epsilon, eps)
    for i, e in enumerate(EPSILONS):
        g = METHODS[method].delta_for_epsilon(levels, epsilon=e)
        point = curve.at(i)
        check_kind_status(point)
        if g.feasible:
            assert curve.upper[i] == g.delta, (i, g)
            assert point.delta == g.delta
            assert not np.isnan(curve.lower[i]) or g.lower is None
        else:
            assert np.isnan(curve.upper[i])
            assert point.status is g.status, (point, g)
    ok = ~np.isnan(curve.lower) & ~np.isnan(curve.upper)
    assert np.all(curve.lower[ok] <= curve.upper[ok])


@pytest.mark.parametrize("method", list(METHODS))
def test_below_the_floor_is_impossible_not_uncomputed(method: str) -> None:
    """δ below 1 − Π(1 − δ_i) (or Σδ_i for basic/advanced): no finite ε, by any method."""
    levels = LEVELS["approx"]
    floor = -math.expm1(log_no_delta(levels))
    g = METHODS[method].epsilon_for_delta(levels, delta=floor / 2)
    assert g.status is Status.IMPOSSIBLE and g.kind is Kind.INFEASIBLE, g


def test_over_budget_is_not_computed_or_a_closed_form(monkeypatch: pytest.MonkeyPatch) -> None:
    """The optimum over its budget is never reported as impossible: either a closed form stands
    in (kind UPPER, with the reason) or, when none applies, NOT_COMPUTED."""
    levels = LEVELS["approx"]
    stand_in = METHODS["optimal"].epsilon_for_delta(levels, delta=1e-3, budget=TINY)
    assert stand_in.status is Status.OK and stand_in.kind is Kind.UPPER and stand_in.reason
    # zCDP gives a δ at every ε (0.998 at ε = 0.01, where basic, advanced and KOV give none) ...
    zcdp_only = METHODS["optimal"].delta_for_epsilon(levels, epsilon=0.01, budget=TINY)
    assert zcdp_only.status is Status.OK and zcdp_only.source.startswith("zCDP"), zcdp_only
    # ... so "none applies" needs the other closed forms alone
    monkeypatch.setattr(optimal, "CLOSED_FORMS", (basic, advanced, kov))
    none_applies = METHODS["optimal"].delta_for_epsilon(levels, epsilon=0.01, budget=TINY)
    assert none_applies.status is Status.NOT_COMPUTED, none_applies
    curve = METHODS["optimal"].delta_curve(levels, np.array([0.01, 40.0]), budget=TINY)
    assert curve.at(0).status is Status.NOT_COMPUTED and curve.kind is Kind.UPPER


# ---------------------------------------------------------------- GCE bounds

GCE_QUESTIONS = {
    "nonzero": lambda d: summary.uniform_nonzero(k=8, eps0=0.4, delta0=0.0, delta=d),
    "nonzero-approx": lambda d: summary.uniform_nonzero(k=6, eps0=0.4, delta0=1e-6, delta=d),
    "at-least": lambda d: summary.at_least(k=8, k2=3, eps0=0.4, delta0=0.0, delta=d),
    "cap": lambda d: summary.capped(k=30, cap=3, neighbouring="bounded", eps0=0.4, delta0=1e-6, delta=d),
    "features": lambda d: summary.allowed_set(constraints.feature_columns(common=2, free_only=1, paid_only=2),
                                              neighbouring="unbounded", eps0=0.4, delta0=0.0, delta=d),
}
GCE_SINGLE = {
    "eq34": lambda d: paper_bounds.eq34(k=6, eps0=0.4, delta0=1e-6),
    "cor6": lambda d: paper_bounds.corollary6(k=6, eps0=0.4, delta0=1e-6, delta=d),
    "thm3-split": lambda d: paper_bounds.theorem3(k=3, eps0=0.4, delta0=1e-6, method="basic",
                                                  split=[d / 2, d, d / 3]),
    "refinement": lambda d: refinement_bound(below(k=5, k2=2), at_least(k=5, k2=2), eps0=0.4, delta0=0.0,
                                             delta=d),
}
GCE_DELTAS = (0.0, 1e-8, 1e-5, 1e-2)


@pytest.mark.parametrize("question", list(GCE_QUESTIONS) + list(GCE_SINGLE))
def test_gce_bounds_keep_the_contract(question: str) -> None:
    for delta in GCE_DELTAS:
        answer = GCE_QUESTIONS[question](delta) if question in GCE_QUESTIONS else \
            {question: GCE_SINGLE[question](delta)}
        for key, g in answer.items():
            check_shape(g)
            check_kind_status(g)
            assert g.solved == "epsilon", key
            if g.feasible and key in ("classic", "exact", "refinement"):
                assert g.delta <= delta, (question, key, g)


@pytest.mark.parametrize("question", list(GCE_QUESTIONS))
def test_gce_exact_is_monotone_in_delta_and_below_every_two_sided_bound(question: str) -> None:
    previous = None
    for delta in GCE_DELTAS:
        answer = GCE_QUESTIONS[question](delta)
        exact = answer["exact"]
        if previous is not None and previous.feasible:
            assert exact.feasible and exact.epsilon <= previous.epsilon, (previous, exact)
        previous = exact
        if not (exact.feasible and exact.kind is Kind.EXACT):
            continue
        for key, g in answer.items():  # the exact worst case is the smallest valid two-sided ε at δ ≤ target
            if g.feasible and g.directions == "both" and g.delta <= delta:
                assert exact.epsilon <= g.epsilon * (1 + 1e-12) + 1e-12, (question, key, exact, g)


def test_gce_impossible_and_not_computed_are_told_apart() -> None:
    parallel = constraints.parallel_composition(d=3, eps0=0.4, delta0=1e-6)  # the theorem needs δ0 = 0
    assert parallel.status is Status.IMPOSSIBLE
    capped = summary.capped(k=30, cap=3, neighbouring="unbounded", eps0=0.4, delta0=1e-2, delta=1e-5)
    assert capped["exact"].status is Status.IMPOSSIBLE  # 1 − (1 − δ0)^3 > δ: no ε at all
    # over budget, and every stand-in needs δ ≥ kδ0 = 6e-5: not computed (more time would answer)
    over = summary.at_least(k=60, k2=3, eps0=0.4, delta0=1e-6, delta=1e-5, budget=TINY)["exact"]
    assert over.status is Status.NOT_COMPUTED and "not computed" in over.reason
    stand_in = summary.at_least(k=60, k2=3, eps0=0.4, delta0=1e-6, delta=1e-3, budget=TINY)["exact"]
    assert stand_in.status is Status.OK and stand_in.kind is Kind.UPPER and "not computed" in stand_in.reason


# ---------------------------------------------------------------- mechanism routes

def _default(key: str):
    cls = MECHANISMS[key]
    return make(key, **{p.key: p.default for p in cls.params})


@pytest.mark.parametrize("key", list(MECHANISMS))
@pytest.mark.parametrize("subsampled", [False, True])
def test_mechanism_routes_keep_the_contract(key: str, subsampled: bool) -> None:
    mech = _default(key)
    if subsampled:
        cls = MECHANISMS[key]
        mech = make(key, sampling_rate=0.1, **{p.key: p.default for p in cls.params})
    parts = [(mech, 20)]
    for target in ({"delta": 1e-6}, {"epsilon": 1.0}):
        results = mechanism_routes.routes(parts, **target)
        assert results
        solved = "delta" if "epsilon" in target else "epsilon"
        for route, g in results.items():
            check_shape(g)
            check_kind_status(g)
            assert g.solved == solved, (route, g)
            if g.feasible and solved == "epsilon":
                assert g.delta <= target["delta"], (route, g)
            if g.feasible and solved == "delta":
                assert g.epsilon == target["epsilon"], (route, g)
        name, best = mechanism_routes.best(results, solved=solved)
        check_shape(best)
        check_kind_status(best)
        for route, g in results.items():
            if best.feasible and g.status is Status.OK and g.kind is not Kind.LOWER and g.upper is not None:
                assert best.upper <= g.upper, (name, route)
            if best.feasible and best.lower is not None and g.status is Status.OK and g.upper is not None:
                assert best.lower <= g.upper * (1 + 1e-9) + 1e-12, (route, g, best)


@pytest.mark.parametrize("key", ["gaussian", "laplace", "randomized-response"])
def test_pld_delta_curve_and_scalar_brackets_hold_the_same_truth(key: str) -> None:
    """The PLD's δ(ε) over an array and its scalar δ at each ε are two certified brackets of the same
    number: each lies in [lower, upper] and the two brackets intersect."""
    from dpviz.pld import accountant

    parts = [(_default(key).law, 10)]
    eps = np.array([0.5, 1.0, 2.0])
    curve = accountant.delta_curve(parts, epsilons=eps)
    assert isinstance(curve, DeltaCurve)
    for i, e in enumerate(eps):
        g = accountant.delta_bounds(parts, epsilon=float(e))
        check_shape(g)
        check_kind_status(g)
        point = curve.at(i)
        check_kind_status(point)
        if g.feasible and point.feasible and g.lower is not None and point.lower is not None:
            assert point.lower <= g.upper * (1 + 1e-9) and g.lower <= point.upper * (1 + 1e-9), (point, g)


LOWER_LE_UPPER_CASES = ((1, {"delta": 1e-3}), (20, {"delta": 1e-6}), (20, {"epsilon": 1.0}),
                        (5, {"delta": 0.0}))
"""(k, target) of the sweep below: ε at moderate and small δ, δ at ε, and pure ε at δ = 0."""

ASYMMETRIC_MIXES = {
    "asymmetric-pair": [({"p": "0.99,0.01", "q": "0.5,0.5"}, 1)],
    "two-asymmetric-pairs": [({"p": "0.5,0.5", "q": "0.9,0.1"}, 1), ({"p": "0.99,0.01", "q": "0.5,0.5"}, 1)],
}
"""Finite pairs whose two directions differ (REVIEW R2, R6): one-direction shortcuts contradict here."""


def _check_lower_le_upper(results: dict[str, Guarantee], solved: str) -> None:
    lowers = {k: g.lower for k, g in results.items() if g.status is Status.OK and g.lower is not None
              and (k in mechanism_routes.LOWER_ROUTES or g.kind is Kind.EXACT)}
    uppers = {k: g.upper for k, g in results.items()
              if g.status is Status.OK and g.kind is not Kind.LOWER and g.upper is not None}
    if lowers and uppers:
        lo_key, lo = max(lowers.items(), key=lambda x: x[1])
        up_key, up = min(uppers.items(), key=lambda x: x[1])
        assert not mechanism_routes.disagree(lo, up, solved), (lo_key, lo, up_key, up, results)


@pytest.mark.parametrize("key", list(MECHANISMS))
@pytest.mark.parametrize("rate", [None, 0.1])
def test_largest_certified_lower_is_at_most_smallest_sound_upper(key: str, rate: float | None) -> None:
    """Over every route (``compare``: PLD and buckets too), the largest certified lower bound is at most
    the smallest sound upper bound, up to round-off (``routes.CLAMP_RTOL``): a contradiction is a bug."""
    mech = make(key, sampling_rate=rate, **{p.key: p.default for p in MECHANISMS[key].params})
    for k, target in LOWER_LE_UPPER_CASES:
        solved = "delta" if "epsilon" in target else "epsilon"
        results = mechanism_routes.routes([(mech, k)], compare=True, **target)
        _check_lower_le_upper(results, solved)
        assert "routes disagree" not in mechanism_routes.best(results, solved=solved)[1].note


@pytest.mark.parametrize("mix", list(ASYMMETRIC_MIXES))
@pytest.mark.parametrize("rate", [None, 0.1])
def test_lower_le_upper_for_asymmetric_pairs(mix: str, rate: float | None) -> None:
    parts = [(make("finite", sampling_rate=rate, **pq), c) for pq, c in ASYMMETRIC_MIXES[mix]]
    for target in ({"delta": 0.0}, {"delta": 1e-3}, {"delta": 1e-6}, {"epsilon": 1.0}):
        solved = "delta" if "epsilon" in target else "epsilon"
        _check_lower_le_upper(mechanism_routes.routes(parts, compare=True, **target), solved)
