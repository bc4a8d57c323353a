"""zCDP composition (Steinke, seed 001, §4; docs/MATH.md §11) against independent routes: the
closed forms of Thm 18 and Remark 15, the infimum over α in mpmath, dp-accounting's RDP accountant
with its zCDP event, the exact Gaussian (which is exactly ρ-zCDP), and the exact optimum (KOV Thm 3.3),
which no sound bound may undercut."""

from __future__ import annotations

import itertools
import math

import dp_accounting
import mpmath
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpviz.composition import METHODS, Level, advanced, as_levels, homogeneous, optimal, parse_levels, zcdp
from dpviz.composition.levels import sum_delta
from dpviz.guarantee import Kind, Status
from dpviz.mechanisms import gaussian

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

RHOS = (1e-6, 1e-3, 0.05, 0.5, 5.0, 200.0)
DELTAS = (1e-300, 1e-12, 1e-6, 1e-3, 0.3, 0.9)
EPSILONS = (0.0, 0.01, 0.3, 1.0, 5.0, 40.0)


# ---------------------------------------------------------------- mpmath: the infimum over α
def mp_epsilon(r: float, delta: float) -> mpmath.mpf:
    """inf_{α>1} αρ + ln(1 − 1/α) + (ln(1/δ) − ln α)/(α − 1) at 50 digits: the stationary point
    ρ(α − 1)² + ln α = ln(1/δ), found by mpmath's own bisection (not the code's brentq)."""
    with mpmath.workdps(50):
        r_, big_l = mpmath.mpf(r), -mpmath.log(mpmath.mpf(delta))
        lo, hi = mpmath.mpf(0), mpmath.sqrt(big_l / r_)
        for _ in range(400):
            mid = (lo + hi) / 2
            if r_ * mid**2 + mpmath.log1p(mid) - big_l > 0:
                hi = mid
            else:
                lo = mid
        a = 1 + (lo + hi) / 2
        return a * r_ + mpmath.log(1 - 1 / a) + (big_l - mpmath.log(a)) / (a - 1)


def mp_delta(r: float, eps: float, t_floor: float = -200) -> mpmath.mpf:
    """inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α/(α − 1) at 50 digits (stationary point by bisection in
    t = ln(α − 1) ≥ ``t_floor``)."""
    with mpmath.workdps(50):
        r_, e = mpmath.mpf(r), mpmath.mpf(eps)
        lo, hi = mpmath.mpf(t_floor), mpmath.log(max(mpmath.mpf(1), (e + 1) / (2 * r_)))
        for _ in range(400):
            mid = (lo + hi) / 2
            u = mpmath.exp(mid)
            if (2 * u + 1) * r_ - e + mpmath.log(u / (1 + u)) > 0:
                hi = mid
            else:
                lo = mid
        u = mpmath.exp((lo + hi) / 2)
        a = 1 + u
        return min(mpmath.mpf(1), mpmath.exp(u * (a * r_ - e)) * (u / a) ** a / u)


