"""Composition in two stages (``dpviz.pld.staged``, docs/MATH.md §17.10).

Independent routes: exact integer convolutions (the entrywise lower grid), the Gaussian closed form
(Steinke Cor. 8: k Gaussian steps are one Gaussian of μ = √k/σ), the single-step grids themselves
(a grid discretised again is an upper or lower bound of it at every ε), and the exact Fourier route of
``test_contour`` for the subsampled Gaussians the prediction stages.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpviz.budget import Budget, OverBudget
from dpviz.mechanisms import gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import cost, discretize, power, refine, staged
from dpviz.pld.composed import compose
from dpviz.pld.grid import GridPLD
from dpviz.pld.staged import Stages

from .test_power import SCALE_BITS, _exact_power, _integer_grid


def test_the_entrywise_lower_grid_is_below_the_exact_convolution_entry_by_entry() -> None:
    """``entrywise``: every mass lowered by the bound on its own error, so each one is ≤ the exact
    composed mass (integers composed in Python), with no round-off bound left to charge. Tilted far
    into the tail, where the transform's noise is larger than the masses, the plain result is above
    the exact one somewhere: the lowering is needed."""
    h = 0.01
    ints = _integer_grid(300, 3)
    g = GridPLD(h=h, lo=-100, mass=ints * 2.0**-SCALE_BITS / 1000.0, p_inf=0.0, pessimistic=False)
    exact_ints, factors = _exact_power([(ints, 12)])
    exact = np.asarray([v * (2.0**-SCALE_BITS / 1000.0) ** factors for v in exact_ints])
    for tilt_at in (None, 25.0):
        low = power.compose_power([(g, 12)], tail=1e-300, tilt_at=tilt_at, entrywise=True)
        assert low.err == 0.0
        idx = low.lo + 1200 + np.arange(low.mass.size)
        assert np.all(low.mass <= exact[idx])
    plain = power.compose_power([(g, 12)], tail=1e-300, tilt_at=25.0)
    idx = plain.lo + 1200 + np.arange(plain.mass.size)
    assert np.any(plain.mass > exact[idx])


def test_an_inherited_round_off_bound_is_carried_through_the_power() -> None:
    """An upper grid's tilted error e, composed k times at its θ, adds at least k·e·e^{(k−1)λ}
    (λ = ln Σ g·e^{θL}, the telescoping of §17.10) to the composed bound."""
    law = gaussian.loss_law(sigma=3.0)
    g = discretize.pessimistic(law, h=0.01, tail=1e-14)
    theta, k, e = 1.5, 40, 1e-9
    lam = math.log(float(np.sum(g.mass * np.exp(theta * g.losses))))
    clean = power.compose_power([(g, k)], tail=1e-12, theta=theta)
    with_err = GridPLD(h=g.h, lo=g.lo, mass=g.mass, p_inf=g.p_inf, pessimistic=True, err=e, tilt=theta)
    carried = power.compose_power([(with_err, k)], tail=1e-12, theta=theta)
    assert carried.err - clean.err >= k * e * math.exp((k - 1) * lam) * (1 - 1e-9)
    assert carried.delta(2.0) > clean.delta(2.0)


def test_an_infinite_inherited_bound_gives_a_grid_that_says_nothing() -> None:
    """A first stage whose round-off bound overflowed (review R1) is not an error: the second stage's
    grid is not informative either, and reads as no information (δ = 1), never as a bound."""
    g = discretize.pessimistic(gaussian.loss_law(sigma=3.0), h=0.01, tail=1e-14)
    g = GridPLD(h=g.h, lo=g.lo, mass=g.mass, p_inf=g.p_inf, pessimistic=True, err=math.inf, tilt=1.0)
    out = power.compose_power([(g, 5)], tail=1e-12, theta=1.0)
    assert not out.informative and out.delta(3.0) == 1.0


@pytest.mark.parametrize("case", ["lower", "other theta", "no theta"])
def test_an_inherited_bound_is_refused_where_it_cannot_be_carried(case: str) -> None:
    law = gaussian.loss_law(sigma=3.0)
    pess = case != "lower"
    g = (discretize.pessimistic if pess else discretize.optimistic)(law, h=0.01, tail=1e-14)
    g = GridPLD(h=g.h, lo=g.lo, mass=g.mass, p_inf=g.p_inf, pessimistic=pess, err=1e-12, tilt=1.0)
    theta = {"lower": 1.0, "other theta": 2.0, "no theta": None}[case]
    with pytest.raises(ValueError, match="round-off"):
        power.compose_power([(g, 5)], tail=1e-12, theta=theta)


@pytest.mark.parametrize("ratio", [2, 5, 13])
def test_a_grid_discretised_again_bounds_it_from_its_side(ratio: int) -> None:
    """Connect-the-dots of a grid is above it at every ε, the post-processing below it (at grid points
    connect-the-dots is exact: the readings there may differ by their own round-off, 1e-12 relative)."""
    law = subsample_remove(gaussian.loss_law(sigma=1.2), rate=0.05)
    up = power.compose_power([(discretize.pessimistic(law, h=1e-3, tail=1e-14), 30)], tail=1e-14)
    down = power.compose_power([(discretize.optimistic(law, h=1e-3, tail=1e-14), 30)], tail=1e-14,
                               entrywise=True)
    up2, down2 = staged.regridded(up, ratio), staged.regridded(down, ratio)
    assert up2.h == pytest.approx(ratio * up.h) and up2.err >= up.err
    for eps in np.linspace(-0.5, 4.0, 60):
        assert up2.delta(float(eps)) >= up.delta(float(eps)) * (1 - 1e-11)
        assert down2.delta(float(eps)) <= down.delta(float(eps)) * (1 + 1e-11)


def test_a_lower_grid_with_a_round_off_bound_is_not_discretised_again() -> None:
    law = gaussian.loss_law(sigma=2.0)
    down = power.compose_power([(discretize.optimistic(law, h=1e-3, tail=1e-14), 3000)], tail=1e-14)
    assert down.err > 0
    with pytest.raises(ValueError, match="round-off"):
        staged.regridded(down, 4)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_sigma=st.floats(math.log(0.5), math.log(20.0)), log_k=st.floats(math.log(60), math.log(2e5)),
       m_share=st.floats(0.05, 1.0), ratio=st.integers(2, 30),
       log_delta=st.floats(math.log(1e-12), math.log(1e-3)))
def test_two_stages_contain_the_gaussian_closed_form(log_sigma, log_k, m_share, ratio, log_delta) -> None:
    """Any m (with or without a remainder) and ratio: the interval holds the exact ε of k Gaussian steps."""
    sigma, k, delta = math.exp(log_sigma), round(math.exp(log_k)), math.exp(log_delta)
    m = max(2, round(m_share * math.sqrt(k) * 2))
    stages = Stages(m, ratio)
    if not stages.applies(k):
        return
    lo, hi = gaussian.epsilon_bracket(delta=delta, sigma=sigma / math.sqrt(k))
    c = compose([(gaussian.loss_law(sigma=sigma), k)], h=0.02 / sigma, tail=delta * 1e-4, total=True,
                tilt=hi, lower_at=delta, stages=stages)
    assert "two stages" in c.note
    low, up = c.epsilon(delta)
    assert low is not None and up is not None
    assert low <= hi and lo <= up, (low, up, lo, hi)


def test_the_prediction_stages_a_long_composition_and_meets_the_width() -> None:
    """10^6 steps are composed in two stages within the accuracy aimed at; 6,000 steps in one."""
    law = subsample_remove(gaussian.loss_law(sigma=1.561), rate=0.00033)
    c = refine.composition([(law, 807_548)], delta=9.5e-5)
    assert "two stages" in c.note
    low, up = c.epsilon(9.5e-5)
    assert (up - low) / up <= refine.DEFAULT_ACCURACY
    short = refine.composition([(subsample_remove(gaussian.loss_law(sigma=8.648), rate=0.00098), 6263)],
                               delta=9.8e-10)
    assert "two stages" not in short.note


@settings(max_examples=200, deadline=None)
@given(k=st.integers(4, 10**7), m=st.integers(2, 5000))
def test_near_divisor_leaves_the_smallest_remainder(k: int, m: int) -> None:
    got = staged.near_divisor(k, m)
    counts = range(max(2, -(-2 * m // 3)), m + 1)
    assert got in counts
    assert k % got == min(k % c for c in counts)


def test_a_staged_composition_is_held_to_the_budget_at_its_own_cost() -> None:
    """The budget check estimates the two stages (m steps at h, all at r·h), not one stage at h: a
    budget between the two estimates admits the staged composition and refuses the single one."""
    parts = [(subsample_remove(gaussian.loss_law(sigma=1.561), rate=0.00033), 807_548)]
    h, tail = 5e-6, 1e-9
    one, two = cost.cost(parts, h=h, tail=tail), cost.staged_cost(parts, h, 764, 26, tail)
    assert two.seconds < one.seconds / 2
    between = Budget(seconds=(one.seconds + two.seconds) / 2, max_bytes=math.inf)
    c = compose(parts, h=h, tail=tail, budget=between, stages=Stages(764, 26), lower_at=9.5e-5, tilt=0.64)
    assert "two stages" in c.note
    with pytest.raises(OverBudget):
        compose(parts, h=h, tail=tail, budget=between, lower_at=9.5e-5, tilt=0.64)


def test_without_a_second_width_the_prediction_falls_back_to_one_stage(monkeypatch) -> None:
    """Where no second width fits (``_stages`` None), one stage at the width the h² law gives from the
    first stage's measured width, still within the accuracy."""
    from dpviz.pld import predict

    monkeypatch.setattr(predict, "_stages", lambda *args: None)
    law = subsample_remove(gaussian.loss_law(sigma=1.691), rate=0.0007)
    c = refine.composition([(law, 61_858)], delta=3.3e-6)
    assert "two stages" not in c.note
    low, up = c.epsilon(3.3e-6)
    assert (up - low) / up <= refine.DEFAULT_ACCURACY


