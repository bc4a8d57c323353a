"""A mechanism's Rényi curve in one array pass (``law_rdp_curve``, ``laplace_rdp_curve``) is its
per-order ``rdp`` (Mironov 2017; Steinke Thm 34's base ρ(j)) bit for bit."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import registry
from dpviz.mechanisms.base import Mechanism
from dpviz.mechanisms.finite import FinitePair
from dpviz.rdp.subsampled import DEFAULT_ORDERS, law_rdp_curve

ORDERS = (*DEFAULT_ORDERS, *range(513, 1025, 37))


def _per_order(mech, orders) -> np.ndarray:
    return np.array([mech.rdp(o) for o in orders], dtype=float)


@pytest.mark.parametrize("key", registry.KINDS)
def test_every_mechanisms_curve_is_its_per_order_rdp(key):
    mech = registry.make(key)
    assert np.array_equal(mech.rdp_curve(ORDERS), _per_order(mech, ORDERS))


def test_the_array_pass_is_taken_for_atomic_laws():
    """Not a comparison of a loop with itself: randomized response states no ``rdp`` of its own."""
    mech = registry.make("randomized-response")
    assert type(mech).rdp is Mechanism.rdp and mech.law.continuous is None


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2, max_size=40), st.integers(0, 2**32 - 1))
def test_finite_pairs_curves_are_per_order_rdp(weights, seed):
    """Random pairs, zero masses (a P-mass without Q: ρ = ∞) and extreme ratios included."""
    p = np.array(weights) + 1e-300 * (np.array(weights) == 0)
    rng = np.random.default_rng(seed)
    q = rng.random(p.size) ** 8
    q[rng.random(p.size) < 0.1] = 0.0
    if q.sum() == 0:
        q[0] = 1.0
    p, q = (",".join(f"{v:.17g}" for v in x / x.sum()) for x in (p, q))
    mech = FinitePair(p=p, q=q)
    assert np.array_equal(mech.rdp_curve(ORDERS), _per_order(mech, ORDERS))


@settings(max_examples=40, deadline=None)
@given(st.floats(1e-6, 60.0))
def test_laplace_curves_are_per_order_rdp(eps0):
    mech = registry.make("laplace", scale=1.0 / eps0)
    assert np.array_equal(mech.rdp_curve(ORDERS), _per_order(mech, ORDERS))


def test_a_law_with_mass_at_infinity_has_an_infinite_curve():
    law = registry.make("finite", p="0.5,0.5", q="1,0").law
    directions = law.both_directions()
    assert any(d.p_inf > 0 for d in directions)
    assert all(math.isinf(v) for v in law_rdp_curve(next(d for d in directions if d.p_inf > 0), ORDERS))


@pytest.mark.parametrize(("sigma", "sensitivity"), [(0.3, 1.0), (1.1, 1.0), (7.7, 2.5), (1e-5, 1.0)])
def test_gaussian_curve_is_its_orders_bit_for_bit(sigma: float, sensitivity: float) -> None:
    """The Gaussian's own array pass gives each order's ``rdp`` float exactly (Steinke Lemma 33.4)."""
    from dpviz.mechanisms.gaussian import Gaussian

    g = Gaussian(sigma=sigma, sensitivity=sensitivity)
    orders = tuple(range(2, 2049))
    assert np.array_equal(g.rdp_curve(orders), np.array([g.rdp(o) for o in orders], dtype=float))
