"""RDP at real orders (Steinke's remark after Thm 34: monotonicity, Lemma 33 part 3) and the analytic
subsampling bound (dpviz.rdp.analytic, in the manner of Steinke Lemma 39 / Prop. 41; docs/MATH.md §11.5),
against the exact subsampled Gaussian (mpmath quadrature), dp-accounting's RDP and Thm 34 (tight)."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_ref

from dpviz.guarantee import Status
from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import make
from dpviz.rdp.analytic import analytic_subsampled_rdp
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import (
    DEFAULT_ORDERS,
    REAL_ORDERS,
    at_real_orders,
    ceiling_orders,
    gaussian_rdp,
    subsampled_rdp,
)
from dpviz.views import mechanisms as view


def exact_subsampled_gaussian(q: float, mu: float, lam: float) -> float:
    """D_λ((1 − q)N(0, 1) + qN(μ, 1) ‖ N(0, 1)) by quadrature at 30 digits (the remove direction,
    the larger one: Steinke Thm 35)."""
    with mpmath.workdps(30):
        f = lambda z: mpmath.npdf(z) * (1 - q + q * mpmath.exp(mu * z - mu * mu / 2)) ** lam  # noqa: E731
        return float(mpmath.log(mpmath.quad(f, [-mpmath.inf, -10, 0, 10, mpmath.inf])) / (lam - 1))


CASES = [(1.0, 0.001), (1.0, 0.01), (2.0, 0.1), (5.0, 0.1), (0.7, 0.05)]  # (σ, q)


@pytest.mark.parametrize(("sigma", "q"), CASES)
@pytest.mark.parametrize("lam", [1.1, 1.5, 2.5, 3.7, 6.25])
def test_thm34_at_a_real_order_is_the_ceiling_and_above_the_truth(sigma: float, q: float, lam: float) -> None:
    """The old code took int(λ) = ⌊λ⌋, a value below the true D_λ (D_λ increases with λ)."""
    mu = 1.0 / sigma
    base = [gaussian_rdp(order=j, mu=mu) for j in range(2, 9)]
    got = subsampled_rdp(base, rate=q, order=lam)
    assert got == subsampled_rdp(base, rate=q, order=max(2, math.ceil(lam)))
    assert got >= exact_subsampled_gaussian(q, mu, lam) * (1 - 1e-12)


@pytest.mark.parametrize(("sigma", "q"), CASES)
@pytest.mark.parametrize("lam", [1.1, 1.5, 2.0, 2.5, 3.0, 3.7, 5.0, 8.0, 16.0])
def test_analytic_bound_is_above_the_exact_divergence(sigma: float, q: float, lam: float) -> None:
    mu = 1.0 / sigma
    got = analytic_subsampled_rdp(lambda o: o * mu * mu / 2, rate=q, order=lam)
    assert got >= exact_subsampled_gaussian(q, mu, lam) * (1 - 1e-12)


@pytest.mark.parametrize(("sigma", "q"), CASES)
def test_analytic_bound_never_below_tight_thm34(sigma: float, q: float) -> None:
    """Thm 34 is exact for the subsampled Gaussian at integer orders (dp-accounting computes the same
    sum), so a sound closed form may not be below it; at λ = 2 the two coincide."""
    orders = [2, 3, 4, 6, 8, 12, 16, 32, 64]
    ref = rdp_ref._compute_rdp_poisson_subsampled_gaussian(q, sigma, orders)  # private helper, test-only
    mu = 1.0 / sigma
    for lam, r in zip(orders, ref, strict=True):
        a = analytic_subsampled_rdp(lambda o: o * mu * mu / 2, rate=q, order=lam)
        assert a >= r * (1 - 1e-12)
        if lam == 2:
            assert a == pytest.approx(r, rel=1e-10)  # Taylor at second order is exact for λ = 2


def test_analytic_bound_has_the_shape_of_thm38() -> None:
    """For a ρ-zCDP base and small λ it is ≈ λq²ρ (Thm 38's q²ρλ, constant ≈ 1, not 10)."""
    r, q = 0.01, 1e-3
    for lam in (1.5, 2.0):
        a = analytic_subsampled_rdp(lambda o: o * r, rate=q, order=lam)
        assert a == pytest.approx(lam * q * q * r, rel=0.05)
        assert a <= 10 * q * q * r * lam


def test_monotone_fill_uses_the_ceiling_order() -> None:
    orders = (1.5, 2.0, 2.5, 3.0, 7.25)
    assert ceiling_orders(orders) == (2, 3, 8)
    np.testing.assert_array_equal(at_real_orders(orders, [10.0, 20.0, 30.0]), [10.0, 10.0, 20.0, 20.0, 30.0])


def test_real_orders_convert_like_dp_accounting() -> None:
    """The CKS conversion at real orders, against dp-accounting's on the same (order, ρ) pairs."""
    orders = [1.5, 2.5, 3.0, 10.5, 64.0]
    rho = [0.3 * o for o in orders]
    ours, order = epsilon_from_rdp(orders, rho, delta=1e-6)
    theirs, their_order = rdp_ref.compute_epsilon(orders, rho, 1e-6)
    assert ours == pytest.approx(theirs, rel=1e-12) and ours >= theirs
    assert order == their_order


def test_route_rows_and_soundness() -> None:
    """The subsampled Gaussian: rdp (Thm 34 at real orders) ≤ rdp_analytic, both above the PLD's
    certified lower end; the analytic row is left off without subsampling."""
    mech = make("gaussian", sigma=1.0, sampling_rate=0.01)
    res = routes.routes([(mech, 1000)], delta=1e-6, compare=True)
    tight, closed, pld = res["rdp"], res["rdp_analytic"], res["pld"]
    assert tight.epsilon is not None and closed.epsilon is not None and pld.lower is not None
    assert pld.lower <= tight.epsilon <= closed.epsilon
    assert "rdp_analytic" in view.quick(mech, k=1000, delta=1e-6)
    plain = make("gaussian", sigma=1.0)
    assert routes.rdp_analytic([(plain, 10)], delta=1e-6).status is Status.NOT_COMPUTED
    assert "rdp_analytic" not in view.quick(plain, k=10, delta=1e-6)
    d = routes.rdp_analytic([(mech, 1000)], epsilon=closed.epsilon)
    assert d.delta is not None and d.delta <= 1e-6 * (1 + 1e-9)


def test_real_orders_help_a_mix() -> None:
    """A subsampled Gaussian with a plain Gaussian: real orders (exact for the plain part) never give
    a larger ε than the integer orders alone."""
    parts = [(make("gaussian", sigma=1.0, sampling_rate=0.02), 500), (make("gaussian", sigma=3.0), 3)]
    real = routes.rdp(parts, delta=1e-6).epsilon
    whole, _ = epsilon_from_rdp(DEFAULT_ORDERS, routes.rdp_curve(parts), delta=1e-6)
    assert real is not None and real <= whole
    assert len(REAL_ORDERS) > len(DEFAULT_ORDERS)
