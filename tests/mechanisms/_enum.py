"""Independent brute-force references for the enumeration tests (plain enumeration, linear space).

A finite pair (P, Q) is a list of outcomes (p, q); its k-fold product is enumerated outcome
by outcome and the hockey-stick divergence Σ max(0, P − e^ε Q) summed directly. Nothing
here imports dpviz's numerics.
"""

from __future__ import annotations

import math

import numpy as np


def canonical(eps0: float, delta0: float) -> list[tuple[float, float]]:
    """KOV eq. 16 written out: outcomes A, B, C, D as (P~, Q~) masses."""
    e = math.exp(eps0)
    return [(delta0, 0.0), ((1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e)),
            ((1 - delta0) / (1 + e), (1 - delta0) * e / (1 + e)), (0.0, delta0)]


def law_outcomes(law) -> list[tuple[float, float]]:
    """(p, q) outcomes of a finite LossLaw, including its ±∞ masses."""
    out = [(float(p), float(q)) for p, q in zip(law.p, law.q, strict=True)]
    return [*out, (law.p_inf, 0.0), (0.0, law.q_neg_inf)]


def product(factors: list[list[tuple[float, float]]]) -> tuple[np.ndarray, np.ndarray]:
    """P and Q masses of every outcome of the product of the given pairs."""
    p, q = np.ones(1), np.ones(1)
    for f in factors:
        fp = np.array([a for a, _ in f])
        fq = np.array([b for _, b in f])
        p, q = np.outer(p, fp).ravel(), np.outer(q, fq).ravel()
    return p, q


def hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


def smallest_eps(p: np.ndarray, q: np.ndarray, delta: float, hi: float = 300.0) -> float | None:
    """Smallest ε ≥ 0 with hockey(ε) ≤ δ by bisection (200 halvings: exact to ~1e-13 of hi)."""
    if hockey(p, q, 0.0) <= delta:
        return 0.0
    if hockey(p, q, hi) > delta:
        return None
    lo = 0.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if hockey(p, q, mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi
