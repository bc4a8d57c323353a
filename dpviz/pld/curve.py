"""δ(ε) of a measure on a uniform loss grid, at the grid points from the top down (docs/MATH.md §17.6).

For masses m_i at losses L_i = L_0 + i·h (and ``p_top`` at a loss ``top`` above them, +∞ allowed),
δ(ε) = Σ_{L_i > ε} m_i (1 − e^{ε − L_i}) + p_top·(1 − e^{ε − top})_+ (Steinke Prop. 7). At the grid
points, with c = e^{−h} and s = 1 − e^{−h},

    y_j = Σ_{i ≥ j} m_i c^{i−j} = m_j + c·y_{j+1},    D_j = δ(L_j) = s·Σ_{i > j} y_i,

(1 − e^{−th} = s·Σ_{r<t} c^r), so every D_j is a sum of non-negative terms, computed without
cancellation by one linear recurrence and one cumulative sum. Between grid points δ is linear in
α = e^ε (no mass in between), so δ(ε) = (1 − w)D_j + w·D_{j+1} with w = (e^{ε−L_j} − 1)/(e^h − 1).

Both recurrences run from the top of the grid down, so the D_j near the top, where δ is small and
read, are computed first; ``GridCurve`` computes them in chunks as far as its readings need, each chunk
carrying the last y and running sum into its first entry: the same floats as one pass (tested).

Round-off: each y_j is a sum of ≤ n products, each term with ≤ 3n rounding factors (the product,
the sum and the rounded c); the cumulative sum adds n more, and s is rounded once: every computed
D_j is within γ_{4n+8} relative of the exact one (Higham §3.1, sums of non-negative terms), and the
interpolation adds a few u. ``rho`` is that relative bound; the readings charge it the sound way.
"""

from __future__ import annotations

import math
import threading
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


