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
the recursion (``class_loops.layer_walk``, interpreted or compiled) costs ~k³/6 cells, ~(k' + 1)k²/2
for U{|b| ≥ k'} (its columns r ≥ k' hold one float per row), the closed forms for 0⃗ and U(B∖{0⃗})
cost nothing, and for U{|b| ≥ k'} and U{|b| < k'} at δ0 = 0 the sums over j of all classes follow
from two positive recurrences in n_B (``dpviz.gce.threshold``, docs/MATH.md §5.6): O(k) in all.

Which classes are needed. δ0 = 0: only n_A = n_D = 0 (k + 1 classes). δ0 > 0 with
p0 = 0⃗: only n_A = 0 (Q~ has no A), the prior's mass on n_A > 0 goes to the
infinite-loss atom in closed form: Σ_j w_j (1 − (1 − δ0)^j). Otherwise all
(n_A, n_B, n_C) (~k³/6 classes). Explicit priors (k ≤ 16): ``dpviz.gce.explicit_classes``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

from dpviz.gce import class_loops
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
    if delta0 == 0:  # the classes (n_B, k − n_B): layer k of the recursion, r = 0
        logs = [_log_g_top(p, eps0) for p in (p0, p1)]
        return _assembled(k, eps0, delta0, (k, k), False, logs)
    lo, hi, dropped = delta_window(k, delta0, WINDOW_TAIL)
    levels = (k - hi, k - lo)  # m = n_B + n_C = k − (n_A + n_D)
    if p0.is_zero or p1.is_zero:
        logs = [_log_g_levels(p, eps0, levels, all_r=False) for p in (p0, p1)]
        only = [_mass_with_a(p, delta0) for p in (p0, p1)]
        table = _assembled(k, eps0, delta0, levels, False, logs)
        # Each side's A-mass is "only" that side's if the other side is 0⃗ (no A under Q~).
        return ClassTable(table.log_m0, table.log_m1, only0=only[0] if p1.is_zero else 0.0,
                          only1=only[1] if p0.is_zero else 0.0, dropped=dropped)
    logs = [_log_g_levels(p, eps0, levels, all_r=True) for p in (p0, p1)]
    table = _assembled(k, eps0, delta0, levels, True, logs)
    return ClassTable(table.log_m0, table.log_m1, dropped=dropped)


def _pairs(k: int, levels: tuple[int, int] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """All (n_B, n_C) with n_B + n_C = m for m in ``levels`` (default 0..k), ordered by m, then n_B."""
    m_lo, m_hi = levels if levels is not None else (0, k)
    ms = np.arange(m_lo, m_hi + 1)
    m = np.repeat(ms, ms + 1)
    starts = np.cumsum(ms + 1) - (ms + 1)  # each level's first index: n_B counts from 0 there
    n_b = np.arange(m.size) - np.repeat(starts, ms + 1)
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


def _log_g_levels(p: Exchangeable, eps0: float, levels: tuple[int, int], *,
                  all_r: bool) -> NDArray[np.float64]:
    """ln g(n_B, n_C, n_A) of the classes of layers m = n_B + n_C in ``levels``, in the tables' order
    (m, then n_B, then r = n_A; r = 0 only unless ``all_r``): the closed forms for 0⃗ and U(B∖{0⃗}),
    else the layer recursion (``class_loops.layer_walk``, on the band of columns that can be positive)."""
    k = p.k
    if p.is_zero or p.family == "uniform-nonzero":
        if all_r:
            n_a, n_b, n_c = _triples(k, levels)
        else:
            n_b, n_c = _pairs(k, levels)
            n_a = np.zeros_like(n_b)
        return _closed_form(p, eps0, n_b, n_c, n_a)
    return class_loops.log_g_layers(p.log_v, k, eps0, levels, all_r=all_r)


def _log_g_top(p: Exchangeable, eps0: float) -> NDArray[np.float64]:
    """ln g(n_B, k − n_B, 0) for n_B = 0 … k (the classes at δ0 = 0): closed forms, the threshold
    walks (``_threshold_top``), or the recursion's layer k."""
    k = p.k
    if p.is_zero or p.family == "uniform-nonzero":
        n_b = np.arange(k + 1, dtype=float)
        return _closed_form(p, eps0, n_b, k - n_b, np.zeros_like(n_b))
    if p.family in ("at-least", "below"):
        return _threshold_top(p, eps0)
    return class_loops.log_g_layers(p.log_v, k, eps0, (k, k), all_r=False)


def _closed_form(p: Exchangeable, eps0: float, n_b: NDArray[np.float64], n_c: NDArray[np.float64],
                 n_a: NDArray[np.float64]) -> NDArray[np.float64]:
    """ln g for 0⃗ (v_0 = 1 only: g = [r = 0]) and U(B∖{0⃗}) (v_j = 1/(2^k − 1) for j ≥ 1)."""
    if p.is_zero:
        return np.where(n_a == 0, 0.0, -np.inf)
    a = n_b * float(softplus(eps0)) + n_c * float(softplus(-eps0))
    log_norm = log_pow2_minus_1(p.k)
    with np.errstate(divide="ignore"):
        tail = np.where(n_a == 0, a + log1mexp(-a), a)  # subtract h_0 = 1 when r = 0
    return tail - log_norm


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


def _assembled(k: int, eps0: float, delta0: float, levels: tuple[int, int], all_r: bool,
               log_g: list[NDArray[np.float64]]) -> ClassTable:
    """Class masses: multinomial × per-outcome prefactor × g (module docstring), added to each side's
    ln g in place (``class_loops.assemble_walk``); ln n! looked up from one table of ``gammaln``."""
    log_fact = gammaln(np.arange(k + 1) + 1.0)
    per_bc = math.log1p(-delta0) - float(softplus(eps0))
    log_delta0 = math.log(delta0) if delta0 > 0 else -math.inf
    m0, m1 = class_loops.assemble_in_place(k, levels, all_r, float(gammaln(k + 1.0)), log_fact, per_bc,
                                           eps0, log_delta0, log_g)
    return ClassTable(log_m0=m0, log_m1=m1)
