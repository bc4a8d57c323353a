"""``grid.split_convolve``: the heavy window of each factor by direct sums, the rest by FFT. Its error
bound must hold against an exact integer convolution, on the sound side for each kind of grid, and it
must be far below the plain FFT's for a peaked law (a small-q step: ‖a‖₂ ≈ 0.5, whose FFT error,
carried by all k/2 later copies, reached δ ≈ 1e-6 at q = 1e-4, σ = 0.6, 10^5 steps)."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mechanisms import gaussian
from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import fft
from dpviz.pld.accountant import compose
from dpviz.pld.grid import split_convolve

SCALE = 2.0**-24


def _peaked(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer masses: a spike of 2^20 in a few bins on a long thin tail (exact in the reference)."""
    rng = np.random.default_rng(seed)
    ints = rng.integers(0, 64, n).astype(np.int64)
    c = n // 3
    ints[c:c + 5] += np.array([2**18, 2**20, 2**20, 2**19, 2**16])
    return ints, ints.astype(np.float64) * SCALE


@pytest.mark.parametrize("pessimistic", [True, False])
@pytest.mark.parametrize(("n", "same"), [(20_000, True), (30_000, False)])
def test_split_bound_holds_and_is_small(n, same, pessimistic):
    ia, a = _peaked(n, 1)
    ib, b = (ia, a) if same else _peaked(n - 777, 2)
    got, err = split_convolve(a, b, same=same, pessimistic=pessimistic)
    exact = np.convolve(ia, ib).astype(np.float64) * SCALE * SCALE
    diff = got - exact
    # sound side: only the FFT part may err either way, within ``err`` in L1
    wrong_way = np.minimum(diff, 0.0) if pessimistic else np.maximum(diff, 0.0)
    assert np.abs(wrong_way).sum() <= err
    assert np.abs(diff).sum() <= err + 1e-12 * exact.sum()
    assert err < fft.l1_error(got.size, a, b) / 100  # the plain FFT's bound, 100× larger at least


def test_small_q_composed_round_off():
    law = subsample_remove(gaussian.loss_law(sigma=0.6), rate=1e-4)
    c = compose([(law, 100_000)], h=5.38e-5, tail=1e-9, total=True, offsets=True)
    assert max(g.err for g in c.upper + c.lower) < 1e-8  # 9e-7 with one FFT per product
