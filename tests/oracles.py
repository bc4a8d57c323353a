"""Independent oracles for the tests: brute-force enumeration, exact sums in mpmath, closed forms
typed in again from the papers, and membership priors written out vector by vector (one module
for every test area: issue 11 item 4).

Nothing here imports ``dpviz``: expected values come from linear-space enumeration (numpy),
mpmath, and the theorems as printed (KOV = Kairouz-Oh-Viswanath, seed 004; Roth lecture 4,
seed 002; HBW, seed 000).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence
from typing import Any

import mpmath
import numpy as np

Pair = tuple[np.ndarray, np.ndarray]
Prior = dict[tuple[int, ...], float]

# ---------------------------------------------------------------------------
# Finite pairs, their products, hockey-stick divergences, smallest ε
# ---------------------------------------------------------------------------


def canonical(eps0: float, delta0: float) -> Pair:
    """(P~, Q~) of KOV eq. 16 on outcomes (A, B, C, D), written out by hand."""
    e = math.exp(eps0)
    p = np.array([delta0, (1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e), 0.0])
    q = np.array([0.0, (1 - delta0) / (1 + e), (1 - delta0) * e / (1 + e), delta0])
    return p, q


def law_pair(law: Any) -> Pair:
    """(P, Q) outcome masses of a finite ``LossLaw`` (duck-typed: ``p``, ``q``, ``p_inf``,
    ``q_neg_inf``), its ±∞ masses as two extra outcomes."""
    p = np.append(np.asarray(law.p, dtype=float), [law.p_inf, 0.0])
    q = np.append(np.asarray(law.q, dtype=float), [0.0, law.q_neg_inf])
    return p, q


def product_pair(pairs: Sequence[Pair]) -> Pair:
    """P and Q of the product of the given pairs, every outcome tuple in lexicographic order
    (outer products, left to right)."""
    p, q = np.ones(1), np.ones(1)
    for fp, fq in pairs:
        p, q = np.outer(p, fp).ravel(), np.outer(q, fq).ravel()
    return p, q


def canonical_product(mechanisms: Sequence[tuple[float, float]]) -> Pair:
    """The product of canonical pairs over ``mechanisms`` = [(ε_i, δ_i), …]."""
    return product_pair([canonical(e, d) for e, d in mechanisms])


def hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Σ_x max(0, p(x) − e^ε q(x)): one direction."""
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Both directions: max of Σ max(0, P − e^ε Q) and Σ max(0, Q − e^ε P) (compensated sums)."""
    w = math.exp(eps)
    return max(math.fsum(np.maximum(0.0, p - w * q)), math.fsum(np.maximum(0.0, q - w * p)))


def smallest_epsilon(fn: Callable[[float], float], delta: float, *, hi: float = 300.0) -> float | None:
    """Smallest ε ≥ 0 with fn(ε) ≤ δ for a non-increasing fn, by 200 halvings (to ~1e-13 of hi);
    ``None`` when even fn(hi) > δ."""
    if fn(0.0) <= delta:
        return 0.0
    if fn(hi) > delta:
        return None
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if fn(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def smallest_eps(p: np.ndarray, q: np.ndarray, delta: float, *, hi: float = 300.0,
                 two_sided: bool = False) -> float | None:
    """Smallest ε ≥ 0 with the hockey-stick divergence of (p, q) ≤ δ (both directions with
    ``two_sided``)."""
    fn = hockey_stick if two_sided else hockey
    return smallest_epsilon(lambda e: fn(p, q, e), delta, hi=hi)


# ---------------------------------------------------------------------------
# Membership priors over b ∈ {0,1}^k, and their mixtures (HBW Def. 3)
# ---------------------------------------------------------------------------


def vectors(k: int) -> list[tuple[int, ...]]:
    return [tuple(v) for v in itertools.product((0, 1), repeat=k)]


def product(b: Sequence[int], p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Distribution over all n^k outcomes of ⊗_i (b_i ? p : q)."""
    return product_pair([(p, p) if bit else (q, q) for bit in b])[0]


