"""Single-step discretisation: optimistic ≤ exact ≤ pessimistic for every ε (exact laws)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import canonical, finite, gaussian, geometric, laplace, randomized_response
from dpviz.mechanisms.subsampling import subsample
from dpviz.pld import discretize
from dpviz.pld.law import LossLaw

# The exact law's δ(ε) is evaluated as P(L>ε) − e^ε Q(L>ε) in float: absolute error ≲ 1e-15·e^ε.
FLOAT_SLACK = 1e-13


def _laws(kind: str, x: float, rate: float | None) -> tuple[LossLaw, ...]:
    base = {
        "gaussian": lambda: gaussian.loss_law(sigma=x),
        "laplace": lambda: laplace.loss_law(scale=x),
        "rr": lambda: randomized_response.loss_law(eps0=1.0 / x),
        "geometric": lambda: geometric.loss_law(eps0=1.0 / x, sensitivity=2),
        "canonical": lambda: canonical.loss_law(eps0=1.0 / x, delta0=1e-3),
    }[kind]()
    return base.both_directions() if rate is None else subsample(base, rate=rate)


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(["gaussian", "laplace", "rr", "geometric", "canonical"]),
       x=st.floats(0.3, 5.0), h=st.floats(1e-3, 0.2), rate=st.one_of(st.none(), st.floats(0.01, 0.9)),
       eps=st.lists(st.floats(-2.0, 6.0), min_size=5, max_size=5))
def test_bounds_bracket_exact_law(kind, x, h, rate, eps):
    for law in _laws(kind, x, rate):
        up = discretize.pessimistic(law, h=h)
        lo = discretize.optimistic(law, h=h)
        for e in eps:
            exact = float(law.delta(e)[0])
            scale = FLOAT_SLACK * max(1.0, math.exp(e))
            assert lo.delta(e) <= exact + scale
            assert exact <= up.delta(e) + scale


def test_atoms_on_grid_are_exact():
    law = randomized_response.loss_law(eps0=0.5)
    for g in (discretize.pessimistic(law, h=0.5 / 50), discretize.optimistic(law, h=0.5 / 50)):
        for e in (0.0, 0.1, 0.3):
            assert g.delta(e) == pytest.approx(float(law.delta(e)[0]), rel=1e-12)  # round-off only


def test_second_order_accuracy():
    """Halving h divides the single-step gap by ≈4 (connect-the-dots is O(h²))."""
    law = gaussian.loss_law(sigma=1.0)
    gaps = []
    for h in (0.02, 0.01):
        e = 0.505  # not a grid point of either grid
        gaps.append(discretize.pessimistic(law, h=h).delta(e) - discretize.optimistic(law, h=h).delta(e))
    assert 3.0 < gaps[0] / gaps[1] < 5.0  # ratio 4 for a second-order method, 2 for rounding


def test_finite_pair_validation():
    from dpviz.validation import ParameterError
    with pytest.raises(ParameterError, match="p must be"):
        finite.loss_law(p=[0.5, 0.6], q=[0.5, 0.5])
    law = finite.loss_law(p=[0.5, 0.5, 0.0], q=[0.2, 0.3, 0.5])
    assert law.q_neg_inf == pytest.approx(0.5)
    assert float(law.delta(0.0)[0]) == pytest.approx(0.3 + 0.2)  # Σ (P − Q)_+


def test_laplace_tails_sum_to_one():
    law = laplace.loss_law(scale=0.7)
    for side in ("p", "q"):
        c = law.continuous
        cont = c.mass(np.array([c.lo]), np.array([c.hi]), side=side)[0]
        atoms = (law.p if side == "p" else law.q).sum()
        assert cont + atoms == pytest.approx(1.0, abs=1e-15)


@pytest.mark.parametrize("h", [1e-5, 2e-4])
def test_split_margin_covers_the_round_off_of_tail_differences(h):
    """Review R8: the chord split's numerator P_c − e^{ε}Q_c is a difference of tails; its float
    error, against mpmath at 50 digits, must be within the margin of each cell (the old margin
    2e-14·P_c/(1 − e^{−h}) was 300-5,500× too small in the bulk of Gaussian μ = 1)."""
    import mpmath
    law = gaussian.loss_law(sigma=1.0)  # L ~ N(1/2, 1) under P, N(−1/2, 1) under Q
    c = law.continuous
    eps = np.array([-1.3, -0.2, 0.0, 0.35, 0.5, 1.1, 2.7]) // h * h
    b = eps + h
    pc, tp = c.mass_and_tail(eps, b, side="p")
    qc, tq = c.mass_and_tail(eps, b, side="q")
    num = pc - np.exp(eps + np.log(qc))
    m = discretize.split_margin(pc, qc, tp, tq, eps, h, discretize._SPLIT_MARGIN)
    worst_old = 0.0
    for i, (a_, b_) in enumerate(zip(eps, b, strict=True)):
        with mpmath.workdps(50):
            a_m, b_m = mpmath.mpf(float(a_)), mpmath.mpf(float(b_))
            p_m = mpmath.ncdf(b_m - 0.5) - mpmath.ncdf(a_m - 0.5)
            q_m = mpmath.ncdf(b_m + 0.5) - mpmath.ncdf(a_m + 0.5)
            exact = p_m - mpmath.exp(a_m) * q_m
            rel = float(abs(mpmath.mpf(float(num[i])) - exact) / (pc[i] * -math.expm1(-h)))
        assert rel <= m[i], (a_, rel, m[i])
        worst_old = max(worst_old, rel / (2e-14 / -math.expm1(-h)))
    if h == 1e-5:
        assert worst_old > 1.0  # the old margin did not cover it: the test can fail
