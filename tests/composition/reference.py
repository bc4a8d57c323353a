"""Independent reference implementations for the composition tests.

Nothing here imports ``dpviz.composition``: expected values come from brute-force
enumeration (numpy), exact sums in mpmath, and the theorems' closed forms typed in
again from the papers (KOV = Kairouz-Oh-Viswanath, seed 004; Roth lecture 4, seed 002).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import mpmath
import numpy as np

# ---------------------------------------------------------------------------
# Brute force over all 4^k outcomes of the product of canonical pairs
# ---------------------------------------------------------------------------


def canonical_pair(eps0: float, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """KOV eq. 16: outcomes (A, B, C, D); Q~ is P~ reversed."""
    e = math.exp(eps0)
    p = np.array([delta0, (1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e), 0.0])
    return p, p[::-1].copy()


def product_pair(mechanisms: Sequence[tuple[float, float]]) -> tuple[np.ndarray, np.ndarray]:
    """P and Q of the product over ``mechanisms`` = [(ε_i, δ_i), …], by explicit
    enumeration of every outcome tuple (itertools.product, not a Kronecker shortcut)."""
    pairs = [canonical_pair(e, d) for e, d in mechanisms]
    n = len(pairs)
    p_out = np.empty(4**n)
    q_out = np.empty(4**n)
    for idx, outcome in enumerate(itertools.product(range(4), repeat=n)):
        p_out[idx] = math.prod(pairs[i][0][o] for i, o in enumerate(outcome))
        q_out[idx] = math.prod(pairs[i][1][o] for i, o in enumerate(outcome))
    return p_out, q_out


def hockey_stick(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """max over both directions of Σ max(0, P − e^ε Q)."""
    w = math.exp(eps)
    forward = math.fsum(np.maximum(0.0, p - w * q))
    backward = math.fsum(np.maximum(0.0, q - w * p))
    return max(forward, backward)


def brute_epsilon(p: np.ndarray, q: np.ndarray, delta: float, *, hi: float) -> float | None:
    """Smallest ε ≥ 0 with hockey_stick ≤ delta, by bisection (None if none ≤ hi)."""
    if hockey_stick(p, q, hi) > delta:
        return None
    if hockey_stick(p, q, 0.0) <= delta:
        return 0.0
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if hockey_stick(p, q, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


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
