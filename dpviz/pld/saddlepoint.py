"""Where δ is made: the saddlepoint of the composed privacy loss (docs/MATH.md §17.9), at a target δ
or at a target ε, from coarse single steps (the grids ``cost.cost`` sizes a composition with).

By the saddlepoint approximation of δ(ε) = E_P[(1 − e^{ε−L})_+] for the composed P-law (Λ its
cumulant function, Λ′(θ) = ε),

    δ ≈ e^{Λ(θ) − θε}/(θ(1 + θ)·√(2πΛ″(θ))).

Only a guess of where δ is made and how fast it falls: ``dpviz.pld.predict`` chooses a grid width
from it, and every grid is still certified.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from dpviz.pld.cost import COST_CELLS, coarse_grid
from dpviz.pld.law import LossLaw
from dpviz.pld.power import cumulants, merged_part

SEARCH_STEPS = 60
"""Newton steps (in ln θ, inside a shrinking bracket) of either search."""


def _merged(parts: Sequence[tuple[LossLaw, int]], tail: float) -> list:
    """Each part's coarse single step, as ``power.cumulants`` reads it."""
    merged = []
    for law, k in parts:
        lo, hi = law.support(tail)
        merged.append(merged_part(coarse_grid(law, max((hi - lo) / COST_CELLS, 1e-9), tail), k))
    return merged


def saddlepoint(parts: Sequence[tuple[LossLaw, int]], delta: float,
                tail: float) -> tuple[float, float, float]:
    """(ε, θ, Λ″(θ)) with δ ≈ e^{Λ(θ) − θε}/(θ(1 + θ)·√(2πΛ″(θ))), Λ′(θ) = ε: the saddlepoint
    approximation of δ(ε) = E_P[(1 − e^{ε−L})_+] for the composed P-law (Λ its cumulant function,
    from coarse single steps: the grids ``cost.cost`` sizes the composition with, at ``tail``). Only a
    guess of where δ is made."""
    merged = _merged(parts, tail)
    span = max(p.span for p in merged)
    log_delta = math.log(delta)

    def excess(theta: float) -> tuple[float, float, float]:
        """ln of the approximate δ at θ minus ln δ, with Λ′ and Λ″ there."""
        lam, d1, d2 = cumulants(merged, theta)
        if not (d2 > 0 and math.isfinite(lam)):
            return -math.inf, d1, d2
        f = lam - theta * d1 - math.log(theta * (1.0 + theta)) - 0.5 * math.log(2 * math.pi * d2)
        return f - log_delta, d1, d2

    lo, hi = math.log(1e-8), math.log(600.0 / max(span, 1e-12))
    f, d1, d2 = excess(math.exp(hi))
    if f > 0:
        return d1, math.exp(hi), d2
    # excess is decreasing in θ: Newton steps in ln θ (its derivative without the Λ‴ term, which
    # only slows them), kept inside a shrinking bracket
    u = min(max(0.0, lo), hi)
    for _ in range(SEARCH_STEPS):
        theta = math.exp(u)
        f, d1, d2 = excess(theta)
        if f > 0:
            lo = u
        else:
            hi = u
        if hi - lo < 1e-3 or abs(f) < 1e-3:
            break
        slope = -theta * (theta * d2 + (1.0 + 2.0 * theta) / (theta * (1.0 + theta)))
        nxt = u - f / slope if math.isfinite(f) and slope < 0 else math.nan
        u = nxt if lo < nxt < hi else 0.5 * (lo + hi)
    return d1, theta, d2  # at the last θ evaluated


def saddlepoint_at(parts: Sequence[tuple[LossLaw, int]], epsilon: float,
                   tail: float) -> tuple[float, float, float] | None:
    """(δ, θ, Λ″(θ)) at a target ε: Λ′(θ) = ε, δ ≈ e^{Λ(θ) − θε}/(θ(1 + θ)·√(2πΛ″(θ))) (as
    ``saddlepoint``, from the same coarse single steps); None where ε is not above the composed
    mean loss (θ ≤ 0: δ is not made in the tail) or out of the range searched. Only a guess."""
    merged = _merged(parts, tail)
    span = max(p.span for p in merged)
    lo, hi = math.log(1e-8), math.log(600.0 / max(span, 1e-12))
    if cumulants(merged, math.exp(lo))[1] >= epsilon or cumulants(merged, math.exp(hi))[1] <= epsilon:
        return None
    u = 0.5 * (lo + hi)
    for _ in range(SEARCH_STEPS):  # Λ′ grows with θ: Newton steps in ln θ inside a shrinking bracket
        theta = math.exp(u)
        lam, d1, d2 = cumulants(merged, theta)
        if d1 < epsilon:
            lo = u
        else:
            hi = u
        if hi - lo < 1e-6 or abs(d1 - epsilon) <= 1e-6 * max(epsilon, 1e-12):
            break
        nxt = u - (d1 - epsilon) / (theta * d2) if d2 > 0 else math.nan
        u = nxt if lo < nxt < hi else 0.5 * (lo + hi)
    if math.exp(u) != theta:  # out of steps after a move: read the point moved to (else it was just read)
        theta = math.exp(u)
        lam, d1, d2 = cumulants(merged, theta)
    if not (d2 > 0 and math.isfinite(lam)):
        return None
    log_delta = lam - theta * epsilon - math.log(theta * (1.0 + theta)) - 0.5 * math.log(2 * math.pi * d2)
    return min(math.exp(log_delta), 1.0), theta, d2
