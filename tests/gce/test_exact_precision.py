"""The exact method beyond brute-force sizes: 50-digit mpmath sums over count classes,
and the two exact code paths (count-class recursion, explicit column groups) against
each other; plus the "too large" answer."""

from __future__ import annotations

import math

import mpmath
import pytest

from dpviz.gce import hypotheses as H
from dpviz.gce import summary
from dpviz.gce.exact import TooLargeError, exact_pair
from dpviz.guarantee import Kind

# Log-space sums of ≤ 10^5 positive terms against 50-digit arithmetic: 1e-9 relative
# leaves room for the ~1e-13 accumulated rounding and catches any wrong class.
REL = 1e-9


def _mp_uniform_nonzero(k: int, eps0: float, delta0: float, eps: float) -> tuple[float, float]:
    """(forward, reverse) δ(ε) for 0⃗ vs U(B∖{0⃗}) summed over (n_B, n_C, n_D) classes,
    with R = ((1+e^{ε0})^{n_B} (1+e^{−ε0})^{n_C} − 1)/(2^k − 1) (docs/MATH.md §5.5)."""
    mpmath.mp.dps = 50
    e, d, t = mpmath.e ** mpmath.mpf(eps0), mpmath.mpf(delta0), mpmath.e ** mpmath.mpf(eps)
    norm = mpmath.mpf(2) ** k - 1
    fwd = rev = mpmath.mpf(0)
    free = (1 - d) / (1 + e)
    for nb in range(k + 1):
        for nc in range(k + 1 - nb):
            nd = k - nb - nc
            if delta0 == 0 and nd > 0:
                continue
            q = mpmath.factorial(k) / (mpmath.factorial(nb) * mpmath.factorial(nc) * mpmath.factorial(nd)) \
                * free ** (nb + nc) * e ** nc * (d ** nd if nd else 1)
            r = ((1 + e) ** nb * (1 + 1 / e) ** nc - 1) / norm
            fwd += q * max(r - t, 0)
            rev += q * max(1 - t * r, 0)
    fwd += (1 - (1 - d / 2) ** k) / (1 - mpmath.mpf(2) ** -k)  # mass with an A outcome: Q = 0
    return float(fwd), float(rev)


@pytest.mark.parametrize(("k", "eps0", "delta0"), [(200, 0.1, 0.0), (1500, 0.05, 0.0), (40, 0.5, 1e-4)])
def test_uniform_nonzero_against_mpmath(k: int, eps0: float, delta0: float) -> None:
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=delta0)
    for eps in (0.0, 0.5, 2.0, 5.0):
        fwd, rev = _mp_uniform_nonzero(k, eps0, delta0, eps)
        assert pair.delta_forward(eps) == pytest.approx(fwd, rel=REL, abs=1e-300)
        assert pair.delta_reverse(eps) == pytest.approx(rev, rel=REL, abs=1e-300)


def test_generic_recursion_against_mpmath() -> None:
    """0⃗ vs U{|b| ≥ 7}, k = 20, δ0 = 0:
    R(n_B) = (1/N) Σ_{j ≥ 7} [x^j] (1 + e^{ε0}x)^{n_B} (1 + x/e^{ε0})^{k − n_B}."""
    k, k2, eps0 = 20, 7, 0.3
    mpmath.mp.dps = 50
    e = mpmath.e ** mpmath.mpf(eps0)
    n = sum(mpmath.binomial(k, j) for j in range(k2, k + 1))
    pair = exact_pair(H.point_zero(k=k), H.at_least(k=k, k2=k2), eps0=eps0, delta0=0.0)
    for eps in (0.0, 1.0, 3.0):
        t = mpmath.e ** mpmath.mpf(eps)
        fwd = rev = mpmath.mpf(0)
        for nb in range(k + 1):
            nc = k - nb
            h = [sum(mpmath.binomial(nb, s) * mpmath.binomial(nc, j - s) * e ** (2 * s - j)
                     for s in range(max(0, j - nc), min(nb, j) + 1)) for j in range(k + 1)]
            r = sum(h[j] for j in range(k2, k + 1)) / n
            q = mpmath.binomial(k, nb) * e ** nc / (1 + e) ** k
            fwd += q * max(r - t, 0)
            rev += q * max(1 - t * r, 0)
        assert pair.delta_forward(eps) == pytest.approx(float(fwd), rel=REL)
        assert pair.delta_reverse(eps) == pytest.approx(float(rev), rel=REL)


