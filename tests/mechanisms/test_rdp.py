"""Rényi-DP route: Steinke Thm 34 and the conversion, against dp-accounting (test-only oracle)."""

from __future__ import annotations

import numpy as np
import pytest
from dp_accounting.rdp import rdp_privacy_accountant as rdp_ref

from dpviz.mechanisms import routes
from dpviz.mechanisms.registry import make
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import gaussian_rdp, subsampled_rdp


@pytest.mark.parametrize("sigma", [0.8, 1.1, 2.0])
def test_thm34_matches_dp_accounting_integer_orders(sigma):
    orders = [2, 3, 5, 8, 16, 32]
    base = [gaussian_rdp(order=j, mu=1.0 / sigma) for j in range(2, 33)]
    ours = [subsampled_rdp(base, rate=0.01, order=o) for o in orders]
    ref = rdp_ref._compute_rdp_poisson_subsampled_gaussian(0.01, sigma, orders)  # private helper, test-only
    np.testing.assert_allclose(ours, ref, rtol=1e-9)  # both exact sums; float round-off only


def test_rate_one_is_base():
    base = [gaussian_rdp(order=j, mu=0.5) for j in range(2, 11)]
    assert subsampled_rdp(base, rate=1.0, order=7) == pytest.approx(7 * 0.125)


def test_conversion_prefers_best_order():
    orders = [2, 4, 8, 16]
    rho = [0.1 * o for o in orders]
    eps, order = epsilon_from_rdp(orders, rho, delta=1e-5)
    assert order in orders
    assert all(eps <= r + np.log(1e5) / (o - 1) for o, r in zip(orders, rho, strict=True))


@pytest.mark.parametrize("kind", ["gaussian", "laplace", "randomized-response"])
def test_rdp_is_an_upper_bound_above_pld(kind):
    mech = {"gaussian": make("gaussian", sigma=2.0, sampling_rate=0.05),
            "laplace": make("laplace", scale=3.0),
            "randomized-response": make("randomized-response", eps0=0.3)}[kind]
    r = routes.rdp([(mech, 100)], delta=1e-6)
    p = routes.pld([(mech, 100)], delta=1e-6)
    assert r.upper >= p.lower  # RDP is sound, so never below the certified lower bound


ASYMMETRIC = {"p": "0.99,0.01", "q": "0.5,0.5"}
"""A finite pair whose two directions differ a lot: D_λ(Q‖P) ≫ D_λ(P‖Q) (REVIEW R6)."""


@pytest.mark.parametrize(("k", "delta", "rate"), [(1, 1e-3, None), (10, 1e-6, None), (50, 1e-6, None),
                                                  (10, 1e-6, 0.1), (3, 1e-3, 0.5)])
def test_rdp_covers_both_directions_of_an_asymmetric_pair(k, delta, rate):
    """RDP is max(D_λ(P‖Q), D_λ(Q‖P)); one direction gave ε = 0.682 < the exact 3.910 at k = 1,
    δ = 1e-3 (and Thm 34 on the one-direction ρ was below the exact subsampled ε too)."""
    m = make("finite", sampling_rate=rate, **ASYMMETRIC)
    up = routes.rdp([(m, k)], delta=delta)
    ex = routes.exact([(m, k)], delta=delta)
    assert ex.kind.value == "exact" and up.upper is not None and ex.epsilon is not None
    assert up.upper >= ex.epsilon * (1 - 1e-12)
    if (k, delta, rate) == (1, 1e-3, None):
        assert ex.epsilon == pytest.approx(3.9100210, rel=1e-6)
    head = routes.best(routes.routes([(m, k)], delta=delta))[1]
    assert head.upper is not None and head.upper >= ex.epsilon * (1 - 1e-12)
