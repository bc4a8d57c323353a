"""Trade-off curve of a finite pair against brute-force Neyman-Pearson enumeration."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.regions import intersection_boundary, pair_boundary
from dpviz.validation import ParameterError
from tests.regions.test_boundary import XS, brute_tradeoff, canonical


def distribution(n: int):
    """Probability vectors on n outcomes, zeros allowed (outcomes one side cannot produce)."""
    return st.lists(st.one_of(st.just(0.0), st.floats(0.01, 1.0)), min_size=n, max_size=n).filter(
        lambda v: sum(v) > 0).map(lambda v: np.asarray(v) / sum(v))


@given(st.integers(1, 6).flatmap(lambda n: st.tuples(distribution(n), distribution(n))))
@settings(max_examples=200, deadline=None)
def test_pair_boundary_matches_neyman_pearson(pq):
    p, q = pq
    # 1e-12: both are exact piecewise-linear curves; differences are rounding only
    np.testing.assert_allclose(pair_boundary(p, q)(XS), brute_tradeoff(p, q, XS), atol=1e-12)


@pytest.mark.parametrize("e0,d0", [(0.5, 0.0), (1.0, 0.05), (0.1, 0.001)])
def test_canonical_pair_region_is_r_eps_delta(e0, d0):
    """KOV eq. 16: the canonical pair's region is exactly R(ε0, δ0)."""
    p, q = canonical(e0, d0)
    np.testing.assert_allclose(pair_boundary(p, q)(XS), intersection_boundary([e0], [d0])(XS), atol=1e-12)


@pytest.mark.parametrize("p,q,field", [
    ([0.5, 0.6], [0.5, 0.5], "P"), ([0.5, 0.5], [-0.1, 1.1], "Q"), ([1.0], [0.5, 0.5], "Q"),
    ([], [], "P"), ([float("nan"), 1.0], [0.5, 0.5], "P"),
])
def test_bad_pairs_name_the_field(p, q, field):
    with pytest.raises(ParameterError, match=rf"^{field} must be"):
        pair_boundary(p, q)
