"""Composition through zero-concentrated DP (Steinke, seed 001, §4.1–4.3).

- Pure ε_l-DP is ε_l²/2-zCDP (Prop. 16); zCDP composes by adding ρ (Thm 13, adaptively: Prop. 19),
  so levels (ε_l, 0, count_l) give ρ = Σ count_l ε_l²/2 (Thm 18).
- With δ_l > 0 (Thm 22) the same ρ holds for the pair conditioned on no mechanism hitting its δ
  event, and the composition is (ε, δ′ + Σ δ_l)-DP where (ε, δ′) is the conversion of ρ.
- Conversion (Prop. 14, its tighter form): ρ-zCDP is (ε, δ′)-DP with
  δ′ = inf_{α>1} e^{(α−1)(αρ−ε)} (1 − 1/α)^α / (α − 1); the closed form of Remark 15,
  δ′ = e^{−(ε−ρ)²/(4ρ)} (ε ≥ ρ), i.e. ε = ρ + 2√(ρ ln(1/δ′)), is never smaller. Both optimisations
  over α are one-dimensional with a single root (docs/MATH.md §11); every α gives a valid bound, so
  the α found only decides how tight the bound is, and each value is rounded up.

The raw theorem value is reported (no min with basic composition), as for advanced composition.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike

from dpviz.composition.levels import Levels, sum_delta, sum_epsilon_sq
from dpviz.guarantee import DeltaCurve, Guarantee, Kind
from dpviz.numerics import bisect_float

SOURCE_PURE = "zCDP (Steinke Prop. 16, Thm 13/18"
SOURCE_APPROX = "zCDP (Steinke Prop. 16, Thm 22"
PROP14 = "Prop. 14 conversion"
REMARK15 = "Remark 15 conversion"

_ULP = 2.0**-52
_ROUND = 16.0 * _ULP
"""Relative rounding allowance of a few-term float sum: added (scaled by the terms' sizes) to every
ε and to every ln δ, so that neither is below the exact value of the formula at the chosen α."""


def rho(levels: Levels) -> float:
    """ρ = Σ count_l ε_l²/2 (Prop. 16 per mechanism, Thm 13 for the sum), rounded up."""
    r = 0.5 * sum_epsilon_sq(levels)
    return math.nextafter(r, math.inf) if r > 0 else 0.0


def _source(levels: Levels, conversion: str) -> str:
    base = SOURCE_APPROX if sum_delta(levels) > 0 else SOURCE_PURE
    return f"{base}; {conversion})"


# ------------------------------------------------------------------ conversions of ρ-zCDP
def _exp_up(x: float) -> float:
    """min(1, e^x) rounded up: one ulp above ``math.exp`` (which is within an ulp), so a δ far
    below the smallest double is 5e-324, never 0."""
    return 1.0 if x >= 0 else min(1.0, math.nextafter(math.exp(x), math.inf))


def log_delta_at(r: float, epsilon: float, alpha: float) -> float:
    """ln of Prop. 14's δ at order α > 1, (α−1)(αρ−ε) + (α−1)ln(α−1) − α ln α, written as
    (α−1)(αρ−ε) − ln α − (α−1) ln(1 + 1/(α−1)) (no cancellation in the last two), rounded up by
    an allowance on the sizes of the parts before any cancellation."""
    u = alpha - 1.0
    terms = (u * (alpha * r - epsilon), -math.log1p(u), -u * math.log1p(1.0 / u))
    sizes = u * (alpha * r + epsilon) + abs(terms[1]) + abs(terms[2])
    return math.fsum(terms) + _ROUND * sizes + 1e-300


def delta_prop14(r: float, epsilon: float) -> tuple[float, float]:
    """(δ′, α): Prop. 14's δ′ at ε for ρ-zCDP, the infimum over α > 1. The exponent is convex in α;
    its derivative (2α − 1)ρ − ε + ln(1 − 1/α) vanishes at one α (bisection in ln(α − 1))."""
    if r == 0.0:
        return 0.0, math.inf  # ρ = 0: the two distributions are equal
    def slope(t: float) -> float:  # t = ln(α − 1)
        u = math.exp(t)
        return (2.0 * u + 1.0) * r - epsilon - math.log1p(1.0 / u)
    hi = math.log(max(1.0, (epsilon + math.log(2.0)) / (2.0 * r)))  # slope ≥ 0 there
    lo = min(hi, 0.0) - 1.0
    while slope(lo) > 0:
        lo -= 8.0
        if lo < -700:
            break
    # ρ ≫ ε: slope ≥ 0 down to α − 1 = e^{−700}, the infimum is at α → 1, where δ′ → 1
    t = lo if slope(lo) >= 0 else bisect_float(lambda t: slope(t) < 0, lo, hi, rtol=1e-13, scale_floor=1.0)[1]
    alpha = 1.0 + math.exp(t)
    if alpha == 1.0:
        alpha = math.nextafter(1.0, 2.0)
    return _exp_up(log_delta_at(r, epsilon, alpha)), alpha


def delta_remark15(r: float, epsilon: float) -> float:
    """Remark 15: δ′ = e^{−(ε−ρ)²/(4ρ)} for ε ≥ ρ (1 below), rounded up."""
    if r == 0.0:
        return 0.0
    if epsilon <= r:
        return 1.0
    x = -((epsilon - r) ** 2) / (4.0 * r)
    return _exp_up(x + _ROUND * abs(x))


def epsilon_prop14(r: float, delta: float) -> tuple[float, float]:
    """(ε, α): Prop. 14's smallest ε at δ′ for ρ-zCDP, ε = inf_{α>1} αρ + ln(1 − 1/α) +
    (ln(1/δ′) − ln α)/(α − 1). Its derivative ρ − (ln(1/δ′) − ln α)/(α − 1)² vanishes where
    ρ(α − 1)² + ln α = ln(1/δ′), at one α (bisection)."""
    if r == 0.0 or delta >= 1.0:
        return 0.0, math.inf
    big_l = -math.log(delta)
    def root(u: float) -> float:
        return r * u * u + math.log1p(u) - big_l
    hi = math.sqrt(big_l / r)
    u = hi
    if root(hi) > 0:
        u = bisect_float(lambda u: root(u) < 0, 0.0, hi, rtol=1e-13, scale_floor=1e-300)[1]
    u = max(u, 1e-300)
    alpha = 1.0 + u
    # ln(1 − 1/α) without cancellation: −ln(1 + 1/u) for u > 1, ln u − ln(1 + u) below
    log_ratio = -math.log1p(1.0 / u) if u > 1.0 else math.log(u) - math.log1p(u)
    terms = (alpha * r, log_ratio, (big_l - math.log1p(u)) / u)
    sizes = alpha * r + abs(log_ratio) + (big_l + math.log1p(u)) / u  # before any cancellation
    eps = math.fsum(terms) + _ROUND * sizes
    return max(0.0, eps), alpha


def epsilon_remark15(r: float, delta: float) -> float:
    """Remark 15: ε = ρ + 2√(ρ ln(1/δ′)), rounded up."""
    if r == 0.0 or delta >= 1.0:
        return 0.0
    v = r + 2.0 * math.sqrt(r * -math.log(delta))
    return v + _ROUND * v


def _smaller(prop14: tuple[float, float], remark15: float) -> tuple[float, str]:
    """The smaller of Prop. 14's value (with its α) and Remark 15's (both sound), and its name."""
    v14, alpha = prop14
    if remark15 < v14:
        return remark15, REMARK15
    return v14, PROP14 if not math.isfinite(alpha) else f"{PROP14}, α = {alpha:.4g}"


def convert_epsilon(r: float, delta: float) -> tuple[float, str]:
    """ε at δ′ by the better of Prop. 14 and Remark 15, and the conversion's name."""
    return _smaller(epsilon_prop14(r, delta), epsilon_remark15(r, delta))


def convert_delta(r: float, epsilon: float) -> tuple[float, str]:
    """δ at ε by the better of Prop. 14 and Remark 15, and the conversion's name."""
    return _smaller(delta_prop14(r, epsilon), delta_remark15(r, epsilon))


# ------------------------------------------------------------------ the method
def epsilon_at_slack(levels: Levels, *, slack: float) -> float:
    """ε of the conversion at δ′ = ``slack`` ∈ [0, 1] (∞ at 0: zCDP says nothing at δ′ = 0)."""
    if slack <= 0:
        return math.inf
    return convert_epsilon(rho(levels), min(slack, 1.0))[0]


def epsilon_at_slacks(levels: Levels, slacks: ArrayLike) -> np.ndarray:
    """:func:`epsilon_at_slack` at many slacks at once (the regions page: thousands per drawing).
    The root of ρu² + ln(1 + u) = ln(1/δ′) (u = α − 1) by Newton's method from u = √(L/ρ), above the
    root (the function is convex and increasing, so the steps decrease monotonically to it); Prop. 14's
    ε at that α — any α > 1 is valid — with four times the scalar's rounding allowance (numpy's
    logarithms are within an ulp or two), then the min with Remark 15. Never below the scalar value."""
    s = np.asarray(slacks, dtype=float)
    out = np.full(s.shape, math.inf)
    pos = s > 0
    r = rho(levels)
    if r == 0.0:
        out[pos] = 0.0
        return out
    big_l = -np.log(np.minimum(s[pos], 1.0))
    u = np.sqrt(big_l / r)
    for _ in range(80):
        f = r * u * u + np.log1p(u) - big_l
        nxt = np.maximum(u - f / (2.0 * r * u + 1.0 / (1.0 + u)), 1e-300)
        done = bool(np.all(np.abs(nxt - u) <= 1e-15 * u))
        u = nxt
        if done:
            break
    with np.errstate(divide="ignore", invalid="ignore"):
        log_ratio = np.where(u > 1.0, -np.log1p(1.0 / u), np.log(u) - np.log1p(u))
        t1, t3 = (1.0 + u) * r, (big_l - np.log1p(u)) / u
        sizes = t1 + np.abs(log_ratio) + (big_l + np.log1p(u)) / u
        e14 = np.maximum(t1 + log_ratio + t3 + 4.0 * _ROUND * sizes, 0.0)
    e15 = r + 2.0 * np.sqrt(r * big_l)
    v = np.minimum(e14, e15 + _ROUND * e15)
    v[big_l == 0] = 0.0
    out[pos] = v
    return out


def total_delta(levels: Levels, slack: float) -> float:
    """δ = Σ δ_l + δ′ (Thm 22; Σ δ_l = 0 for Thm 18)."""
    return sum_delta(levels) + slack


def total_deltas(levels: Levels, slacks: ArrayLike) -> np.ndarray:
    """:func:`total_delta` at many slacks at once (the regions' sweep; the same floats)."""
    return sum_delta(levels) + np.asarray(slacks, dtype=float)


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    """ε with δ′ = δ − Σδ_l (``.delta`` is the target: the slack is spent); impossible when δ′ ≤ 0."""
    base = sum_delta(levels)
    slack = delta - base
    if slack <= 0:
        what = f"δ > Σδ_l = {base:.6g}" if base > 0 else "δ > 0"
        return Guarantee.impossible(
            source=_source(levels, PROP14),
            reason=f"zCDP (Steinke Thm 18/22) states no ε at δ = {delta:g}: needs {what}")
    eps, conversion = convert_epsilon(rho(levels), min(slack, 1.0))
    return Guarantee(epsilon=eps, delta=delta, kind=Kind.UPPER,
                     source=_source(levels, conversion.split(",")[0]),
                     detail=f"ρ = {rho(levels):.6g}; {conversion}")


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    """δ = Σδ_l + δ′(ε) with δ′ from the conversion, at most 1."""
    r = rho(levels)
    (delta, conversion), = _deltas(levels, [epsilon])
    return Guarantee(epsilon=epsilon, delta=delta, kind=Kind.UPPER,
                     source=_source(levels, conversion.split(",")[0]), solved="delta",
                     detail=f"ρ = {r:.6g}; {conversion}")


def _deltas(levels: Levels, epsilons: list[float]) -> list[tuple[float, str]]:
    """(δ, the conversion's name) at each ε: Σδ_l + δ′(ε), the sum rounded up, at most 1."""
    r, base = rho(levels), sum_delta(levels)
    out = []
    for epsilon in epsilons:
        d, conversion = convert_delta(r, epsilon)
        total = base + d
        if total > 0 and d > 0:
            total = math.nextafter(total, math.inf)  # the sum of two floats, rounded up
        out.append((min(1.0, total), conversion))
    return out


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point
    (its source names each conversion used, as the points' sources joined)."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    points = _deltas(levels, eps.tolist())
    used = dict.fromkeys(_source(levels, conversion.split(",")[0]) for _, conversion in points)
    return DeltaCurve.bounds(eps, [d for d, _ in points], kind=Kind.UPPER,
                             source="; ".join(used) or _source(levels, PROP14), reason="")
