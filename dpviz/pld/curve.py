"""δ(ε) of a measure on a uniform loss grid, at every grid point in one pass (docs/MATH.md §17.6).

For masses m_i at losses L_i = L_0 + i·h (and ``p_top`` at a loss ``top`` above them, +∞ allowed),
δ(ε) = Σ_{L_i > ε} m_i (1 − e^{ε − L_i}) + p_top·(1 − e^{ε − top})_+ (Steinke Prop. 7). At the grid
points, with c = e^{−h} and s = 1 − e^{−h},

    y_j = Σ_{i ≥ j} m_i c^{i−j} = m_j + c·y_{j+1},    D_j = δ(L_j) = s·Σ_{i > j} y_i,

(1 − e^{−th} = s·Σ_{r<t} c^r), so every D_j is a sum of non-negative terms, computed without
cancellation by one linear recurrence and one cumulative sum. Between grid points δ is linear in
α = e^ε (no mass in between), so δ(ε) = (1 − w)D_j + w·D_{j+1} with w = (e^{ε−L_j} − 1)/(e^h − 1).

Round-off: each y_j is a sum of ≤ n products, each term with ≤ 3n rounding factors (the product,
the sum and the rounded c); the cumulative sum adds n more, and s is rounded once: every computed
D_j is within γ_{4n+8} relative of the exact one (Higham §3.1, sums of non-negative terms), and the
interpolation adds a few u. ``rho`` is that relative bound; the readings charge it the sound way.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numpy.typing import NDArray
from scipy.signal import lfilter

U = 2.0**-53


def _ratio(d: float, h: float) -> float:
    """(e^d − 1)/(e^h − 1) for 0 ≤ d ≤ h, without overflow for h > 709 (a grid of width 1000 is allowed)."""
    if h <= 1.0:
        return math.expm1(d) / math.expm1(h)
    return math.exp(d - h) * -math.expm1(-d) / -math.expm1(-h)


def _inverse_ratio(w: float, h: float) -> float:
    """d with (e^d − 1)/(e^h − 1) = w: ln(1 + w(e^h − 1)), in log space for large h."""
    if h <= 1.0:
        return math.log1p(w * math.expm1(h))
    return h + math.log(w * -math.expm1(-h) + math.exp(-h))


@dataclass(frozen=True)
class GridCurve:
    """δ(ε) of non-negative masses on the grid l0 + i·h plus ``p_top`` at ``top`` (module docstring)."""

    l0: float
    h: float
    d: NDArray[np.float64]
    """D_j = δ(L_j) of the grid masses (with the top mass's share at L_j)."""
    y0: float
    """Σ_i m_i e^{−(L_i − L_0)}: δ below L_0 is D_0 + y0·(1 − e^{ε − L_0}) (+ the top mass's part)."""
    p_top: float
    top: float
    rho: float

    @classmethod
    def of(cls, l0: float, h: float, mass: NDArray[np.float64], p_top: float, top: float) -> GridCurve:
        n = mass.size
        c, s = math.exp(-h), -math.expm1(-h)
        y = lfilter([1.0], [1.0, -c], mass[::-1])[::-1] if n else np.zeros(0)
        d = np.zeros(n)
        if n > 1:
            d[:-1] = s * np.cumsum(y[::-1])[::-1][1:]
        if math.isfinite(top) and p_top > 0:
            d = d + p_top * -np.expm1(np.minimum(l0 + np.arange(n) * h - top, 0.0))
        rho = (4 * n + 32) * U / (1.0 - (4 * n + 32) * U)
        return cls(l0=l0, h=h, d=np.asarray(d, dtype=np.float64), y0=float(y[0]) if n else 0.0,
                   p_top=p_top, top=top, rho=rho)

    @cached_property
    def rising(self) -> NDArray[np.float64]:
        """−D, increasing, for ``solve``'s binary search (negated once per curve, not per reading)."""
        return -self.d

    def _top_part(self, eps: float) -> float:
        """The top mass's share of δ(ε): p_top (at +∞) or p_top·(1 − e^{ε − top})_+."""
        if not math.isfinite(self.top):
            return self.p_top
        return self.p_top * -math.expm1(eps - self.top) if eps < self.top else 0.0

    def finite(self, eps: float) -> float:
        """The computed δ(ε) of the masses (and of a finite top), without the slack ``rho``."""
        n = self.d.size
        if n == 0:
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        x = (eps - self.l0) / self.h
        if x < 0:  # below the grid: linear in α from D_0 (the top part is linear in α too)
            r = -math.expm1(eps - self.l0)
            extra = self.p_top * math.exp(self.l0 - self.top) * r if math.isfinite(self.top) else 0.0
            return float(self.d[0]) + self.y0 * r + extra
        j = min(int(x), n - 1)
        lj = self.l0 + j * self.h
        if j == n - 1:  # above the last grid point: only the top mass
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        w = min(max(_ratio(eps - lj, self.h), 0.0), 1.0)
        return float(self.d[j]) * (1.0 - w) + float(self.d[j + 1]) * w

    def solve(self, t: float) -> float | None:
        """Smallest ε ≥ 0 with ``finite(ε) ≤ t`` (a value at which it holds; ``None`` if none: t < 0)."""
        if t < 0:
            return None
        if self.finite(0.0) <= t:
            return 0.0
        n = self.d.size
        if n and self.d[-1] <= t:
            # crossing between grid points j, j + 1: d decreasing, d[j] > t ≥ d[j + 1]
            j = int(np.searchsorted(self.rising, -t, side="left")) - 1
            if j < 0:  # below the grid: D_0 + y0·(1 − e^{ε − L_0}) = t (the top part: the loop below)
                r = (t - float(self.d[0])) / self.y0 if self.y0 > 0 else 0.0
                eps = max(self.l0 + math.log1p(-min(max(r, 0.0), 1.0)), 0.0) if r < 1 else 0.0
            else:
                lj = self.l0 + j * self.h
                dj, dn = float(self.d[j]), float(self.d[j + 1])
                w = (dj - t) / (dj - dn) if dj > dn else 1.0
                eps = max(lj + _inverse_ratio(w, self.h), 0.0)
        else:  # above the last grid point: the finite top alone, p_top(1 − e^{ε − top}) = t
            if not (math.isfinite(self.top) and self.p_top > 0):
                return None if n == 0 else max(self.l0 + (n - 1) * self.h, 0.0)
            eps = max(self.top + math.log1p(-min(t / self.p_top, 1.0)), 0.0)
        step = max(abs(eps), 1e-300) * 2.0**-50
        for _ in range(200):  # up until it holds in floating point (never rounded down)
            if self.finite(eps) <= t:
                return eps
            eps += step
            step *= 2.0
        return eps
