"""Brute-force references for the GCE tests: every outcome, every membership vector.

Independent of ``dpviz.gce``: the mixture Σ_b π(b) ⊗_i M_{b_i} is built outcome by
outcome in linear space (numpy, ≤ 4^5 outcomes × 2^5 vectors), and hockey-stick
divergences are plain sums.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

Prior = dict[tuple[int, ...], float]


def canonical(eps0: float, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """(P~, Q~) of KOV eq. 16 on outcomes (A, B, C, D), written out by hand."""
    e = math.exp(eps0)
    p = np.array([delta0, (1 - delta0) * e / (1 + e), (1 - delta0) / (1 + e), 0.0])
    q = np.array([0.0, (1 - delta0) / (1 + e), (1 - delta0) * e / (1 + e), delta0])
    return p, q


def vectors(k: int) -> list[tuple[int, ...]]:
    return [tuple(v) for v in itertools.product((0, 1), repeat=k)]


def product(b: Sequence[int], p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Distribution over all n^k outcomes of ⊗_i (b_i ? p : q) (Kronecker products)."""
    out = np.ones(1)
    for bit in b:
        out = np.kron(out, p if bit else q)
    return out


def mixture(prior: Prior, p: np.ndarray, q: np.ndarray) -> np.ndarray:
    return sum(w * product(b, p, q) for b, w in prior.items())


def hockey(p: np.ndarray, q: np.ndarray, eps: float) -> float:
    """Σ_x max(0, p(x) − e^ε q(x))."""
    return float(np.maximum(p - math.exp(eps) * q, 0.0).sum())


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


def bisect_epsilon(fn, delta: float, hi: float = 200.0) -> float:
    """Smallest ε ≥ 0 with fn(ε) ≤ δ for a non-increasing fn (to ~1e-12)."""
    if fn(0.0) <= delta:
        return 0.0
    lo = 0.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if fn(mid) <= delta:
            hi = mid
        else:
            lo = mid
    return hi
