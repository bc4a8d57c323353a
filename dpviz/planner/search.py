"""The one search of the planner: the largest x > 0 whose monotone score is ≤ 0.

``score(x)`` is ≤ 0 exactly when x fits (a certified upper bound within the target) and grows
with x. The bracket is found by doubling/halving, shrunk by a few regula falsi steps (Illinois
variant, so both ends move) and finished by the shared bisection ``dpviz.numerics.bisect_float``
or ``bisect_int``. Every evaluated point keeps the bracket valid: ``lo`` was evaluated and fits,
``hi`` was evaluated and does not, so a score that is not smooth (a PLD grid) only costs steps.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from dpviz.numerics import bisect_float, bisect_int


def narrow(score: Callable[[float], float], lo: float, hi: float, s_lo: float, s_hi: float, *,
           steps: int = 12, rtol: float = 1e-8,
           snap: Callable[[float], float] | None = None) -> tuple[float, float]:
    """Shrink a bracket (score(lo) ≤ 0 < score(hi)) by regula falsi steps until its relative
    width is ``rtol`` or ``steps`` are spent; ``snap`` rounds each guess (to an integer)."""
    side = 0
    for _ in range(steps):
        if not (math.isfinite(s_lo) and math.isfinite(s_hi)) or hi - lo <= rtol * hi or s_hi == s_lo:
            break
        x = lo - s_lo * (hi - lo) / (s_hi - s_lo)
        x = min(max(x, lo + 1e-6 * (hi - lo)), hi - 1e-6 * (hi - lo))
        if snap is not None:
            x = snap(x)
            if not lo < x < hi:
                break
        sx = score(x)
        if sx <= 0:
            lo, s_lo = x, sx
            s_hi = s_hi / 2 if side == -1 else s_hi
            side = -1
        else:
            hi, s_hi = x, sx
            s_lo = s_lo / 2 if side == 1 else s_lo
            side = 1
    return lo, hi


def largest(score: Callable[[float], float], *, start: float, top: float, smallest: float, rtol: float,
            narrow_rtol: float = 1e-8, steps: int = 12,
            bottom: float | None = None, grow: float = 2.0,
            probe: bool = False) -> tuple[float | None, float]:
    """(lo, hi): lo the largest x found with score(x) ≤ 0, hi the smallest found above it
    (``inf`` when ``top`` itself fits); ``(None, hi)`` when nothing down to ``smallest`` fits.
    ``bottom``: the smallest x allowed at all (e.g. a mechanism's largest σ); the halving stops
    there, evaluating ``bottom`` itself, and ``(None, bottom)`` says even it does not fit.
    ``grow``: the first step of the bracketing, a factor in (1, 2] squared at each further step up
    to 2 (a ``start`` known to be close, e.g. another mechanism's answer, is bracketed at once).
    ``probe``: when ``start`` does not fit, evaluate ``smallest`` once before halving; the score is
    monotone, so if even it does not fit nothing does, and a hopeless search (e.g. k·δ0 above the
    total δ) costs two evaluations instead of the ~40 halvings down to ``smallest``."""
    c = min(start, top) if bottom is None else max(min(start, top), bottom)
    factor = min(max(grow, 1.0 + 1e-6), 2.0)
    s_c = score(c)
    if s_c <= 0:
        lo, s_lo, hi, s_hi = c, s_c, math.inf, math.inf
        while hi == math.inf:
            nxt = min(lo * factor, top)
            factor = min(factor * factor, 2.0)
            if nxt <= lo:
                return lo, math.inf
            s = score(nxt)
            if s <= 0:
                lo, s_lo = nxt, s
            else:
                hi, s_hi = nxt, s
    else:
        hi, s_hi = c, s_c
        if probe and bottom is None and smallest < hi and score(smallest) > 0:
            return None, smallest
        while True:
            if bottom is not None:
                if hi <= bottom:
                    return None, hi
                nxt = max(hi / factor, bottom)
            else:
                nxt = hi / factor
                if nxt < smallest:
                    return None, hi
            factor = min(factor * factor, 2.0)
            s = score(nxt)
            if s <= 0:
                lo, s_lo = nxt, s
                break
            hi, s_hi = nxt, s
    lo, hi = narrow(score, lo, hi, s_lo, s_hi, steps=steps, rtol=max(narrow_rtol, rtol))
    return bisect_float(lambda x: score(x) <= 0, lo, hi, rtol=rtol, scale_floor=0.0)


def largest_int(score: Callable[[int], float], *, top: int, steps: int = 8,
                start: int = 1) -> tuple[int | None, int]:
    """(lo, hi = lo + 1): the largest integer n ≥ 1 with score(n) ≤ 0 (``(None, 1)`` when 1 does
    not fit; ``(top, top + 1)`` when every n up to ``top`` fits, without evaluating top + 1).
    ``start``: a guess known to be cheap to beat (e.g. a looser method's answer), tried first."""
    lo = 0
    if 1 < start < top:
        s_start = score(start)
        if s_start <= 0:
            lo, s_lo, hi, s_hi = start, s_start, 2 * start, math.inf
    elif start >= top > 1 and score(top) <= 0:  # the guess is at the limit: no doubling from 1 up to it
        return top, top + 1
    if lo == 0:
        s1 = score(1)
        if s1 > 0:
            return None, 1
        lo, s_lo, hi, s_hi = 1, s1, 2, math.inf
    while True:
        if hi >= top:
            s_top = score(top)
            if s_top <= 0:
                return top, top + 1
            hi, s_hi = top, s_top
            break
        s = score(hi)
        if s > 0:
            s_hi = s
            break
        lo, s_lo, hi = hi, s, hi * 2
    if hi - lo > 2:
        flo, fhi = narrow(lambda x: score(int(x)), float(lo), float(hi), s_lo, s_hi, steps=steps, rtol=0.0,
                          snap=lambda x: float(round(x)))
        lo, hi = int(flo), int(fhi)
    return bisect_int(lambda n: score(n) <= 0, lo, hi)