def test_a_grid_discretised_again_keeps_a_bound_on_every_loss() -> None:
    """``top`` bounds every loss where mass or round-off may sit: an upper grid whose largest losses
    were zeroed (their error in ``err``) keeps its own top (plus the split's h₂), not its largest atom."""
    g = discretize.pessimistic(gaussian.loss_law(sigma=3.0), h=0.01, tail=1e-14)
    mass = g.mass.copy()
    mass[-50:] = 0.0  # as if zeroed below the round-off
    bounded = GridPLD(h=g.h, lo=g.lo, mass=mass, p_inf=0.0, pessimistic=True, err=1e-12, tilt=0.5,
                      top=float(g.losses[-1]))
    out = staged.regridded(bounded, 4)
    assert out.top >= float(g.losses[-1]) + 4 * g.h * (1 - 1e-12)
    assert out.delta(float(g.losses[-1])) > 0.0  # the error above the last atom is still charged
    unbounded = GridPLD(h=g.h, lo=g.lo, mass=mass, p_inf=0.0, pessimistic=True, err=1e-12, tilt=0.5)
    assert math.isinf(staged.regridded(unbounded, 4).top)


def test_two_stages_that_miss_the_accuracy_give_way_to_one_stage(monkeypatch) -> None:
    """A second width far too coarse for the width (r = 80): the staged composition misses the
    accuracy, and the one-stage route as before the stages answers, within it."""
    from dpviz.pld import predict

    monkeypatch.setattr(predict, "_stages", lambda parts, h1, left, theta: Stages(197, 80))
    law = subsample_remove(gaussian.loss_law(sigma=1.691), rate=0.0007)
    c = refine.composition([(law, 61_858)], delta=3.3e-6)
    assert "two stages" not in c.note
    low, up = c.epsilon(3.3e-6)
    assert (up - low) / up <= refine.DEFAULT_ACCURACY
    staged = compose([(law, 61_858)], h=c.h, tail=c.tail, total=True, lower_at=3.3e-6, stages=Stages(197, 80))
    s_low, s_up = staged.epsilon(3.3e-6)
    assert (s_up - s_low) / s_up > refine.DEFAULT_ACCURACY  # the staged one did miss


def test_a_law_at_its_precision_floor_is_composed_in_one_stage() -> None:
    """q = 1e-4, σ = 20, 10⁶ steps: below h ≈ 1e-7 the cells' masses are differences of tails finer
    than their precision, so a finer grid is wider. The first stage's measured width then leaves the
    second none: one stage, measured as such, meets the absolute width (1e-5 below ε = 0.05), where a
    fallback stepping finer from the first stage's width had gone to h = 3.1e-8, 1.8M bins and 1.9e-5."""
    law = subsample_remove(gaussian.loss_law(sigma=20.0), rate=1e-4)
    c = refine.composition([(law, 1_000_000)], delta=1e-9)
    assert "two stages" not in c.note
    low, up = c.epsilon(1e-9)
    assert up < 0.05 and up - low <= 1e-5
