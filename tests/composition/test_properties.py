"""Property tests (hypothesis): monotonicity of the optimum and orderings that are theorems."""

from __future__ import annotations

import math

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpviz.composition import METHODS, Level, homogeneous, optimal

# Small k keeps each example fast; 60 examples per property keeps the file at a few seconds.
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

ks = st.integers(min_value=1, max_value=300)
eps0s = st.floats(min_value=1e-3, max_value=3.0)
delta0s = st.one_of(st.just(0.0), st.floats(min_value=1e-12, max_value=1e-3))
deltas = st.floats(min_value=1e-12, max_value=0.5)

# Two exact answers that should be ordered may tie (both kε0, both 0): the code rounds
# losses outward by one ulp and moves ε up by ulps for soundness, so ties can come out
# a few ulps apart. 1e-12 relative (+1e-15 absolute for values at 0) allows that only.
REL, ABS = 1e-12, 1e-15


def _eps(levels, delta: float) -> float:
    """Optimal ε(δ), +∞ where infeasible (no ε reaches δ)."""
    g = optimal.epsilon_for_delta(levels, delta=delta)
    return g.epsilon if g.feasible else math.inf


def _le(a: float, b: float) -> bool:
    return a <= b or a <= b * (1 + REL) + ABS


@SETTINGS
@given(k=ks, eps0=eps0s, delta0=delta0s, delta=deltas)
def test_optimal_epsilon_non_decreasing_in_k(k, eps0, delta0, delta) -> None:
    a = _eps(homogeneous(k=k, eps0=eps0, delta0=delta0), delta)
    b = _eps(homogeneous(k=k + 1, eps0=eps0, delta0=delta0), delta)
    assert _le(a, b), (a, b)


@SETTINGS
@given(k=ks, eps0=eps0s, factor=st.floats(min_value=1.0, max_value=3.0), delta0=delta0s, delta=deltas)
def test_optimal_epsilon_non_decreasing_in_eps0(k, eps0, factor, delta0, delta) -> None:
    a = _eps(homogeneous(k=k, eps0=eps0, delta0=delta0), delta)
    b = _eps(homogeneous(k=k, eps0=eps0 * factor, delta0=delta0), delta)
    assert _le(a, b), (a, b)


@SETTINGS
@given(k=ks, eps0=eps0s, delta0=delta0s, extra=st.floats(min_value=0.0, max_value=1e-3), delta=deltas)
def test_optimal_epsilon_non_decreasing_in_delta0(k, eps0, delta0, extra, delta) -> None:
    a = _eps(homogeneous(k=k, eps0=eps0, delta0=delta0), delta)
    b = _eps(homogeneous(k=k, eps0=eps0, delta0=delta0 + extra), delta)
    assert _le(a, b), (a, b)


@SETTINGS
@given(k=ks, eps0=eps0s, delta0=delta0s, d1=deltas, d2=deltas)
def test_optimal_epsilon_non_increasing_in_delta(k, eps0, delta0, d1, d2) -> None:
    lo, hi = sorted((d1, d2))
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    assert _le(_eps(levels, hi), _eps(levels, lo))


@SETTINGS
@given(k=ks, eps0=eps0s, delta0=delta0s, e1=st.floats(0.0, 50.0), e2=st.floats(0.0, 50.0))
def test_optimal_delta_non_increasing_in_epsilon_and_in_unit_interval(k, eps0, delta0, e1, e2) -> None:
    lo, hi = sorted((e1, e2))
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    d_lo = optimal.delta_for_epsilon(levels, epsilon=lo).delta
    d_hi = optimal.delta_for_epsilon(levels, epsilon=hi).delta
    assert 0.0 <= d_hi <= 1.0 and 0.0 <= d_lo <= 1.0
    assert _le(d_hi, d_lo)
    floor = -math.expm1(k * math.log1p(-delta0))
    assert d_hi >= floor * (1 - REL)  # never below the mass of the δ events


levels_strategy = st.lists(
    st.tuples(st.floats(0.01, 2.0), delta0s, st.integers(1, 12)), min_size=1, max_size=3,
).map(lambda rows: tuple(Level(epsilon=e, delta=d, count=n) for e, d, n in rows))


@SETTINGS
@given(levels=st.one_of(st.builds(lambda k, e, d: homogeneous(k=k, eps0=e, delta0=d), ks, eps0s, delta0s),
                        levels_strategy),
       delta=deltas)
def test_optimal_below_every_bound_in_epsilon(levels, delta) -> None:
    """Basic, advanced and KOV are theorems (upper bounds), so whenever one gives an ε for
    δ, the optimum is feasible and not larger; and KOV ≤ basic (its first term is Σε)."""
    opt = optimal.epsilon_for_delta(levels, delta=delta)
    got = {key: m.epsilon_for_delta(levels, delta=delta) for key, m in METHODS.items()}
    for key in ("basic", "advanced", "kov"):
        if got[key].feasible:
            assert opt.feasible, key
            assert _le(opt.epsilon, got[key].epsilon), (key, opt.epsilon, got[key].epsilon)
    if got["basic"].feasible:
        assert got["kov"].feasible and _le(got["kov"].epsilon, got["basic"].epsilon)


@SETTINGS
@given(levels=st.one_of(st.builds(lambda k, e, d: homogeneous(k=k, eps0=e, delta0=d), ks, eps0s, delta0s),
                        levels_strategy),
       eps=st.floats(0.0, 100.0))
def test_optimal_below_every_bound_in_delta(levels, eps) -> None:
    opt = optimal.delta_for_epsilon(levels, epsilon=eps)
    assert opt.feasible and 0.0 <= opt.delta <= 1.0
    for key in ("basic", "advanced", "kov"):
        g = METHODS[key].delta_for_epsilon(levels, epsilon=eps)
        if g.feasible:
            assert _le(opt.delta, g.delta), (key, opt.delta, g.delta)
