"""Outcome classes of the canonical pair mixed over an explicit prior (k ≤ 16; docs/MATH.md §5.5).

Coordinates are grouped by their column pattern across the joint support of the two priors;
coordinates in a group are exchangeable, so a class is one count vector (n_A, n_B, n_C, n_D) per
group (KOV eq. 16 for the canonical pair's masses).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

from dpviz.gce.classes import ClassTable
from dpviz.gce.hypotheses import Explicit
from dpviz.numerics import logsumexp_rows, softplus


def patterns(p0: Explicit, p1: Explicit) -> dict[tuple[bool, ...], int]:
    """Coordinates grouped by their column across the joint support: pattern → group size."""
    vectors = sorted({b for b, _ in p0.support} | {b for b, _ in p1.support})
    bits = np.array(vectors, dtype=bool)  # [support, coordinate]
    patterns: dict[tuple[bool, ...], int] = {}
    for i in range(p0.k):
        key = tuple(bits[:, i])
        patterns[key] = patterns.get(key, 0) + 1
    return patterns


def group_count(n: int, delta0: float) -> float:
    """Number of (n_A, n_B, n_C, n_D) tuples ``_group_tuples`` lists for a group of n."""
    return n + 1.0 if delta0 == 0 else (n + 1.0) * (n + 2.0) * (n + 3.0) / 6.0


def explicit_table(p0: Explicit, p1: Explicit, eps0: float, delta0: float) -> ClassTable:
    vectors = sorted({b for b, _ in p0.support} | {b for b, _ in p1.support})
    index = {b: i for i, b in enumerate(vectors)}
    log_pi = np.full((2, len(vectors)), -np.inf)
    for row, p in enumerate((p0, p1)):
        for b, w in p.support:
            log_pi[row, index[b]] = math.log(w)
    groups = patterns(p0, p1)
    log_p = _canonical_logs(eps0, delta0)
    ll = np.zeros((1, len(vectors)))
    log_mult = np.zeros(1)
    for key, n in groups.items():
        counts = _group_tuples(n, delta0)  # [tuple, 4] counts of A, B, C, D
        with np.errstate(invalid="ignore"):
            lp = np.where(counts > 0, counts * log_p[0], 0.0).sum(axis=1)  # all from P~
            lq = np.where(counts > 0, counts * log_p[1], 0.0).sum(axis=1)  # all from Q~
        mult = gammaln(n + 1.0) - gammaln(counts + 1.0).sum(axis=1)
        group = np.where(np.array(key)[np.newaxis, :], lp[:, np.newaxis], lq[:, np.newaxis])
        ll = (ll[:, np.newaxis, :] + group[np.newaxis, :, :]).reshape(-1, len(vectors))
        log_mult = (log_mult[:, np.newaxis] + mult[np.newaxis, :]).ravel()
    log_m = [log_mult + logsumexp_rows(ll + log_pi[row]) for row in (0, 1)]
    return ClassTable(log_m0=log_m[0], log_m1=log_m[1])


def _canonical_logs(eps0: float, delta0: float) -> NDArray[np.float64]:
    """ln P~ and ln Q~ over (A, B, C, D) (KOV eq. 16); −inf for zero masses."""
    free = math.log1p(-delta0) - float(softplus(eps0))
    log_d = math.log(delta0) if delta0 > 0 else -math.inf
    return np.array([[log_d, free + eps0, free, -math.inf],
                     [-math.inf, free, free + eps0, log_d]])


def _group_tuples(n: int, delta0: float) -> NDArray[np.float64]:
    """All (n_A, n_B, n_C, n_D) summing to n (n_A = n_D = 0 when δ0 = 0)."""
    if delta0 == 0:
        nb = np.arange(n + 1)
        return np.stack([0 * nb, nb, n - nb, 0 * nb], axis=1).astype(float)
    rows = [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
            for c in range(n + 1 - a - b)]
    return np.array(rows, dtype=float)