@pytest.mark.parametrize("r", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_epsilon_is_the_infimum_rounded_up(r: float, delta: float) -> None:
    eps, _ = zcdp.epsilon_prop14(r, delta)
    truth = max(mp_epsilon(r, delta), 0)
    assert eps >= truth  # never below the theorem's value
    assert eps <= truth * (1 + 1e-11) + 1e-300  # and tight: only rounding above it


@pytest.mark.parametrize("r", RHOS)
@pytest.mark.parametrize("eps", EPSILONS)
def test_delta_is_the_infimum_rounded_up(r: float, eps: float) -> None:
    d, _ = zcdp.delta_prop14(r, eps)
    truth = mp_delta(r, eps)
    assert d >= truth
    # ln δ carries a rounding allowance of ~1e-15·|terms|; below the doubles δ is the smallest one
    assert d <= truth * (1 + 1e-10) or d == math.ulp(0.0)


@pytest.mark.parametrize(("r", "eps"), [(600.0, 1.0), (460.0, 0.0), (707.0, 3.0), (1e4, 1.0)])
def test_delta_where_the_stationary_alpha_is_below_e_to_the_minus_450(r: float, eps: float) -> None:
    """ρ ≫ ε puts the stationary point at t = ln(α − 1) ≈ ε − ρ, where one ulp of t exceeds the
    bisection's 1e-13 tolerance: the search looped forever there (a Mechanisms page with a tiny work
    budget converted RDP this way and hung CI). It must stop, at the theorem's value rounded up."""
    d, alpha = zcdp.delta_prop14(r, eps)
    assert alpha > 1.0
    assert mp_delta(r, eps, t_floor=-1000) <= d <= 1.0


@pytest.mark.parametrize("r", RHOS)
@pytest.mark.parametrize("delta", DELTAS)
def test_prop14_never_worse_than_remark15(r: float, delta: float) -> None:
    e14, _ = zcdp.epsilon_prop14(r, delta)
    assert e14 <= zcdp.epsilon_remark15(r, delta)
    assert zcdp.convert_epsilon(r, delta)[0] == min(e14, zcdp.epsilon_remark15(r, delta))
    for eps in EPSILONS:
        assert zcdp.delta_prop14(r, eps)[0] <= zcdp.delta_remark15(r, eps) * (1 + 1e-12)


# ---------------------------------------------------------------- closed forms of the seed
@pytest.mark.parametrize(("k", "eps0", "delta"), [(100, 0.1, 1e-6), (1000, 0.01, 1e-5), (10, 1.0, 1e-3),
                                                  (1, 0.5, 0.1), (10**6, 1e-3, 1e-9)])
def test_theorem18_closed_form_bounds_the_method(k: int, eps0: float, delta: float) -> None:
    """Thm 18 with Remark 15: ε = ½Σε² + √(2 ln(1/δ) Σε²); Prop. 14 is at most that, and the
    Remark 15 row of the module is exactly it (up to rounding up)."""
    levels = homogeneous(k=k, eps0=eps0, delta0=0.0)
    s2 = k * eps0**2
    closed = s2 / 2 + math.sqrt(2 * math.log(1 / delta) * s2)
    g = METHODS["zcdp"].epsilon_for_delta(levels, delta=delta)
    assert g.kind is Kind.UPPER and g.delta == delta
    assert g.epsilon is not None and g.epsilon <= closed * (1 + 1e-12)
    assert zcdp.epsilon_remark15(zcdp.rho(levels), delta) == pytest.approx(closed, rel=1e-13)
    assert "Prop. 14" in g.source and "Thm 13/18" in g.source


def test_theorem22_spends_sum_of_deltas_first() -> None:
    """Thm 22: (ε(ρ, δ′), δ′ + Σδ_l) with ρ = Σ ε_l²/2 over every level."""
    levels = parse_levels("0.1:1e-6:30,0.5:0:10")
    r = (30 * 0.01 + 10 * 0.25) / 2
    assert zcdp.rho(levels) == pytest.approx(r, rel=1e-15)
    g = zcdp.epsilon_for_delta(levels, delta=1e-4)
    slack = 1e-4 - 30e-6
    assert g.epsilon == zcdp.convert_epsilon(zcdp.rho(levels), slack)[0]
    assert "Thm 22" in g.source
    d = zcdp.delta_for_epsilon(levels, epsilon=g.epsilon)
    assert d.delta is not None and d.delta <= 1e-4 * (1 + 1e-9)
    no = zcdp.epsilon_for_delta(levels, delta=sum_delta(levels))
    assert no.status is Status.IMPOSSIBLE and "Σδ_l" in (no.reason or "")
    pure = homogeneous(k=3, eps0=0.2, delta0=0.0)
    assert zcdp.epsilon_for_delta(pure, delta=0.0).status is Status.IMPOSSIBLE


def test_zero_epsilon_levels_give_zero() -> None:
    levels = homogeneous(k=5, eps0=0.0, delta0=1e-4)
    assert zcdp.epsilon_for_delta(levels, delta=1e-3).epsilon == 0.0
    assert zcdp.delta_for_epsilon(levels, epsilon=0.0).delta == pytest.approx(5e-4, rel=1e-12)


# ---------------------------------------------------------------- dp-accounting
@pytest.mark.parametrize("r", [1e-3, 0.05, 0.5, 5.0])
@pytest.mark.parametrize("delta", [1e-10, 1e-5, 1e-2])
def test_against_dp_accounting_zcdp_event(r: float, delta: float) -> None:
    """dp-accounting's RDP accountant with ZCDpEvent(ρ) converts at its orders only (CKS, the same
    formula as Prop. 14): ours is never above its value, and within 1e-4 of it on a fine grid."""
    orders = list(np.concatenate([1 + np.geomspace(1e-4, 1e3, 6000)]))
    acc = dp_accounting.rdp.RdpAccountant(orders=orders)
    acc.compose(dp_accounting.ZCDpEvent(r))
    theirs = acc.get_epsilon(delta)
    ours = zcdp.convert_epsilon(r, delta)[0]
    assert ours <= theirs * (1 + 1e-12)
    assert ours >= theirs * (1 - 1e-4)
    eps = ours
    assert zcdp.convert_delta(r, eps)[0] <= acc.get_delta(eps) * (1 + 1e-12)


# ---------------------------------------------------------------- soundness against exact truths
@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 3.0])
@pytest.mark.parametrize("eps", [0.0, 0.1, 1.0, 4.0, 15.0])
def test_gaussian_is_exactly_rho_zcdp_and_below_the_conversion(mu: float, eps: float) -> None:
    """The Gaussian with μ = Δ/σ is μ²/2-zCDP (Lemma 12); its exact δ(ε) (Cor. 8) is below the
    conversion's δ at every ε — the conversion is sound where zCDP is tight."""
    exact = math.exp(gaussian.log_delta_mu(eps, mu))
    assert exact <= zcdp.convert_delta(mu * mu / 2, eps)[0]