def mixture(prior: Prior, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return sum(w * product(b, p, q) for b, w in prior.items())


def uniform(vs: Sequence[tuple[int, ...]]) -> Prior:
    return {v: 1.0 / len(vs) for v in vs}


def zero(k: int) -> Prior:
    return {(0,) * k: 1.0}


def nonzero(k: int) -> Prior:
    return uniform([v for v in vectors(k) if any(v)])


def at_least(k: int, k2: int) -> Prior:
    return uniform([v for v in vectors(k) if sum(v) >= k2])


def below(k: int, k2: int) -> Prior:
    return uniform([v for v in vectors(k) if sum(v) < k2])


def by_level(k: int, w: Sequence[float]) -> Prior:
    """Exchangeable prior: weight w[j] spread evenly over the C(k, j) vectors with |b| = j."""
    return {v: w[sum(v)] / math.comb(k, sum(v)) for v in vectors(k) if w[sum(v)] > 0}


# ---------------------------------------------------------------------------
# Exact sums in mpmath (KOV Thm 3.3)
# ---------------------------------------------------------------------------


def mp_delta_opt(*, k: int, eps0: float, delta0: float, eps: float, dps: int = 40) -> mpmath.mpf:
    """δ_opt(ε) = 1 − (1−δ0)^k (1 − Σ_l C(k,l) max(0, e^{(k−l)ε0} − e^{ε+lε0}) / (1+e^{ε0})^k).

    Only l < (kε0 − ε)/(2ε0) contribute (the max is 0 otherwise). The weights
    w_l = C(k,l) e^{(k−l)ε0} / (1+e^{ε0})^k (a Binomial(k, 1/(1+e^{ε0})) pmf) are formed
    from w_{l0} by the exact ratio w_{l+1}/w_l = (k−l)/(l+1) · e^{−ε0} at ``dps`` digits.
    The sum starts at l0 = mean − 40 standard deviations (0 for small k): the skipped
    terms are below e^{−800} of the largest, far below the 1e-9 the tests ask for, and
    k = 10^5 then costs a few thousand steps instead of k/2.
    """
    with mpmath.workdps(dps):
        e0, ee = mpmath.mpf(eps0), mpmath.mpf(eps)
        total = mpmath.mpf(0)
        if eps0 > 0:
            p_low = 1 / (1 + mpmath.exp(e0))
            mean, sd = k * p_low, mpmath.sqrt(k * p_low * (1 - p_low))
            l0 = max(0, int(mpmath.floor(mean - 40 * sd)))
            w = mpmath.binomial(k, l0) * mpmath.exp((k - l0) * e0) * p_low**k
            decay = mpmath.exp(-e0)
            for j in range(l0, k + 1):  # j = number of "low" outcomes (the l of eq. 6)
                gap = (k - 2 * j) * e0 - ee  # L_j − ε
                if gap <= 0:
                    break
                total += w * -mpmath.expm1(-gap)
                w = w * (k - j) / (j + 1) * decay
        free = (1 - mpmath.mpf(delta0)) ** k
        return 1 - free * (1 - total)


def mp_kov_grid_delta_i(*, k: int, eps0: float, i: int, dps: int = 40) -> mpmath.mpf:
    """KOV eq. (6) as printed: δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε0} − e^{(k−2i+l)ε0}) / (1+e^{ε0})^k."""
    with mpmath.workdps(dps):
        e0 = mpmath.mpf(eps0)
        s = mpmath.fsum(mpmath.binomial(k, j) * (mpmath.exp((k - j) * e0) - mpmath.exp((k - 2 * i + j) * e0))
                        for j in range(i))  # j is the l of eq. (6)
        return s / (1 + mpmath.exp(e0)) ** k


def mp_kov_grid(*, k: int, eps0: float, delta0: float, dps: int = 40) -> list[tuple[float, float]]:
    """Thm 3.3 grid ((k − 2i)ε0, 1 − (1−δ0)^k (1 − δ_i)) for i = 0..⌊k/2⌋."""
    out = []
    with mpmath.workdps(dps):
        free = (1 - mpmath.mpf(delta0)) ** k
        for i in range(k // 2 + 1):
            d = 1 - free * (1 - mp_kov_grid_delta_i(k=k, eps0=eps0, i=i, dps=dps))
            out.append(((k - 2 * i) * eps0, float(d)))
    return out


# ---------------------------------------------------------------------------
# Closed forms typed in again from the theorems (homogeneous and heterogeneous)
# ---------------------------------------------------------------------------


def basic(mechs: Sequence[tuple[float, float, int]]) -> tuple[float, float]:
    """Roth Thm 1 / KOV Thm 3.1: (Σε, Σδ). ``mechs`` = [(ε, δ, count), …]."""
    return (math.fsum(n * e for e, _, n in mechs), math.fsum(n * d for _, d, n in mechs))


def advanced_epsilon(mechs: Sequence[tuple[float, float, int]], delta: float) -> float | None:
    """Roth Thm 6 / KOV Thm 3.2 with δ' = δ − Σδ_i: √(2 Σε² ln(1/δ')) + Σε(e^ε − 1)."""
    slack = delta - math.fsum(n * d for _, d, n in mechs)
    if slack <= 0:
        return None
    slack = min(slack, 1.0)
    var = math.fsum(n * e * e for e, _, n in mechs)
    drift = math.fsum(n * e * (math.exp(e) - 1) for e, _, n in mechs)
    return math.sqrt(2 * var * math.log(1 / slack)) + drift


def kov_epsilon(mechs: Sequence[tuple[float, float, int]], delta: float) -> float | None:
    """KOV Thm 3.4 (one level) / 3.5: δ~ from δ = 1 − (1 − δ~) Π(1 − δ_l), then eq. (7)/(8)."""
    with mpmath.workdps(40):
        free = mpmath.fprod((1 - mpmath.mpf(d)) ** n for _, d, n in mechs)
        slack = 1 - (1 - mpmath.mpf(delta)) / free
        if slack < 0:
            return None
        total = mpmath.fsum(n * mpmath.mpf(e) for e, _, n in mechs)
        if slack == 0:
            return float(total)
        var = mpmath.fsum(n * mpmath.mpf(e) ** 2 for e, _, n in mechs)
        t = mpmath.fsum(n * (mpmath.exp(e) - 1) * e / (mpmath.exp(e) + 1) for e, _, n in mechs)
        second = t + mpmath.sqrt(2 * var * mpmath.log(mpmath.e + mpmath.sqrt(var) / slack))
        third = t + mpmath.sqrt(2 * var * mpmath.log(1 / slack))
        return float(min(total, second, third))


# ---------------------------------------------------------------------------
# zCDP conversion at 50 digits (Steinke Prop. 14)
# ---------------------------------------------------------------------------


def _ternary_min(f, lo: mpmath.mpf, hi: mpmath.mpf, steps: int = 300) -> mpmath.mpf:
    """min of a unimodal ``f`` on [lo, hi] by ternary search (no derivative, no root finder)."""
    for _ in range(steps):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        lo, hi = (lo, b) if f(a) < f(b) else (a, hi)
    return f((lo + hi) / 2)


def mp_zcdp_epsilon(rho: float, delta_prime: float) -> mpmath.mpf:
    """Steinke Prop. 14 at 50 digits: inf over α > 1 of αρ + ln(1 − 1/α) + (ln(1/δ′) − ln α)/(α − 1),
    a convex function of α, searched over t = ln(α − 1) ∈ [−30, 30]."""
    with mpmath.workdps(50):
        r, big_l = mpmath.mpf(rho), -mpmath.log(mpmath.mpf(delta_prime))

        def f(t: mpmath.mpf) -> mpmath.mpf:
            a = 1 + mpmath.exp(t)
            return a * r + mpmath.log(1 - 1 / a) + (big_l - mpmath.log(a)) / (a - 1)
        return _ternary_min(f, mpmath.mpf(-30), mpmath.mpf(30))


def mp_zcdp_delta(rho: float, eps: float) -> mpmath.mpf:
    """Steinke Prop. 14 at 50 digits: inf over α > 1 of e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1)."""
    with mpmath.workdps(50):
        r, e = mpmath.mpf(rho), mpmath.mpf(eps)

        def log_delta(t: mpmath.mpf) -> mpmath.mpf:
            a = 1 + mpmath.exp(t)
            return (a - 1) * (a * r - e) + a * mpmath.log(1 - 1 / a) - mpmath.log(a - 1)
        return min(mpmath.mpf(1), mpmath.exp(_ternary_min(log_delta, mpmath.mpf(-30), mpmath.mpf(30))))


def assert_sound_and_tight(value: float, oracle: mpmath.mpf, rel: float = 1e-9) -> None:
    """An upper bound: never below the 50-digit infimum, and within ``rel`` of it."""
    assert value >= oracle * (1 - 1e-15), (value, oracle)
    assert value <= oracle * (1 + rel), (value, oracle)
