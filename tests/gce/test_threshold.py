"""The threshold priors' class sums in O(k) (dpviz.gce.threshold, docs/MATH.md §5.6), against
60-digit sums, against the O(k²) direct sums they replaced, and compiled against interpreted."""

from __future__ import annotations

import math

import mpmath as mp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import gammaln

from dpviz.gce import threshold
from dpviz.numerics import logsumexp_rows

U = 2.0**-53


def bound(k: int, eps0: float, log_value: float) -> float:
    """§5.6's bound on the relative error of U(n) or D(n): the walks' steps, the start values'
    logarithms (ln C(n, j) ± j ε0) and the final logarithm; 1e-14 for Loader's C(n, j)."""
    n = max(k - 1, 1)
    return U * (3 * n * (1 + math.log(n)) + 9 * k + 8 * k * (1 + eps0) + 4 * abs(log_value) + 16) + 1e-14


def direct(k: int, k2: int, eps0: float) -> tuple[np.ndarray, np.ndarray]:
    """The O(k²) direct sums the walks replaced (dpviz before §5.6), as written there: for each n_B,
    ln Σ_s a_s Σ_{t ≥ k' − s} c_t and ln Σ_s a_s Σ_{t ≤ k' − 1 − s} c_t in log space."""
    up, down = np.empty(k + 1), np.empty(k + 1)
    lgam = gammaln(np.arange(k + 1, dtype=float) + 1.0)
    for n_b in range(k + 1):
        n_c = k - n_b
        s = np.arange(n_b + 1)
        t = np.arange(n_c + 1)
        la = (lgam[n_b] - lgam[s] - lgam[n_b - s]) + s * eps0
        lc = (lgam[n_c] - lgam[t] - lgam[n_c - t]) - t * eps0
        idx = np.clip(k2 - s, 0, n_c + 1)
        rows = np.empty((2, n_b + 1))
        rows[0] = la + np.concatenate([np.logaddexp.accumulate(lc[::-1])[::-1], [-np.inf]])[idx]
        rows[1] = la + np.concatenate([[-np.inf], np.logaddexp.accumulate(lc)])[idx]
        up[n_b], down[n_b] = logsumexp_rows(rows)
    return up, down


def reference(k: int, k2: int, eps0: float) -> tuple[list, list]:
    """U(n), D(n) with 60 digits: tails and heads of (1 + y/x)^{n_C} by Pascal's rule, summed
    against a_s = C(n_B, s) x^s (no subtraction anywhere)."""
    mp.mp.dps = 60
    x = mp.e ** mp.mpf(eps0)
    ix = 1 / x
    tails, heads = [[mp.mpf(1), mp.mpf(0)]], [[mp.mpf(0), mp.mpf(1)]]  # index j = 0 … n + 1
    for n in range(k):
        t, h = tails[-1], heads[-1]
        tails.append([(t[j] if j <= n + 1 else 0) + ix * (t[j - 1] if j >= 1 else t[0])
                      for j in range(n + 3)])
        heads.append([(h[j] if j <= n + 1 else h[n + 1]) + ix * (h[j - 1] if j >= 1 else 0)
                      for j in range(n + 3)])
    up, down = [], []
    for n_b in range(k + 1):
        n_c = k - n_b
        u = d = mp.mpf(0)
        for s in range(n_b + 1):
            a = mp.binomial(n_b, s) * x**s
            j = min(max(k2 - s, 0), n_c + 1)
            u += a * tails[n_c][j]
            d += a * heads[n_c][j]
        up.append(mp.log(u))
        down.append(mp.log(d))
    return up, down


@pytest.mark.parametrize(("k", "k2", "eps0"), [
    (1, 1, 0.1), (2, 1, 0.5), (2, 2, 0.5), (40, 1, 0.0), (40, 20, 5.0), (60, 59, 0.01), (60, 30, 30.0),
    (50, 3, 100.0), (150, 150, 2.0), (200, 3, 0.1), (200, 100, 1.0), (250, 240, 0.5)])
def test_the_walks_against_sixty_digits(k: int, k2: int, eps0: float) -> None:
    """Every class of both families within §5.6's bound (observed ≤ 1e-13 where the direct sums,
    by log-gamma differences, were off by up to 4e-13)."""
    up, down = threshold.threshold_sums(k, k2, eps0)
    ref_up, ref_down = reference(k, k2, eps0)
    for ours, ref in ((up, ref_up), (down, ref_down)):
        for value, exact in zip(ours, ref, strict=True):
            error = abs(float(mp.expm1(mp.mpf(float(value)) - exact)))
            assert error <= bound(k, eps0, float(value)), (k, k2, eps0, error)
            assert error <= 1e-12


@settings(max_examples=60)
@given(k=st.integers(1, 80), frac=st.floats(0.0, 1.0), eps0=st.floats(0.0, 100.0))
def test_the_walks_against_the_direct_sums(k: int, frac: float, eps0: float) -> None:
    """The O(k²) sums the walks replaced: the same numbers within both routes' rounding (the direct
    one's log-gamma differences carry ~ulp(ln k!) each; both log values carry ulp(|ln U|))."""
    k2 = 1 + min(k - 1, int(frac * k))
    up, down = threshold.threshold_sums(k, k2, eps0)
    old_up, old_down = direct(k, k2, eps0)
    for ours, old in ((up, old_up), (down, old_down)):
        tolerance = bound(k, eps0, 0.0) + 2e-14 * (1.0 + np.abs(old)) + 1e-15 * k * math.log(k + 1)
        assert np.all(np.abs(ours - old) <= tolerance), (k, k2, eps0, np.max(np.abs(ours - old)))


def _walks(compiled: bool):
    """Every walk in the block runs compiled (``compiled``) or in the interpreter."""
    return threshold.LOOPS.forced(compiled)


def test_the_walks_are_compiled() -> None:
    assert threshold.LOOPS.compiled()["phi_walk"] is not threshold.phi_walk


@pytest.mark.parametrize(("k", "k2", "eps0"), [(1, 1, 0.3), (30, 10, 0.4), (1000, 3, 0.1), (1000, 999, 2.5),
                                               (5000, 2500, 0.0), (3000, 17, 100.0)])
def test_compiled_and_interpreted_walks_give_the_same_floats(k: int, k2: int, eps0: float) -> None:
    out = []
    for compiled in (True, False):
        threshold.threshold_sums.cache_clear()
        with _walks(compiled):
            out.append(threshold.threshold_sums(k, k2, eps0))
    threshold.threshold_sums.cache_clear()
    assert all(np.array_equal(a, b) for a, b in zip(*out, strict=True))
    assert np.all(np.isfinite(out[0][0])) and np.all(np.isfinite(out[0][1]))


def test_the_renormalisation_is_exercised() -> None:
    """k = 3,000 at ε0 = 2: the values span far more than a double's range (so the walks renormalise),
    and the families still add up to the whole: U(n) + D(n) = (1 + x)^n (1 + 1/x)^{k−n}."""
    k, eps0 = 3000, 2.0
    up, down = threshold.threshold_sums(k, 40, eps0)
    assert up.max() - up.min() > 2000.0
    n = np.arange(k + 1)
    whole = n * np.logaddexp(0.0, eps0) + (k - n) * np.logaddexp(0.0, -eps0)
    assert np.allclose(np.logaddexp(up, down), whole, rtol=1e-13, atol=0)


def test_refuses_outside_its_range() -> None:
    for args in ((10, 0, 0.1), (10, 11, 0.1), (10, 3, 101.0)):
        with pytest.raises(ValueError):
            threshold.threshold_sums(*args)
