"""The optimistic grid as a post-processing (dpviz.pld.postprocess): brute force on finite pairs,
closed forms, and its order of accuracy."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import finite, gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import discretize
from dpviz.pld.accountant import compose
from dpviz.pld.law import LossLaw

# δ of an enumerated product is a sum of ≤ 10^4 positive terms: relative round-off ≲ 1e-12
SLACK = 1e-12


def _exact_delta(p: np.ndarray, q: np.ndarray, k: int, eps: float) -> float:
    """δ(ε) of the k-fold product of (P, Q) by enumerating every outcome sequence."""
    total = 0.0
    for seq in itertools.product(range(p.size), repeat=k):
        pp = math.prod(p[i] for i in seq)
        qq = math.prod(q[i] for i in seq)
        total += max(pp - math.exp(eps) * qq, 0.0)
    return total


pairs = st.integers(2, 5).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0.02, 1.0), min_size=n, max_size=n),
    st.lists(st.floats(0.02, 1.0), min_size=n, max_size=n)))


@settings(max_examples=30, deadline=None)
@given(pair=pairs, h=st.floats(0.01, 0.4), k=st.integers(1, 4), offsets=st.booleans(),
       eps=st.lists(st.floats(-0.5, 3.0), min_size=3, max_size=3))
def test_brute_force_finite_pairs_are_bracketed(pair, h, k, offsets, eps):
    """lower ≤ exact ≤ upper for k-fold products of random finite pairs, atoms off the grid (or,
    with ``offsets``, each law's grid shifted to put its heaviest atom on a grid point)."""
    p = np.asarray(pair[0]) / sum(pair[0])
    q = np.asarray(pair[1]) / sum(pair[1])
    law = finite.loss_law(p=p.tolist(), q=q.tolist())
    c = compose([(law, k)], h=h, tail=1e-18, offsets=offsets)
    for e in eps:
        # both directions: the mechanism's δ is the larger one
        exact = max(_exact_delta(p, q, k, e), _exact_delta(q, p, k, e))
        lo, up = c.delta(e)
        assert lo <= exact * (1 + SLACK) + 1e-15
        assert exact <= up * (1 + SLACK) + 1e-15


def test_single_step_keeps_every_symbol_mass():
    """The post-processing moves mass between lattice points but never loses it: the lower grid
    holds the law's whole P-mass (none is below the grid here)."""
    law = subsample_remove(gaussian.loss_law(sigma=1.3), rate=0.0025)
    g = discretize.optimistic(law, h=1e-4, tail=1e-18)
    assert g.mass.sum() == pytest.approx(1.0, abs=1e-12)


def test_symbols_sit_at_or_below_their_true_loss():
    """Every stored atom has P-mass e^{mh}·(implicit Q) ≥ the symbol's true Q-mass: summed, the
    implicit Q-mass of the lower grid is ≥ the law's Q-mass on the grid (equality up to the margin
    where every symbol balances)."""
    law = gaussian.loss_law(sigma=1.0)
    g = discretize.optimistic(law, h=0.01, tail=1e-18)
    implicit_q = float(np.sum(g.mass * np.exp(-g.losses)))
    assert 1.0 - 1e-12 <= implicit_q <= 1.0 + 1e-6  # ≥ true Q (1), and tight


@pytest.mark.parametrize(("sigma", "k", "eps"), [(1.0, 10, 1.0), (4.0, 100, 0.5), (0.8, 3, 2.5)])
def test_gaussian_composition_closed_form(sigma, k, eps):
    """Gaussian without subsampling: k steps are one Gaussian of μ√k (Steinke Cor. 8/10)."""
    law = gaussian.loss_law(sigma=sigma)
    exact = gaussian.delta_for_epsilon(epsilon=eps, sigma=sigma, k=k)
    lo, up = compose([(law, k)], h=2e-3, tail=1e-18).delta(eps)
    assert lo <= exact <= up
    assert up - lo <= 1e-4 * exact  # second order: both ends within 1e-4 relative at h = 2e-3


def test_lower_bound_error_is_second_order_after_composition():
    """Halving h divides the lower bound's composed error by ≈ 4 (the lowered chords it replaces
    lost about h per step, first order)."""
    law = gaussian.loss_law(sigma=2.0)
    k, eps = 50, 3.0
    exact = gaussian.delta_for_epsilon(epsilon=eps, sigma=2.0, k=k)
    gaps = [exact - compose([(law, k)], h=h, tail=1e-18).delta(eps)[0] for h in (0.02, 0.01)]
    assert gaps[0] > 0 and gaps[1] > 0
    assert 3.0 < gaps[0] / gaps[1] < 5.0


def test_off_grid_atoms_law():
    """An atom law with irrational losses: both bounds bracket the exact composition closely."""
    p, q = np.array([0.5, 0.3, 0.2]), np.array([0.2, 0.3, 0.5])
    law = LossLaw.from_atoms("three", np.log(p / q), p, q, symmetric=True)
    c = compose([(law, 6)], h=1e-3, tail=1e-18)
    for e in (0.0, 0.4, 1.5):
        exact = _exact_delta(p, q, 6, e)
        lo, up = c.delta(e)
        assert lo <= exact <= up
        assert up - lo <= 2e-3 * exact


def test_replace_one_atoms_a_few_ulps_off_the_lattice_stay_exact():
    """Review R3: the replace-one loss lp − lq of subsampled geometric at q = 1 is 4e-15 below the
    lattice point at t = 2, beyond 8u·|t|: the heavy atom (P = 0.51) lost a whole step in the lower
    bound, [0.0556, 0.1031]. The pair is the plain geometric with Δ = 2·2, which is exact."""
    from dpviz.mechanisms.geometric import Geometric
    from dpviz.mechanisms.subsampling import Subsampled
    from dpviz.pld.accountant import delta_bounds
    eps0 = 0.05442988382262526
    m = Subsampled(Geometric(eps0=eps0, sensitivity=2), rate=1.0, neighbouring="replace-one")
    g = delta_bounds([(m.law, 1)], epsilon=0.0)
    ref = delta_bounds([(Geometric(eps0=eps0, sensitivity=4).law, 1)], epsilon=0.0)
    # exact up to the charged round-off of reading δ off the grid (docs/MATH.md §17.6)
    assert ref.upper - ref.lower <= 1e-13 * ref.upper
    assert g.lower == pytest.approx(ref.upper, rel=1e-9) and g.upper == pytest.approx(ref.upper, rel=1e-9)
