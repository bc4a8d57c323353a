"""Privacy-bucket bounds when the ∞ bucket holds finite-loss events of tiny B-mass."""

from __future__ import annotations

from dpviz.buckets import Buckets
from dpviz.mechanisms import canonical
from tests import oracles


# Regression (fixed): Buckets.compose computed the ∞-bucket B-mass as 1 − (1 − q1)(1 − q2), which
# cancels to 0 for q ≈ 4e-44; delta_lower then treats the whole ∞ bucket as infinite loss and reports
# δ_lower(250) = 1 for two (100, 0)-canonical pairs whose true δ(250) is 0
def test_lower_bound_with_tiny_infinity_bucket_b_mass() -> None:
    law = canonical.loss_law(eps0=100.0, delta0=0.0)
    # n·ln f = 50 < 100: the +100 atom goes to the ∞ bucket with B-mass e^{-100}/(1+e^{-100})
    b = Buckets.from_law(law, log_f=1.0, n=50).self_compose(2)
    p, q = oracles.canonical_product([(100.0, 0.0)] * 2)
    truth = oracles.hockey(p, q, 250.0)  # every loss is ≤ 200, so this is exactly 0
    assert truth == 0.0
    # 1e-12 absolute: the lower bound may only exceed the truth by round-off (it exceeds it by 1)
    assert b.delta_lower(250.0) <= truth + 1e-12


def test_leaf_lower_bound_keeps_tiny_infinity_bucket_b_mass() -> None:
    """A single leaf stores the ∞ bucket's B-mass directly (no cancellation): sound."""
    law = canonical.loss_law(eps0=100.0, delta0=0.0)
    b = Buckets.from_law(law, log_f=1.0, n=50)
    p, q = oracles.canonical_product([(100.0, 0.0)])
    for eps in (50.0, 99.0, 150.0):
        t = oracles.hockey(p, q, eps)
        # 1e-12 absolute: linear-space sums of O(1) masses
        assert b.delta_lower(eps) <= t + 1e-12
        assert b.delta_upper(eps) >= t - 1e-12
