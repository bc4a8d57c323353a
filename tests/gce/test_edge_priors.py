"""GCE exact curve, paper bounds and refinement at edge priors and parameters.

Brute force (tests/gce/brute.py: all 4^k outcomes, all b) for the threshold priors at
k' = 1 and k' = k, swapped directions (p1 = 0⃗), ε0 = 0, ε0 = 30 and δ0 = 0.5; the paper
bounds and the refinement bound are checked against the exact curve in the directions
they claim.
"""

from __future__ import annotations

import pytest

from dpviz.gce import hypotheses as H
from dpviz.gce import paper_bounds as pb
from dpviz.gce.exact import exact_pair
from dpviz.gce.refinement import refinement_bound
from tests import oracles as brute


def _edge_cases():
    out = []
    for k in (2, 4):
        for k2 in (1, k):
            out.append((f"zero-atleast{k2}-k{k}", H.point_zero(k=k), H.at_least(k=k, k2=k2),
                        brute.zero(k), brute.at_least(k, k2)))
            out.append((f"atleast{k2}-zero-k{k}", H.at_least(k=k, k2=k2), H.point_zero(k=k),
                        brute.at_least(k, k2), brute.zero(k)))
            out.append((f"atleast-below{k2}-k{k}", H.at_least(k=k, k2=k2), H.below(k=k, k2=k2),
                        brute.at_least(k, k2), brute.below(k, k2)))
        out.append((f"nonzero-zero-k{k}", H.uniform_nonzero(k=k), H.point_zero(k=k),
                    brute.nonzero(k), brute.zero(k)))
        out.append((f"nonzero-one-k{k}", H.uniform_nonzero(k=k), H.point_one(k=k),
                    brute.nonzero(k), {(1,) * k: 1.0}))
        w = [0.5] + [0.0] * (k - 1) + [0.5]
        out.append((f"ends-zero-k{k}", H.exchangeable(k=k, level_weights=w), H.point_zero(k=k),
                    brute.by_level(k, w), brute.zero(k)))
    return [pytest.param(*c[1:], id=c[0]) for c in out]


@pytest.mark.parametrize(("eps0", "delta0"), [(0.0, 0.0), (0.0, 0.1), (30.0, 0.0), (30.0, 1e-4), (0.3, 0.5)])
@pytest.mark.parametrize(("p0", "p1", "b0", "b1"), _edge_cases())
def test_exact_edge_priors_match_brute_force(p0, p1, b0, b1, eps0: float, delta0: float) -> None:
    pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    P, Q = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(b0, P, Q), brute.mixture(b1, P, Q)
    for eps in (0.0, 0.35, 1.4, 29.0, 30.0, 60.0, 90.0):
        # 1e-10 relative + 1e-13 absolute: same margins as tests/gce (≤ 4^4 linear-space terms)
        assert pair.delta_forward(eps) == pytest.approx(brute.hockey(m1, m0, eps), rel=1e-10, abs=1e-13)
        assert pair.delta_reverse(eps) == pytest.approx(brute.hockey(m0, m1, eps), rel=1e-10, abs=1e-13)


def _holds(bound, pair) -> None:
    """The bound's ε at its δ is ≥ the exact ε in every direction it claims."""
    if not bound.feasible or bound.delta >= 1:
        return
    tol = 1e-9 * max(1.0, bound.epsilon)  # exact ε is rounded up by design; bounds are closed forms
    f = pair.epsilon_forward(bound.delta)
    assert f is not None and f <= bound.epsilon + tol
    if bound.directions == "both":
        r = pair.epsilon_reverse(bound.delta)
        assert r is not None and r <= bound.epsilon + tol


@pytest.mark.parametrize("k", [2, 5, 41, 60])
@pytest.mark.parametrize(("eps0", "delta0"), [(0.01, 1e-3), (1.0, 1e-6), (3.0, 0.01), (10.0, 0.0)])
def test_paper_bounds_hold_in_claimed_directions(k: int, eps0: float, delta0: float) -> None:
    """k = 41, 60 exercise the TERMS = 40 tail lumping of Thm 3 / Cor. 6."""
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=delta0)
    if k > 1:  # k = 1 at δ = δ0 sits exactly on the floor (float tie), not a bound question
        _holds(pb.corollary7(k=k, eps0=eps0, delta0=delta0), pair)
        _holds(pb.eq34(k=k, eps0=eps0, delta0=delta0), pair)
    for d in (1e-5, 0.05):
        for m in pb.THEOREM3_METHODS:
            _holds(pb.theorem3(k=k, eps0=eps0, delta0=delta0, method=m, delta=d), pair)
            _holds(pb.corollary6(k=k, eps0=eps0, delta0=delta0, method=m, delta=d), pair)
        if k <= 5:
            split = [d * (i + 1) / k for i in range(k)]
            _holds(pb.theorem3(k=k, eps0=eps0, delta0=delta0, method="optimal", split=split), pair)


@pytest.mark.parametrize("k", [1, 3, 5])
@pytest.mark.parametrize(("eps0", "delta0"), [(0.5, 0.0), (1.0, 1e-4), (0.0, 0.1)])
def test_refinement_bound_is_sound(k: int, eps0: float, delta0: float) -> None:
    pairs = [(H.point_zero(k=k), H.uniform_nonzero(k=k)), (H.point_one(k=k), H.uniform_nonzero(k=k))]
    for k2 in range(1, k + 1):
        pairs.append((H.below(k=k, k2=k2), H.at_least(k=k, k2=k2)))
    for p0, p1 in pairs:
        pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
        for d in (1e-6, 0.05, 0.3):
            for m in ("optimal", "kov", "advanced", "basic"):
                _holds(refinement_bound(p0, p1, eps0=eps0, delta0=delta0, delta=d, method=m), pair)