class GridCurve:
    """δ(ε) of non-negative masses on the grid l0 + i·h plus ``p_top`` at ``top`` (module docstring).

    The y_j and D_j are sums from the top of the grid down, and δ is read where it is small, near the
    top: they are computed from the top down in chunks, as far as the readings need (``_extend``).
    Each chunk continues the recurrence and the running sum from the last values before it, added to
    its first entry as the one-pass recurrence and cumulative sum add them: the same floats as
    computing every D_j at once (tested against that), for the top part of the grid only."""

    CHUNK = 4096
    """Fewest grid points computed at once (then at least as many as so far)."""

    def __init__(self, l0: float, h: float, mass: NDArray[np.float64], p_top: float, top: float) -> None:
        n = mass.size
        self.l0, self.h, self.p_top, self.top, self.n = l0, h, p_top, top, n
        self.rho = (4 * n + 32) * U / (1.0 - (4 * n + 32) * U)
        self._c, self._s = math.exp(-h), -math.expm1(-h)
        self._rev = mass[::-1]
        # D_j falls with j for non-negative finite masses: a reading may then stop at the top part
        self._monotone = bool(np.all((mass >= 0.0) & (mass < math.inf)))
        self._dr = np.zeros(n)  # D_{n−1−r} at r, for r < _done
        self._done = 0
        self._lock = threading.Lock()
        self._y_last = 0.0  # y at r = _done − 1
        self._sum_last = 0.0  # Σ_{r' ≤ _done − 1} y at r'

    @classmethod
    def of(cls, l0: float, h: float, mass: NDArray[np.float64], p_top: float, top: float) -> GridCurve:
        return cls(l0, h, mass, p_top, top)

    def _extend(self, upto: int) -> None:
        """D at the top ``upto`` grid points (r = n − 1 − j < upto): y by the recurrence y_j = m_j +
        c·y_{j+1} (``lfilter``, its first input plus the carried c·y), the running sum of y (its first
        entry plus the carried sum), D at r = s·(the sum through r − 1), D_{n−1} = 0, plus the finite
        top's share (module docstring)."""
        if upto <= self._done:
            return
        with self._lock:  # one thread extends at a time; _done is set after the values it covers
            self._extend_locked(upto)

    def _extend_locked(self, upto: int) -> None:
        n, a = self.n, self._done
        if upto <= a:
            return
        b = n if upto >= n else min(n, max(upto, 2 * a, self.CHUNK))
        x = self._rev[a:b]
        if a:
            x = x.copy()
            x[0] = x[0] + self._c * self._y_last
        y = lfilter([1.0], [1.0, -self._c], x)
        head = y.copy()
        if a:
            head[0] = self._sum_last + head[0]
        run = np.cumsum(head)
        if a:
            self._dr[a] = self._s * self._sum_last
        self._dr[a + 1:b] = self._s * run[:-1]
        if math.isfinite(self.top) and self.p_top > 0:
            j = np.arange(n - 1 - a, n - 1 - b, -1)
            share = self.p_top * -np.expm1(np.minimum(self.l0 + j * self.h - self.top, 0.0))
            self._dr[a:b] = self._dr[a:b] + share
        self._y_last, self._sum_last = float(y[-1]), float(run[-1])
        self._done = b  # last: a reader seeing it finds the values written

    @property
    def d(self) -> NDArray[np.float64]:
        """D_j = δ(L_j) of the grid masses (with the top mass's share at L_j), every j."""
        self._extend(self.n)
        return self._dr[::-1]

    @property
    def y0(self) -> float:
        """Σ_i m_i e^{−(L_i − L_0)}: δ below L_0 is D_0 + y0·(1 − e^{ε − L_0}) (+ the top mass's part)."""
        self._extend(self.n)
        return self._y_last if self.n else 0.0

    @cached_property
    def rising(self) -> NDArray[np.float64]:
        """−D, increasing, for ``solve``'s binary search over the whole grid (negated once)."""
        return -self.d

    def _d(self, j: int) -> float:
        """D_j, computed down to j if not yet."""
        r = self.n - 1 - j
        self._extend(r + 1)
        return float(self._dr[r])

    def _top_part(self, eps: float) -> float:
        """The top mass's share of δ(ε): p_top (at +∞) or p_top·(1 − e^{ε − top})_+."""
        if not math.isfinite(self.top):
            return self.p_top
        return self.p_top * -math.expm1(eps - self.top) if eps < self.top else 0.0

    def finite(self, eps: float) -> float:
        """The computed δ(ε) of the masses (and of a finite top), without the slack ``rho``."""
        n = self.n
        if n == 0:
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        x = (eps - self.l0) / self.h
        if x < 0:  # below the grid: linear in α from D_0 (the top part is linear in α too)
            r = -math.expm1(eps - self.l0)
            extra = self.p_top * math.exp(self.l0 - self.top) * r if math.isfinite(self.top) else 0.0
            return self._d(0) + self.y0 * r + extra
        j = min(int(x), n - 1)
        lj = self.l0 + j * self.h
        if j == n - 1:  # above the last grid point: only the top mass
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        w = min(max(_ratio(eps - lj, self.h), 0.0), 1.0)
        r = n - 1 - j  # D_j and D_{j+1} at r and r − 1
        if r >= self._done:
            self._extend(r + 1)
        return float(self._dr[r]) * (1.0 - w) + float(self._dr[r - 1]) * w

    def _above(self, t: float) -> int:
        """The number of grid points from the top whose D the readings at t need: all of them, or where
        D falls with j, down to the first point whose D is above t (computed from the top down)."""
        if not self._monotone:
            return self.n
        while self._done < self.n and not (self._done and self._dr[self._done - 1] > t):
            self._extend(self._done + 1)
        return self._done

    def _crossing(self, t: float) -> int:
        """The last j with D_j > t (−1: none), as the binary search over −D on the whole grid finds it:
        where D falls with j that j lies in the computed top part, whose D at or below t are counted."""
        if not self._monotone:
            return int(np.searchsorted(self.rising, -t, side="left")) - 1
        done = self._above(t)  # D at r < done: non-decreasing in r, above t at r = done − 1 (or r = n)
        return self.n - 1 - int(np.searchsorted(self._dr[:done], t, side="right"))

    def solve(self, t: float) -> float | None:
        """Smallest ε ≥ 0 with ``finite(ε) ≤ t`` (a value at which it holds; ``None`` if none: t < 0)."""
        if t < 0:
            return None
        if self._zero_holds(t):
            return 0.0
        n = self.n
        if n and self._d(n - 1) <= t:
            # crossing between grid points j, j + 1: d decreasing, d[j] > t ≥ d[j + 1]
            j = self._crossing(t)
            if j < 0:  # below the grid: D_0 + y0·(1 − e^{ε − L_0}) = t (the top part: the loop below)
                d0 = self._d(0)
                r = (t - d0) / self.y0 if self.y0 > 0 else 0.0
                eps = max(self.l0 + math.log1p(-min(max(r, 0.0), 1.0)), 0.0) if r < 1 else 0.0
            else:
                lj = self.l0 + j * self.h
                dj, dn = self._d(j), self._d(j + 1)
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

    def _zero_holds(self, t: float) -> bool:
        """``finite(0.0) <= t``, without computing D down to ε = 0 where the top part already shows
        it false: where D falls with j, a computed D_k > t·(1 + 1e-12) at some k ≥ j + 1 (ε = 0 between
        grid points j and j + 1) makes the reading there, a rounded convex combination of D_j ≥ D_{j+1}
        ≥ D_k, above t (three roundings: relative 3u ≪ 1e-12)."""
        n = self.n
        x = (0.0 - self.l0) / self.h
        if n == 0 or x < 0 or not self._monotone:
            return self.finite(0.0) <= t
        j = min(int(x), n - 1)
        need = n - j  # finite(0.0) reads D_j and D_{j+1}: the top n − j points
        bar = t * (1.0 + 1e-12)
        while self._done < need and not (self._done and self._dr[self._done - 1] > bar):
            self._extend(self._done + 1)
        if self._done >= need or j == n - 1:
            return self.finite(0.0) <= t
        return False
