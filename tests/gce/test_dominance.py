"""Dominance: real (ε0, δ0)-DP mechanisms never beat the exact (canonical-pair) curve.

Random pairs (P, Q) on 2-4 outcomes are made (ε0, δ0)-DP by taking δ0 as their own
two-sided hockey-stick value at ε0. Their mixture over any prior is a post-processing
of the canonical mixture, so its δ(ε) must be ≤ the exact method's, both directions.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.gce import hypotheses as H
from dpviz.gce.exact import exact_pair
from tests import oracles as brute

PRIORS = {
    "zero-vs-nonzero": (lambda k: (H.point_zero(k=k), H.uniform_nonzero(k=k)),
                        lambda k: (brute.zero(k), brute.nonzero(k))),
    "below-vs-atleast": (lambda k: (H.below(k=k, k2=2), H.at_least(k=k, k2=2)),
                         lambda k: (brute.below(k, 2), brute.at_least(k, 2))),
    "zero-vs-atleast": (lambda k: (H.point_zero(k=k), H.at_least(k=k, k2=k)),
                        lambda k: (brute.zero(k), brute.at_least(k, k))),
}

probabilities = st.lists(st.floats(0.01, 1.0), min_size=2, max_size=4)


@settings(max_examples=60, deadline=None)
@given(raw_p=probabilities, raw_q=probabilities, eps0=st.floats(0.05, 2.0),
       k=st.integers(2, 4), prior=st.sampled_from(sorted(PRIORS)), eps=st.floats(0.0, 3.0))
def test_random_mechanisms_are_dominated(raw_p, raw_q, eps0, k, prior, eps) -> None:
    n = min(len(raw_p), len(raw_q))
    p = np.array(raw_p[:n]) / sum(raw_p[:n])
    q = np.array(raw_q[:n]) / sum(raw_q[:n])
    delta0 = max(brute.hockey(p, q, eps0), brute.hockey(q, p, eps0))
    if delta0 >= 1.0:
        return
    code, ref = PRIORS[prior]
    (c0, c1), (r0, r1) = code(k), ref(k)
    m0, m1 = brute.mixture(r0, p, q), brute.mixture(r1, p, q)
    pair = exact_pair(c0, c1, eps0=eps0, delta0=delta0)
    # 1e-12: rounding of sums of ≤ 4^4 terms; a true violation is a real difference
    assert brute.hockey(m1, m0, eps) <= pair.delta_forward(eps) + 1e-12
    assert brute.hockey(m0, m1, eps) <= pair.delta_reverse(eps) + 1e-12


def test_canonical_pair_attains_the_exact_curve() -> None:
    """The check above can fail: the canonical pair itself sits exactly on the curve,
    and a slightly more private pair sits strictly below it."""
    k, eps0, delta0 = 3, 0.8, 0.02
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=delta0)
    p, q = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(brute.zero(k), p, q), brute.mixture(brute.nonzero(k), p, q)
    assert math.isclose(brute.hockey(m1, m0, 0.5), pair.delta_forward(0.5), rel_tol=1e-12)
    p2, q2 = brute.canonical(eps0 * 0.9, delta0)
    m0, m1 = brute.mixture(brute.zero(k), p2, q2), brute.mixture(brute.nonzero(k), p2, q2)
    assert brute.hockey(m1, m0, 0.5) < pair.delta_forward(0.5) - 1e-3
