"""lower ≤ exact ≤ upper where the answer is known exactly (KOV Thm 3.3 binomial sums)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import homogeneous, optimal
from dpviz.composition.atoms import LossAtoms
from dpviz.mechanisms import canonical, finite, geometric, randomized_response
from dpviz.pld import compose, epsilon_bounds


@pytest.mark.parametrize(("eps0", "delta0", "k"), [(0.5, 0.0, 10), (0.1, 0.0, 200), (1.0, 1e-6, 25),
                                                    (0.3, 1e-4, 64)])
def test_canonical_composition_matches_kov(eps0, delta0, k):
    law = canonical.loss_law(eps0=eps0, delta0=delta0)
    c = compose([(law, k)], h=eps0 / 20)
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    for eps in np.linspace(0, k * eps0 * 0.6, 7):
        exact = optimal.delta_for_epsilon(levels, epsilon=float(eps)).delta
        lo, up = c.delta(float(eps))
        assert lo <= exact <= up
        # atoms on the grid: only FFT round-off and truncation separate the bounds
        assert up - lo <= 1e-9


def test_rr_equals_geometric_and_epsilon_bounds():
    """KOV §4.2: geometric (Δ = 1) and randomized response have the same loss law."""
    rr = randomized_response.loss_law(eps0=0.4)
    geo = geometric.loss_law(eps0=0.4)
    np.testing.assert_allclose(sorted(rr.loss), sorted(geo.loss))
    iv = epsilon_bounds([(geo, 40)], delta=1e-6, h=0.4 / 40)
    exact = optimal.epsilon_for_delta(homogeneous(k=40, eps0=0.4, delta0=0.0), delta=1e-6).epsilon
    assert iv.lower is not None and iv.upper is not None and iv.lower <= exact <= iv.upper


def test_asymmetric_finite_pair_both_directions():
    """A lopsided pair: the mechanism's δ is the max over (P, Q) and (Q, P), computed exactly."""
    p, q = np.array([0.6, 0.3, 0.1]), np.array([0.2, 0.3, 0.5])
    law = finite.loss_law(p=p, q=q)
    k = 6
    c = compose([(law, k)], h=1e-3)
    exact_dirs = []
    for a, b in ((p, q), (q, p)):
        pk, qk = a, b
        for _ in range(k - 1):
            pk, qk = np.outer(pk, a).ravel(), np.outer(qk, b).ravel()
        atoms = LossAtoms.from_masses(np.log(pk) - np.log(qk), np.log(pk))
        exact_dirs.append(atoms)
    for eps in (0.0, 0.5, 1.5, 3.0):
        exact = max(at.delta(eps) for at in exact_dirs)
        lo, up = c.delta(eps)
        assert lo <= exact <= up
        assert up - lo < 1e-3 * max(exact, 1e-3)


def _exact_composed(p: np.ndarray, q: np.ndarray, k: int, eps: float) -> float:
    """Brute force over all outcomes of k runs, both directions (Steinke Prop. 7 per direction)."""
    worst = 0.0
    for a, b in ((p, q), (q, p)):
        pk, qk = a, b
        for _ in range(k - 1):
            pk, qk = np.outer(pk, a).ravel(), np.outer(qk, b).ravel()
        worst = max(worst, float(np.maximum(pk - np.exp(eps) * qk, 0.0).sum()))
    return worst


@settings(max_examples=60, deadline=None)
@given(raw=st.lists(st.tuples(st.floats(0.05, 1.0), st.floats(0.05, 1.0)), min_size=2, max_size=4),
       k=st.integers(1, 5), h=st.floats(2e-3, 0.1), eps=st.floats(0.0, 2.0))
def test_random_finite_pairs_bracket_brute_force(raw, k, h, eps):
    """Composition soundness for arbitrary finite pairs, off-grid losses and any grid width."""
    p = np.array([a for a, _ in raw])
    q = np.array([b for _, b in raw])
    p, q = p / p.sum(), q / q.sum()
    c = compose([(finite.loss_law(p=p, q=q), k)], h=h)
    exact = _exact_composed(p, q, k, eps)
    lo, up = c.delta(eps)
    # brute force sums ≤ 4^5 terms in float: ≈1e-15 relative
    assert lo <= exact * (1 + 1e-12) + 1e-15
    assert exact <= up * (1 + 1e-12) + 1e-15
