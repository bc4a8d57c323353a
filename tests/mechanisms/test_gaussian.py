"""Gaussian: closed form (Steinke Cor. 8/10) against an independent integral and the PLD route."""

from __future__ import annotations

import math

import mpmath
import pytest

from dpviz.mechanisms import gaussian, routes
from dpviz.mechanisms.registry import make
from dpviz.pld import compose, epsilon_bounds


@pytest.mark.parametrize(("sigma", "eps"), [(1.0, 0.0), (1.0, 1.0), (0.5, 3.0), (3.0, 0.2)])
def test_closed_form_matches_integral(sigma, eps):
    """δ(ε) = E_{L~N(μ²/2, μ²)}[(1 − e^{ε−L})_+] by mpmath quadrature (Steinke Prop. 7)."""
    mu = 1.0 / sigma
    mpmath.mp.dps = 30
    dens = lambda x: mpmath.npdf(x, mu * mu / 2, mu)  # noqa: E731
    val = mpmath.quad(lambda x: dens(x) * (1 - mpmath.e ** (eps - x)), [eps, eps + 40 * mu])
    assert gaussian.delta_for_epsilon(epsilon=eps, sigma=sigma) == pytest.approx(float(val), rel=1e-10)


def test_k_fold_is_mu_root_k():
    """Cor. 10: k Gaussians with μ compose to one with μ√k."""
    a = gaussian.delta_for_epsilon(epsilon=2.0, sigma=1.0, k=16)
    b = gaussian.delta_for_epsilon(epsilon=2.0, sigma=0.25, k=1)
    assert a == pytest.approx(b, rel=1e-14)


def test_tail_stays_precise():
    """Log-space evaluation: a δ below 1e-80 is still positive and decreasing."""
    d1 = gaussian.delta_for_epsilon(epsilon=20.0, sigma=1.0)
    d2 = gaussian.delta_for_epsilon(epsilon=21.0, sigma=1.0)
    assert 0 < d2 < d1 < 1e-80


@pytest.mark.parametrize("k", [1, 7, 100])
def test_numerical_delta_brackets_closed_form(k):
    law = gaussian.loss_law(sigma=2.0)
    c = compose([(law, k)], h=2e-3)
    for eps in (0.0, 0.3, 1.0, 2.5):
        exact = gaussian.delta_for_epsilon(epsilon=eps, sigma=2.0, k=k)
        lo, up = c.delta(eps)
        assert lo <= exact <= up
        assert up - lo <= 1e-4 * max(exact, 1e-6)  # second-order grid: bars are tight at h = 2e-3


@pytest.mark.parametrize(("sigma", "k", "delta"), [(1.0, 1000, 1e-5), (5.0, 50, 1e-6), (0.8, 3, 1e-3)])
def test_numerical_epsilon_interval_contains_closed_form(sigma, k, delta):
    lo_b, hi_b = gaussian.epsilon_bracket(delta=delta, sigma=sigma, k=k)
    iv = epsilon_bounds([(gaussian.loss_law(sigma=sigma), k)], delta=delta, h=1e-3)
    assert iv.lower <= lo_b and hi_b <= iv.upper
    assert iv.relative_width < 1e-4


def test_bracket_is_certified():
    lo, hi = gaussian.epsilon_bracket(delta=1e-5, sigma=1.0, k=10)
    assert gaussian.delta_for_epsilon(epsilon=lo, sigma=1.0, k=10) > 1e-5
    assert gaussian.delta_for_epsilon(epsilon=hi, sigma=1.0, k=10) <= 1e-5
    assert hi - lo <= 1e-11 * hi


def test_analytic_and_pld_routes_agree():
    parts = [(make("gaussian", sigma=2.0), 30)]
    a = routes.analytic(parts, delta=1e-6)
    p = routes.pld(parts, delta=1e-6)
    assert a is not None and a.lower is not None and a.upper is not None
    assert p.lower <= a.lower <= a.upper <= p.upper
    assert math.isclose(a.lower, a.upper, rel_tol=1e-11)
