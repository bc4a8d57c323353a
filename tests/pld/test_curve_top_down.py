"""``GridCurve`` computes D_j from the top of the grid down, in chunks, as far as its readings need:
its readings are those of D computed in one pass over the whole grid (the one-pass computation of
docs/MATH.md §17.6, written out here as the reference), bit for bit, on random grids (with zero, NaN
and negative masses, which take the whole-grid route, and finite tops) and for readings in any order."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.signal import lfilter

from dpviz.pld.curve import GridCurve, _inverse_ratio, _ratio


class _OnePass:
    """Every D_j at once (the reference)."""

    def __init__(self, l0: float, h: float, mass: np.ndarray, p_top: float, top: float) -> None:
        n = mass.size
        c, s = math.exp(-h), -math.expm1(-h)
        y = lfilter([1.0], [1.0, -c], mass[::-1])[::-1] if n else np.zeros(0)
        d = np.zeros(n)
        if n > 1:
            d[:-1] = s * np.cumsum(y[::-1])[::-1][1:]
        if math.isfinite(top) and p_top > 0:
            d = d + p_top * -np.expm1(np.minimum(l0 + np.arange(n) * h - top, 0.0))
        self.l0, self.h, self.d, self.y0 = l0, h, d, float(y[0]) if n else 0.0
        self.p_top, self.top = p_top, top

    def _top_part(self, eps: float) -> float:
        if not math.isfinite(self.top):
            return self.p_top
        return self.p_top * -math.expm1(eps - self.top) if eps < self.top else 0.0

    def finite(self, eps: float) -> float:
        n = self.d.size
        if n == 0:
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        x = (eps - self.l0) / self.h
        if x < 0:
            r = -math.expm1(eps - self.l0)
            extra = self.p_top * math.exp(self.l0 - self.top) * r if math.isfinite(self.top) else 0.0
            return float(self.d[0]) + self.y0 * r + extra
        j = min(int(x), n - 1)
        lj = self.l0 + j * self.h
        if j == n - 1:
            return self._top_part(eps) if math.isfinite(self.top) else 0.0
        w = min(max(_ratio(eps - lj, self.h), 0.0), 1.0)
        return float(self.d[j]) * (1.0 - w) + float(self.d[j + 1]) * w

    def solve(self, t: float) -> float | None:
        if t < 0:
            return None
        if self.finite(0.0) <= t:
            return 0.0
        n = self.d.size
        if n and self.d[-1] <= t:
            j = int(np.searchsorted(-self.d, -t, side="left")) - 1
            if j < 0:
                r = (t - float(self.d[0])) / self.y0 if self.y0 > 0 else 0.0
                eps = max(self.l0 + math.log1p(-min(max(r, 0.0), 1.0)), 0.0) if r < 1 else 0.0
            else:
                lj = self.l0 + j * self.h
                dj, dn = float(self.d[j]), float(self.d[j + 1])
                w = (dj - t) / (dj - dn) if dj > dn else 1.0
                eps = max(lj + _inverse_ratio(w, self.h), 0.0)
        else:
            if not (math.isfinite(self.top) and self.p_top > 0):
                return None if n == 0 else max(self.l0 + (n - 1) * self.h, 0.0)
            eps = max(self.top + math.log1p(-min(t / self.p_top, 1.0)), 0.0)
        step = max(abs(eps), 1e-300) * 2.0**-50
        for _ in range(200):
            if self.finite(eps) <= t:
                return eps
            eps += step
            step *= 2.0
        return eps


def _outcome(f, *args):
    try:
        return ("value", f(*args))
    except Exception as exc:  # the same exception where the reference raises (a NaN ε)
        return ("raises", type(exc).__name__)


def _same(a, b) -> bool:
    if a[0] != b[0]:
        return False
    x, y = a[1], b[1]
    return x == y or (isinstance(x, float) and isinstance(y, float) and math.isnan(x) and math.isnan(y))


@pytest.mark.parametrize("seed", range(8))
def test_top_down_readings_are_the_one_pass_readings(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(150):
        n = int(rng.integers(0, 20_000))
        m = rng.random(n) * np.exp(-rng.random(n) * rng.uniform(0, 60))
        for bad in (0.0, np.nan, -1e-20, np.inf):
            if n and rng.random() < 0.05:
                m[rng.integers(0, n)] = bad
        h = float(10 ** rng.uniform(-6, 0))
        l0 = float(rng.normal(0.0, 1.0) * n * h)
        p_top = float(rng.random() * 1e-6) if rng.random() < 0.5 else 0.0
        top = l0 + n * h + float(rng.random()) if rng.random() < 0.3 else math.inf
        ref = _OnePass(l0, h, m, p_top, top)
        ts = [*(rng.random(6) * (float(ref.d[0]) if n else 1e-3)), 0.0, -1.0, 1e-30]
        if n:
            ts += [float(ref.d[0]), float(ref.d[-1]), float(ref.d[n // 2])]
        kept = GridCurve.of(l0, h, m, p_top, top)  # one curve read again and again, as a grid's is
        for t in ts:
            want = _outcome(ref.solve, float(t))
            assert _same(_outcome(kept.solve, float(t)), want)
            assert _same(_outcome(GridCurve.of(l0, h, m, p_top, top).solve, float(t)), want)
        for e in [*rng.normal(l0 + n * h / 2, n * h + 1e-9, 6), 0.0, l0, l0 + n * h]:
            assert _same(_outcome(kept.finite, float(e)), _outcome(ref.finite, float(e)))
        whole = GridCurve.of(l0, h, m, p_top, top)
        assert np.array_equal(whole.d, ref.d, equal_nan=True)
        assert whole.y0 == ref.y0 or (math.isnan(whole.y0) and math.isnan(ref.y0))


def test_threads_reading_one_curve_get_the_one_pass_readings() -> None:
    """A grid's curve may be read from several threads (a server): one extends it at a time and the
    values a reader finds are final, so every reading is the one-pass one."""
    from concurrent.futures import ThreadPoolExecutor

    rng = np.random.default_rng(11)
    n, h, l0 = 60_000, 3.7e-6, -0.03
    m = rng.random(n) * np.exp(-np.linspace(0.0, 60.0, n))
    ref = _OnePass(l0, h, m, 0.0, math.inf)
    ts = [float(t) for t in rng.random(400) * float(ref.d[0])]
    want = [ref.solve(t) for t in ts]
    for _ in range(5):
        shared = GridCurve.of(l0, h, m, 0.0, math.inf)
        with ThreadPoolExecutor(max_workers=8) as pool:
            got = list(pool.map(shared.solve, ts))
        assert got == want
