"""The "on grid" snapping tolerance of the PLD and bucket leaves."""

from __future__ import annotations

import math

from dpviz.buckets import Buckets
from dpviz.pld import discretize
from dpviz.pld.law import LossLaw

# Randomized-response pair with ε0 = 1 + 1e-10: a real, exactly representable atom 1e-10 above
# the grid point 1.0 (h = 0.01), i.e. 1e6 ulps away from it, but inside the 1e-9·|t| snapping window.
L = 1.0 + 1e-10
HI, LO = 1.0 / (1.0 + math.exp(-L)), 1.0 / (1.0 + math.exp(L))
LAW = LossLaw.from_atoms("rr", [L, -L], [HI, LO], [LO, HI], symmetric=True)
TRUE_DELTA_AT_1 = HI * -math.expm1(1.0 - L)  # exact δ(1) = P(L)(1 − e^{1−L}) ≈ 7.3e-11


# Regression (fixed): discretize._cells snapped atoms within 1e-9·|t| of a grid point onto it in either
# direction; an atom at 1 + 1e-10 was moved down to 1.0, so the pessimistic δ(1) is 0 < exact 7.3e-11 and
# the 'upper' ε(1e-11) = 0.99999999998632 < exact 1.0000000000863
def test_pessimistic_grid_never_snaps_an_atom_down() -> None:
    pe = discretize.pessimistic(LAW, h=0.01)
    assert pe.delta(1.0) >= TRUE_DELTA_AT_1 * (1 - 1e-6)  # 1e-6: only the snapping is in question
    eps_true = L + math.log1p(-1e-11 / HI)  # closed form of δ(ε) = HI(1 − e^{ε−L}) = 1e-11
    assert pe.epsilon(1e-11) >= eps_true - 1e-15  # 1e-15: a few ulps of ε ≈ 1


# Regression (fixed): Buckets.from_law put an atom within 1e-9·|t| above i·ln f into bucket i (ratio >
# f^i, against Lemma 6), so delta_upper(1) = 0 < exact 7.3e-11 for the atom at 1 + 1e-10
def test_bucket_leaf_never_rounds_an_atom_down() -> None:
    b = Buckets.from_law(LAW, log_f=0.01, n=1000)
    assert b.delta_upper(1.0) >= TRUE_DELTA_AT_1 * (1 - 1e-6)  # 1e-6: only the snapping is in question


def test_optimistic_grid_with_near_grid_atom_stays_below() -> None:
    """Snapping an atom down only lowers δ, so the optimistic side is fine."""
    op = discretize.optimistic(LAW, h=0.01)
    for eps in (0.0, 0.5, 1.0, 1.00000000005):
        assert op.delta(eps) <= float(LAW.delta(eps)[0]) + 1e-15  # 1e-15: closed-form rounding


def test_fft_noise_floor_is_truncated_so_squarings_stay_small() -> None:
    """Regression: FFT round-off left a positive noise floor over the whole product, which a
    truncation tail of 1e-15 could not remove, so every squaring doubled the grid (6.9M bins for
    this heavy-tailed subsampled loss, and 500 MB for q = 0.001, 30,000 steps). The noise may be
    truncated like any tail (its mass is within the round-off already charged): the grid stays
    small and the interval certified."""
    from dpviz.mechanisms import routes
    from dpviz.mechanisms.registry import make
    from dpviz.pld.accountant import compose

    mech = make("gaussian", sigma=0.5, sampling_rate=1e-4)
    c = compose([(mech.law, 1000)], h=2e-4)
    assert max(g.mass.size for g in c.upper + c.lower) < 200_000  # was > MAX_BINS = 4,000,000
    lo, up = c.epsilon(1e-6)
    assert lo is not None and up is not None and lo <= up
    # independent route: the Rényi-DP bound (Steinke Thm 34) is an upper bound too, never below
    # the exact ε, so the certified lower end cannot exceed it
    rdp = routes.rdp([(mech, 1000)], delta=1e-6).upper
    assert rdp is not None and lo <= rdp
