"""Tuple refinement (HBW Alg. 3) and the composite-hypothesis bound of HBW §V-B."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.gce import hypotheses as H
from dpviz.gce import paper_bounds as PB
from dpviz.gce.exact import exact_pair
from dpviz.gce.refinement import refine, refinement_bound, weighted_epsilon

VECTORS = list(itertools.product((0, 1), repeat=3))


def _prior(idx: list[int], raw: list[float]) -> H.Explicit:
    w = np.array(raw[: len(idx)]) / sum(raw[: len(idx)])
    return H.Explicit(k=3, support=tuple((VECTORS[i], float(x)) for i, x in zip(idx, w, strict=False)))


support_idx = st.lists(st.integers(0, 7), min_size=1, max_size=4, unique=True)
weights = st.lists(st.floats(0.05, 1.0), min_size=4, max_size=4)


@settings(max_examples=50, deadline=None)
@given(i0=support_idx, w0=weights, i1=support_idx, w1=weights)
def test_refinement_preserves_both_marginals(i0, w0, i1, w1) -> None:
    p0, p1 = _prior(i0, w0), _prior(i1, w1)
    matched = refine(p0.support, p1.support)
    for side, p in ((0, p0), (1, p1)):
        got: dict = {}
        for row in matched:
            got[row[side]] = got.get(row[side], 0.0) + row[2]
        for b, w in p.support:
            assert got.get(b, 0.0) == pytest.approx(w, abs=1e-12)  # float splitting only
    assert len(matched) <= len(p0.support) + len(p1.support) - 1  # each step retires a tuple


@settings(max_examples=40, deadline=None)
@given(i0=support_idx, w0=weights, i1=support_idx, w1=weights, eps0=st.sampled_from([0.3, 1.0, 3.0]),
       delta0=st.sampled_from([0.0, 1e-3]), delta=st.sampled_from([0.0, 0.01, 0.2]))
def test_refinement_bound_is_never_below_exact(i0, w0, i1, w1, eps0, delta0, delta) -> None:
    p0, p1 = _prior(i0, w0), _prior(i1, w1)
    b = refinement_bound(p0, p1, eps0=eps0, delta0=delta0, delta=delta)
    if not b.feasible:
        return
    pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    assert pair.delta(b.epsilon) <= b.delta * (1 + 1e-9) + 1e-15  # rounding of ≤ 4^3 terms


def test_uniform_example_reproduces_eq3() -> None:
    """HBW §V-B example: refining 0⃗ against U(B∖{0⃗}) with simple composition per pair
    gives Eq. 3 (δ0 = 0, δ = 0: each pair is (|b|ε0, 0))."""
    for k in (2, 5, 8):
        b = refinement_bound(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=0.4, delta0=0.0, delta=0.0,
                             method="basic")
        assert b.directions == "both"
        assert b.epsilon == pytest.approx(PB.eq34(k=k, eps0=0.4, delta0=0.0).epsilon, rel=1e-12)


def test_weighted_formula_fails_for_two_composite_hypotheses() -> None:
    """Found by random search (k = 3, ε0 = 3, pure DP): the exact ε at δ = 0 exceeds
    HBW's weighted ln Σ w e^{ε_i}; the returned bound (max over pairs) does not."""
    p0 = H.explicit([((0, 0, 0), 0.2626954664163071), ((1, 1, 0), 0.7373045335836929)])
    p1 = H.explicit([((1, 0, 0), 0.24898021653412578), ((1, 1, 0), 0.7510197834658743)])
    exact_eps = exact_pair(p0, p1, eps0=3.0, delta0=0.0).epsilon(0.0)
    weighted = weighted_epsilon(p0, p1, eps0=3.0, delta0=0.0, delta=0.0, method="basic")
    assert exact_eps > weighted + 0.4
    bound = refinement_bound(p0, p1, eps0=3.0, delta0=0.0, delta=0.0, method="basic")
    assert bound.epsilon >= exact_eps and "weighted" in bound.note
    assert math.isclose(bound.epsilon, 6.0)  # the (0,0,0)-(1,1,0) pair differs in 2 places


def test_point_mass_bound_is_never_negative() -> None:
    """Issue 14 (found by tests/fuzz): gce --eps0 1 --k 3 --delta 0.75 --prior at-least:1 printed the
    refinement upper bound as ε = −2.2e-16: every pair's ε is 0 there and Σ w_i = 1 up to rounding."""
    b = refinement_bound(H.below(k=3, k2=1), H.at_least(k=3, k2=1), eps0=1.0, delta0=0.0,
                         delta=0.7498942093324559)
    assert b.epsilon == 0.0
