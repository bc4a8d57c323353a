"""Outcome classes of the canonical pair mixed over an exchangeable prior (docs/MATH.md §5.5).

Every (ε0, δ0)-DP mechanism is a post-processing of the canonical pair (P~, Q~) on outcomes
{A, B, C, D} (KOV eq. 16); ``dpviz.gce.exact`` composes it over k coordinates and mixes over the
prior. This module lists the outcome classes of that mixture and their masses.

Count classes. For an outcome with counts (n_A, n_B, n_C, n_D), b must contain the
A positions and avoid the D positions, and with s (t) ones on B (C) positions the
product is ``δ0^{n_A+n_D} ((1−δ0)/(1+e^{ε0}))^{n_B+n_C} e^{ε0 n_C} e^{ε0(s−t)}``. For an
exchangeable π with v_j = π(b) at |b| = j this sums to that prefactor times
``g(n_B, n_C, n_A) = Σ_j v_{j+n_A} [x^j] (1 + e^{ε0}x)^{n_B} (1 + e^{−ε0}x)^{n_C}``, and
g obeys ``g(n_B+1, n_C, r) = g(n_B, n_C, r) + e^{ε0} g(n_B, n_C, r+1)`` (likewise for
n_C with e^{−ε0}), starting from g(0, 0, r) = v_r. Everything is in log space;
the recursion costs ~k³/6 cells, the closed forms for 0⃗ and U(B∖{0⃗}) cost nothing, and
for U{|b| ≥ k'} and U{|b| < k'} at δ0 = 0 the sums over j of all classes follow from two positive
recurrences in n_B (``dpviz.gce.threshold``, docs/MATH.md §5.6): O(k) in all.

Which classes are needed. δ0 = 0: only n_A = n_D = 0 (k + 1 classes). δ0 > 0 with
p0 = 0⃗: only n_A = 0 (Q~ has no A), the prior's mass on n_A > 0 goes to the
infinite-loss atom in closed form: Σ_j w_j (1 − (1 − δ0)^j). Otherwise all
(n_A, n_B, n_C) (~k³/6 classes). Explicit priors (k ≤ 16): ``dpviz.gce.explicit_classes``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

from dpviz.gce.hypotheses import Exchangeable
from dpviz.gce.threshold import threshold_sums
from dpviz.numerics import log1mexp, log_pow2_minus_1, logsumexp, softplus


@dataclass(frozen=True, eq=False)
class ClassTable:
    """Outcome classes of the pair: ln Mix0(class), ln Mix1(class) (−inf where zero),
    plus closed-form masses ``only0`` / ``only1`` on outcomes the other side cannot produce
    that are not listed as classes."""

    log_m0: NDArray[np.float64]
    log_m1: NDArray[np.float64]
    only0: float = 0.0
    only1: float = 0.0
    dropped: float = 0.0
    """A bound on each side's mass in classes not listed (outside the window of δ-outcomes,
    ``delta_window``): counted at infinite loss in both directions, so every value is an upper
    bound, and left out of the ``*_lower`` curves, which bound the truth from below."""



WINDOW_TAIL = 1e-300
"""Mass of δ-outcomes counts left out of the exact sums (``delta_window``): below every δ a double
can state, so the values are exact to the last digit shown, and still a certified bound."""


@lru_cache(maxsize=64)
def delta_window(k: int, delta0: float, tail: float = WINDOW_TAIL) -> tuple[int, int, float]:
    """(r_lo, r_hi, dropped): the number r = n_A + n_D of δ-outcomes is Binomial(k, δ0) under every
    prior (each coordinate is A or D with probability δ0, whatever b), so only classes with
    r_lo ≤ r ≤ r_hi are listed (``tail``: the mass allowed outside); ``dropped`` bounds P(r outside)
    from above (each tail ≤ its first term / (1 − the ratio of consecutive terms there), a geometric
    bound, inflated by 1e-12 for the rounding of ``lgamma``). (0, k, 0) when δ0 = 0 or nothing is
    left out."""
    if delta0 == 0 or k == 0:
        return 0, k, 0.0
    ln_p, ln_q = math.log(delta0), math.log1p(-delta0)
    ln_k1 = math.lgamma(k + 1.0)

    def log_pmf(r: int) -> float:
        return ln_k1 - math.lgamma(r + 1.0) - math.lgamma(k - r + 1.0) + r * ln_p + (k - r) * ln_q

    target = math.log(tail / 2.0)
    mode = min(k, math.floor((k + 1) * delta0))
    hi, upper = k, 0.0
    for r in range(mode + 1, k + 1):  # P(X ≥ r) ≤ pmf(r) / (1 − ρ), ρ = pmf(r + 1)/pmf(r) ≤ ratio at r
        ratio = (k - r) / (r + 1.0) * delta0 / (1.0 - delta0)
        if ratio < 1.0:
            bound = log_pmf(r) - math.log1p(-ratio)
            if bound <= target:
                hi, upper = r - 1, math.exp(bound)
                break
    lo, lower = 0, 0.0
    for r in range(mode - 1, -1, -1):  # P(X ≤ r) ≤ pmf(r) / (1 − ρ'), ρ' = pmf(r − 1)/pmf(r)
        ratio = r / (k - r + 1.0) * (1.0 - delta0) / delta0
        if ratio < 1.0:
            bound = log_pmf(r) - math.log1p(-ratio)
            if bound <= target:
                lo, lower = r + 1, math.exp(bound)
                break
    return lo, hi, (upper + lower) * (1.0 + 1e-12)


def class_count(k: int, delta0: float, *, anchored: bool) -> float:
    """Classes listed: δ0 = 0, n_B only; anchored (one side 0⃗), (n_B, n_C) with n_D = k − n_B − n_C
    in the window; otherwise (n_A, n_B, n_C) with n_A + n_D in the window."""
    if delta0 == 0:
        return k + 1.0
    lo, hi, _ = delta_window(k, delta0, WINDOW_TAIL)
    r = np.arange(lo, hi + 1, dtype=float)
    if anchored:
        return float(np.sum(k - r + 1.0))
    return float(np.sum((r + 1.0) * (k - r + 1.0)))



def exchangeable_table(p0: Exchangeable, p1: Exchangeable, eps0: float, delta0: float) -> ClassTable:
    k = p0.k
    if delta0 == 0:
        n_b = np.arange(k + 1, dtype=float)
        n_c = k - n_b
        n_a = np.zeros_like(n_b)
        logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="top") for p in (p0, p1)]
        return assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
    lo, hi, dropped = delta_window(k, delta0, WINDOW_TAIL)
    levels = (k - hi, k - lo)  # m = n_B + n_C = k − (n_A + n_D)
    if p0.is_zero or p1.is_zero:
        n_b, n_c = _pairs(k, levels)
        n_a = np.zeros_like(n_b)
        logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="r0", levels=levels) for p in (p0, p1)]
        only = [_mass_with_a(p, delta0) for p in (p0, p1)]
        table = assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
        # Each side's A-mass is "only" that side's if the other side is 0⃗ (no A under Q~).
        return ClassTable(table.log_m0, table.log_m1, only0=only[0] if p1.is_zero else 0.0,
                          only1=only[1] if p0.is_zero else 0.0, dropped=dropped)
    n_a, n_b, n_c = _triples(k, levels)
    logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="all", levels=levels) for p in (p0, p1)]
    table = assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
    return ClassTable(table.log_m0, table.log_m1, dropped=dropped)


def _pairs(k: int, levels: tuple[int, int] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """All (n_B, n_C) with n_B + n_C = m for m in ``levels`` (default 0..k), ordered by m, then n_B."""
    m_lo, m_hi = levels if levels is not None else (0, k)
    ms = np.arange(m_lo, m_hi + 1)
    m = np.repeat(ms, ms + 1)
    n_b = np.concatenate([np.arange(mm + 1) for mm in ms])
    return n_b.astype(float), (m - n_b).astype(float)


def _triples(k: int, levels: tuple[int, int] | None = None
             ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """All (n_A, n_B, n_C) with sum ≤ k and m = n_B + n_C in ``levels`` (default 0..k), in the
    order the recursion emits them (level m, then n_B, then r = n_A)."""
    m_lo, m_hi = levels if levels is not None else (0, k)
    parts_a, parts_b = [], []
    for m in range(m_lo, m_hi + 1):
        nb = np.repeat(np.arange(m + 1), k - m + 1)
        na = np.tile(np.arange(k - m + 1), m + 1)
        parts_b.append(nb)
        parts_a.append(na)
    n_b = np.concatenate(parts_b).astype(float)
    n_a = np.concatenate(parts_a).astype(float)
    level = np.concatenate([np.full((mm + 1) * (k - mm + 1), mm)
                            for mm in range(m_lo, m_hi + 1)]).astype(float)
    return n_a, n_b, level - n_b


Band = tuple[int, NDArray[np.float64]]
"""One layer of the recursion as (a, ln g[n_B, a:a + w]): the columns r that can be positive."""


def _recursion(p: Exchangeable, eps0: float) -> Iterator[Band]:
    """Yield ln g(n_B, m − n_B, r) for m = 0..k, each layer as its band (``Band``; ``_columns``
    reads any columns of it).

    g(·, ·, r) at layer m sums v_r … v_{r+m} only, so where none of them is positive (outside the
    band r ∈ [lo − m, hi], lo and hi the first and last |b| of positive weight) it is 0: those
    columns are −inf and not computed, which is what the full recursion gives them
    (logaddexp(−inf, −inf) = −inf, and logaddexp(x, −inf) = x at the band's edge, the same float).
    A prior over a few sizes |b| (a typed ``1:0.5, 2:0.3, 3:0.2``, or U{|b| < k'}) costs ~k² cells
    instead of ~k³/6."""
    k = p.k
    finite = np.flatnonzero(np.isfinite(p.log_v))
    lo, hi = (int(finite[0]), int(finite[-1])) if finite.size else (k + 1, -1)
    band: Band = (lo, p.log_v[np.newaxis, lo:hi + 1]) if finite.size else (0, np.empty((1, 0)))
    yield band
    for m in range(1, k + 1):
        a, b = max(0, lo - m), max(max(0, lo - m), min(hi, k - m) + 1)  # the band of layer m: a..b − 1
        g = _columns(band, a, b + 1)  # columns a..b of layer m − 1 (−inf outside its band)
        new = np.empty((m + 1, b - a))
        new[1:] = np.logaddexp(g[:, :-1], eps0 + g[:, 1:])  # add a B outcome
        new[0] = np.logaddexp(g[0, :-1], -eps0 + g[0, 1:])  # n_B = 0: add a C outcome
        band = (a, new)
        yield band


def _columns(band: Band, c0: int, c1: int) -> NDArray[np.float64]:
    """Columns c0..c1 − 1 of a layer given by its band (−inf outside it); the band's floats copied."""
    a, g = band
    out = np.full((g.shape[0], c1 - c0), -np.inf)
    lo, hi = max(c0, a), min(c1, a + g.shape[1])
    if lo < hi:
        out[:, lo - c0:hi - c0] = g[:, lo - a:hi - a]
    return out


def _log_g(p: Exchangeable, eps0: float, n_b: NDArray[np.float64], n_c: NDArray[np.float64],
           n_a: NDArray[np.float64], *, mode: str, levels: tuple[int, int] | None = None
           ) -> NDArray[np.float64]:
    """ln g(n_B, n_C, n_A) for the given classes (see module docstring); the recursion keeps
    only the layers m = n_B + n_C in ``levels`` (default all), the classes listed."""
    k = p.k
    if p.is_zero:  # v_0 = 1 only: g = [r = 0]
        return np.where(n_a == 0, 0.0, -np.inf)
    if p.family == "uniform-nonzero":  # v_j = 1/(2^k − 1) for j ≥ 1
        a = n_b * float(softplus(eps0)) + n_c * float(softplus(-eps0))
        log_norm = log_pow2_minus_1(k)
        with np.errstate(divide="ignore"):
            tail = np.where(n_a == 0, a + log1mexp(-a), a)  # subtract h_0 = 1 when r = 0
        return tail - log_norm
    if mode == "top" and p.family in ("at-least", "below"):
        return _threshold_top(p, eps0)
    if mode == "top":
        *_, last = _recursion(p, eps0)
        return _columns(last, 0, 1)[:, 0]
    m_lo, m_hi = levels if levels is not None else (0, k)
    parts = []
    for m, band in enumerate(_recursion(p, eps0)):
        if m_lo <= m <= m_hi:  # a copy (``_columns``): a view keeps the layer alive
            parts.append(_columns(band, 0, 1)[:, 0] if mode == "r0" else _columns(band, 0, k - m + 1).ravel())
    return np.concatenate(parts)


def _threshold_top(p: Exchangeable, eps0: float) -> NDArray[np.float64]:
    """ln g(n_B, k − n_B, 0) for v_j = v on j ≥ k' (at-least) or j < k' (below):
    v Σ_s a_s Σ_{t: s+t in range} c_t with a_s = C(n_B, s)e^{sε0}, c_t = C(n_C, t)e^{−tε0}."""
    at_least, below = threshold_sums(p.k, p.threshold, eps0)  # O(k): two positive recurrences (§5.6)
    if p.family == "at-least":
        return at_least + float(p.log_v[p.threshold])
    return below + float(p.log_v[0])


def _mass_with_a(p: Exchangeable, delta0: float) -> float:
    """Mix_π(some A outcome) = Σ_j w_j (1 − (1 − δ0)^j)."""
    j = p.levels
    with np.errstate(divide="ignore"):
        terms = p.log_w[j] + np.log(-np.expm1(j * math.log1p(-delta0)))
    return float(np.exp(logsumexp(terms))) if j.size else 0.0


def assemble(k: int, eps0: float, delta0: float, n_a: NDArray[np.float64], n_b: NDArray[np.float64],
              n_c: NDArray[np.float64], log_g: list[NDArray[np.float64]]) -> ClassTable:
    """Class masses: multinomial × per-outcome prefactor × g (module docstring)."""
    n_d = k - n_a - n_b - n_c
    log_fact = gammaln(np.arange(k + 1) + 1.0)  # ln n! looked up: the floats gammaln gives each class
    log_mult = (gammaln(k + 1.0) - log_fact[n_a.astype(np.intp)] - log_fact[n_b.astype(np.intp)]
                - log_fact[n_c.astype(np.intp)] - log_fact[n_d.astype(np.intp)])
    base = log_mult + (n_b + n_c) * (math.log1p(-delta0) - float(softplus(eps0))) + n_c * eps0
    if delta0 > 0:
        base = base + (n_a + n_d) * math.log(delta0)
    return ClassTable(log_m0=base + log_g[0], log_m1=base + log_g[1])