SMALL = st.builds(lambda k, e, d: Level(epsilon=e, delta=d, count=k), st.integers(1, 40),
                  st.floats(min_value=1e-3, max_value=2.0), st.one_of(st.just(0.0), st.floats(1e-9, 1e-4)))


@SETTINGS
@given(levels=st.lists(SMALL, min_size=1, max_size=2), delta=st.floats(min_value=1e-10, max_value=0.5))
def test_optimal_never_above_zcdp_epsilon(levels, delta: float) -> None:
    """The optimum (KOV Thm 3.3, exact) is the smallest sound ε: zCDP may only be at or above it."""
    lv = as_levels(levels)
    z = zcdp.epsilon_for_delta(lv, delta=delta)
    opt = optimal.epsilon_for_delta(lv, delta=delta)
    if z.feasible and opt.feasible:
        assert opt.epsilon <= z.epsilon * (1 + 1e-12) + 1e-15  # type: ignore[operator]
    if z.feasible:
        assert opt.status is Status.OK  # zCDP proves a value, so the optimum has one


@SETTINGS
@given(levels=st.lists(SMALL, min_size=1, max_size=2), eps=st.floats(min_value=0.0, max_value=20.0))
def test_optimal_never_above_zcdp_delta(levels, eps: float) -> None:
    lv = as_levels(levels)
    z = zcdp.delta_for_epsilon(lv, epsilon=eps)
    opt = optimal.delta_for_epsilon(lv, epsilon=eps)
    assert z.delta is not None and opt.delta is not None
    assert opt.delta <= z.delta * (1 + 1e-12) + 1e-300