@pytest.mark.parametrize(("p0", "p1"), [
    pytest.param(H.below(k=6, k2=3), H.at_least(k=6, k2=3), id="below-vs-atleast-k6"),
    pytest.param(H.point_zero(k=6), H.exchangeable(k=6, level_weights=[0, 0.1, 0, 0.2, 0, 0.3, 0.4]),
                 id="zero-vs-levels-k6"),
])
def test_count_classes_match_explicit_column_groups(p0, p1) -> None:
    """Two code paths for the same pair: exchangeable count classes vs the explicit
    enumeration of all b (every coordinate its own column group, 4^6 classes).
    1e-11: both log-space, summed in different orders."""
    a = exact_pair(p0, p1, eps0=0.6, delta0=2e-3)
    b = exact_pair(H.to_explicit(p0), H.to_explicit(p1), eps0=0.6, delta0=2e-3)
    for eps in (0.0, 0.3, 1.2, 4.0):
        assert a.delta_forward(eps) == pytest.approx(b.delta_forward(eps), rel=1e-11, abs=1e-300)
        assert a.delta_reverse(eps) == pytest.approx(b.delta_reverse(eps), rel=1e-11, abs=1e-300)


def test_too_large_is_a_clear_answer() -> None:
    """9 billion recursion cells (k = 3,000, two composite priors): refused before any work, by the
    time part of the budget (the window over δ-outcomes keeps the classes to 8.6 million)."""
    with pytest.raises(TooLargeError, match="recursion cells") as info:
        exact_pair(H.below(k=3000, k2=3), H.at_least(k=3000, k2=3), eps0=0.1, delta0=1e-6)
    assert "of work, above the" in info.value.reason
    res = summary.at_least(k=3000, k2=300, eps0=0.1, delta0=1e-6, delta=1e-2)
    exact = res["exact"]
    assert exact.kind is Kind.UPPER and "not computed" in exact.reason
    assert exact.source == res["classic"].source and exact.epsilon == res["classic"].epsilon  # the best bound
    assert res["classic"].feasible


def test_large_k_pure_dp_is_sound_and_below_classic() -> None:
    k, eps0, delta = 100_000, 0.1, 1e-6
    res = summary.uniform_nonzero(k=k, eps0=eps0, delta0=0.0, delta=delta)
    assert res["exact"].epsilon < res["theorem3_optimal"].epsilon < res["classic"].epsilon
    assert res["exact"].delta <= delta
    assert math.isfinite(res["exact"].epsilon)


@pytest.mark.parametrize(("k", "k2"), [(30, 10), (12, 1), (12, 12), (25, 24)])
def test_threshold_closed_form_matches_recursion(k: int, k2: int) -> None:
    """δ0 = 0: the running tail/head sums for U{|b| ≥ k'}, U{|b| < k'} against the generic
    recursion on the same level weights (given as a custom prior). 1e-12: two log-space
    orders of the same positive sums (observed ≤ 3e-14)."""
    import numpy as np

    pairs = ((H.below(k=k, k2=k2), H.at_least(k=k, k2=k2)), (H.point_zero(k=k), H.at_least(k=k, k2=k2)))
    for p0, p1 in pairs:
        fast = exact_pair(p0, p1, eps0=0.4, delta0=0.0)
        slow = exact_pair(*(H.exchangeable(k=k, level_weights=np.exp(p.log_w)) for p in (p0, p1)),
                          eps0=0.4, delta0=0.0)
        for eps in (0.0, 0.5, 2.0):
            assert fast.delta_forward(eps) == pytest.approx(slow.delta_forward(eps), rel=1e-12, abs=1e-300)
            assert fast.delta_reverse(eps) == pytest.approx(slow.delta_reverse(eps), rel=1e-12, abs=1e-300)