def test_where_zcdp_beats_drv_and_loses_to_the_optimum() -> None:
    """A teacher's example: 100 pure 0.1-DP steps at δ = 1e-6. Numbers from docs/MATH.md §11."""
    levels = homogeneous(k=100, eps0=0.1, delta0=0.0)
    z = zcdp.epsilon_for_delta(levels, delta=1e-6).epsilon
    drv = advanced.epsilon_for_delta(levels, delta=1e-6).epsilon
    opt = optimal.epsilon_for_delta(levels, delta=1e-6).epsilon
    assert z is not None and drv is not None and opt is not None
    assert opt < z < drv
    assert z == pytest.approx(5.2215, abs=1e-4) and drv == pytest.approx(6.3082, abs=1e-4)
    # and DRV wins for few large steps, where the ½Σε² term dominates: k = 4, ε0 = 1
    few = homogeneous(k=4, eps0=1.0, delta0=0.0)
    assert zcdp.epsilon_for_delta(few, delta=1e-6).epsilon > 4.0  # also worse than basic kε0 = 4


# ---------------------------------------------------------------- the regions interface
@pytest.mark.parametrize("levels", [homogeneous(k=30, eps0=0.1, delta0=1e-3),
                                    parse_levels("0.1:1e-6:30,0.5:0:10"),
                                    homogeneous(k=10**6, eps0=0.01, delta0=0.0)])
def test_slack_interface_is_monotone(levels) -> None:
    slacks = np.concatenate([[0.0], np.logspace(-300, 0, 2000)])
    eps = [zcdp.epsilon_at_slack(levels, slack=float(s)) for s in slacks]
    dlt = [zcdp.total_delta(levels, float(s)) for s in slacks]
    assert eps[0] == math.inf and dlt[0] == sum_delta(levels)
    assert all(a >= b for a, b in itertools.pairwise(eps))
    assert all(a <= b for a, b in itertools.pairwise(dlt))
    for s, e in zip(slacks[1::97], eps[1::97], strict=False):
        g = zcdp.delta_for_epsilon(levels, epsilon=e)
        assert g.delta is not None and g.delta <= min(1.0, sum_delta(levels) + s) * (1 + 1e-9)


@SETTINGS
@given(levels=st.lists(SMALL, min_size=1, max_size=3), delta=st.floats(min_value=1e-300, max_value=0.9))
def test_never_above_advanced_composition(levels, delta: float) -> None:
    """½Σε_l² ≤ Σε_l(e^{ε_l} − 1) and Prop. 14 ≤ Remark 15: zCDP is never above DRV (same Σδ_l + δ′)."""
    lv = as_levels(levels)
    z, drv = zcdp.epsilon_for_delta(lv, delta=delta), advanced.epsilon_for_delta(lv, delta=delta)
    assert z.status is drv.status
    if z.feasible:
        assert z.epsilon <= drv.epsilon * (1 + 1e-12)  # type: ignore[operator]


@pytest.mark.parametrize("levels", [homogeneous(k=30, eps0=0.1, delta0=1e-3),
                                    homogeneous(k=1, eps0=1e-3, delta0=0.0),
                                    homogeneous(k=10**6, eps0=50.0, delta0=0.0),
                                    parse_levels("0.1:1e-6:30,0.5:0:10")])
def test_vectorised_slacks_never_below_the_scalar(levels) -> None:
    """epsilon_at_slacks (the regions page's fast path) is sound wherever the scalar is: never below
    it, within 1e-10 of it, non-increasing in δ′, ∞ at δ′ = 0 and 0 at δ′ ≥ 1."""
    slacks = np.concatenate([[0.0], np.logspace(-300, 0, 3000), [1.0, 2.0]])
    vec = zcdp.epsilon_at_slacks(levels, slacks)
    one = np.array([zcdp.epsilon_at_slack(levels, slack=float(s)) for s in slacks])
    fin = np.isfinite(one)
    assert np.array_equal(fin, np.isfinite(vec)) and vec[0] == math.inf and vec[-1] == 0.0
    assert np.all(vec[fin] >= one[fin])
    np.testing.assert_allclose(vec[fin], one[fin], rtol=1e-10, atol=1e-300)
    assert np.all(np.diff(vec[1:]) <= 0)
