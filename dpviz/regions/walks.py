"""The two sequential walks of drawing a region (docs/MATH.md §13), interpreted or compiled (``dpviz.jit``).

- ``hull_walk``: the lines on the upper envelope of lines sorted by slope (the convex hull trick),
  for ``dpviz.regions.boundary.intersection_boundary``.
- ``thin_walk``: the greedy thinning of a convex lower boundary within a tolerance, for
  ``dpviz.regions.slack.thin``.
- ``corner_rises``: the refinement's bound on each slack interval (``slack.interval_bounds``), compiled
  only: the interpreter runs that function's numpy steps, which give the same floats.

Each keeps or drops a line by what the lines before it left: loops that array operations cannot
express. A change of ε0, δ0 or k on Privacy regions runs both over thousands of lines for each slack
method (29 ms a method in the interpreter: ``benchmarks/results/change_cpu.md``). The interpreter runs
them on Python lists (with ``bisect``), compiled code on arrays (with ``_bisect_left`` and
``_bisect_right``, the same searches written out); both give the same vertices bit for bit (tested).
"""

from __future__ import annotations

import bisect
import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz import jit

Buffer = Any
"""Python lists in the interpreter, NumPy arrays compiled (``hull`` and ``thinned`` make them)."""


def hull_walk(slopes: Buffer, intercepts: Buffer, hull: Buffer) -> int:
    """Indices of the lines on x ↦ max_j (a_j + s_j x) into ``hull`` (returns how many), for lines
    sorted by strictly increasing slope: a line is dropped when the next one overtakes the line
    before it no later than it does."""
    m = 0
    for j in range(len(slopes)):
        sj = slopes[j]
        aj = intercepts[j]
        while m >= 2:
            i1 = hull[m - 2]
            i2 = hull[m - 1]
            x12 = (intercepts[i1] - intercepts[i2]) / (slopes[i2] - slopes[i1])
            x1j = (intercepts[i1] - aj) / (sj - slopes[i1])
            if x1j <= x12:
                m -= 1
            else:
                break
        hull[m] = j
        m += 1
    return m


def crossing(i: int, j: int, x: Buffer, y: Buffer, neg_y: Buffer, slope: Buffer, icpt: Buffer,
             n: int) -> tuple[float, float, float]:
    """Vertex (x, y) where the lines of segments i < j of the polyline (x, y) cross, and its gap to
    the polyline (the larger of the gaps in P_MD and in P_FA); a gap of ∞ when the crossing is unusable
    (the lines do not converge, or cross outside [x_i, x_{j+1}])."""
    mi = slope[i]
    ci = icpt[i]
    mj = slope[j]
    cj = icpt[j]
    if not mj > mi:
        return 0.0, 0.0, math.inf
    xc = (cj - ci) / (mi - mj)
    if not x[i] <= xc <= x[j + 1]:
        return 0.0, 0.0, math.inf
    yc = max(ci + mi * xc, cj + mj * xc)
    k = min(max(_bisect_right(x, xc) - 1, 0), n - 1)
    y_orig = y[k] + (y[k + 1] - y[k]) * (xc - x[k]) / (x[k + 1] - x[k]) if x[k + 1] > x[k] else y[k]
    gap = y_orig - yc
    h = min(max(_bisect_left(neg_y, -yc), 1), n)  # first vertex with y ≤ yc
    x_orig = (x[h - 1] + (x[h] - x[h - 1]) * (y[h - 1] - yc) / (y[h - 1] - y[h]) if y[h - 1] > y[h]
              else x[h])
    return xc, yc, max(gap, x_orig - xc, 0.0)


def fits(i: int, j: int, x: Buffer, y: Buffer, neg_y: Buffer, slope: Buffer, icpt: Buffer, n: int,
         tolerance: float) -> bool:
    """Whether the crossing of segments i < j is usable and within ``tolerance`` of the polyline."""
    return crossing(i, j, x, y, neg_y, slope, icpt, n)[2] <= tolerance


def thin_walk(x: Buffer, y: Buffer, neg_y: Buffer, slope: Buffer, icpt: Buffer, n: int, tolerance: float,
              xs: Buffer, ys: Buffer) -> tuple[int, float]:
    """Greedy from P_FA = 0: from each kept segment's line, the farthest later one whose crossing with
    it is within ``tolerance`` (galloping, then bisection). Writes the thinned vertices into ``xs``
    and ``ys`` (n + 1 long); returns how many, and the largest gap."""
    xs[0] = x[0]
    ys[0] = y[0]
    m = 1
    worst = 0.0
    i = 0
    skip = 1
    while i < n - 1:
        guess = min(i + skip, n - 1)  # the last skip first: neighbouring skips are alike
        if guess > i + 1 and not fits(i, guess, x, y, neg_y, slope, icpt, n, tolerance):
            lo = i + 1
            hi = guess
        else:
            step = max(skip, 1)
            good = max(guess, i + 1)
            while good + step <= n - 1 and fits(i, good + step, x, y, neg_y, slope, icpt, n, tolerance):
                good += step
                step *= 2
            lo = good  # fits; hi does not (or is past the end)
            hi = min(good + step, n)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if fits(i, mid, x, y, neg_y, slope, icpt, n, tolerance):
                lo = mid
            else:
                hi = mid
        xc, yc, gap = crossing(i, lo, x, y, neg_y, slope, icpt, n)
        if gap == math.inf or lo == i + 1:  # the next line itself: keep the original vertex
            xs[m] = x[i + 1]
            ys[m] = y[i + 1]
            m += 1
            i += 1
            continue
        xs[m] = xc
        ys[m] = yc
        m += 1
        worst = max(worst, gap)
        skip = lo - i
        i = lo
    xs[m] = x[n]
    ys[m] = y[n]
    return m + 1, worst


def corner_rises(x: Buffer, y: Buffer, a_up: Buffer, b_up: Buffer, a_down: Buffer, b_down: Buffer,
                 slopes: Buffer, out: Buffer) -> None:
    """``slack.interval_bounds``' numpy steps element by element, compiled only (the interpreter runs
    the numpy code): the same operations in the same order, so the same floats. ``slopes`` (len(x) − 1
    long) is filled with the boundary's slopes made non-decreasing; for each interval, ``out`` gets the
    largest of 0 and b − a·x_v − y_v over its two corner lines (a, b) and the vertices v around the
    first with slope ≥ −a (``searchsorted``'s index, found from the previous interval's:
    ``_gallop_left``), with ``np.maximum``'s order and NaN rule."""
    last = len(x) - 1
    big = 1.7976931348623157e308
    for j in range(last):
        dy = y[j + 1] - y[j]
        dx = x[j + 1] - x[j]
        if dx == 0.0:  # numpy's quotient, without the compiled code's ZeroDivisionError
            s = math.nan if dy == 0.0 or dy != dy else math.copysign(math.inf, dy) * math.copysign(1.0, dx)
        else:
            s = dy / dx
        if s != s:  # np.nan_to_num(…, nan=−∞): ±∞ become ±the largest float
            s = -math.inf
        elif s == math.inf:
            s = big
        elif s == -math.inf:
            s = -big
        if j > 0 and not (slopes[j - 1] < s):  # np.maximum.accumulate (no NaN is left)
            s = slopes[j - 1]
        slopes[j] = s
    hint_up = 0
    hint_down = 0
    for i in range(len(out)):
        best = 0.0
        for line in range(2):
            a = a_up[i] if line == 0 else a_down[i]
            b = b_up[i] if line == 0 else b_down[i]
            if line == 0:
                at = hint_up = _gallop_left(slopes, -a, hint_up)
            else:
                at = hint_down = _gallop_left(slopes, -a, hint_down)
            for shift in range(-1, 2):
                v = min(max(at + shift, 0), last)
                rise = b - a * x[v] - y[v]
                if not (best >= rise or best != best):  # np.maximum(best, rise)
                    best = rise
        out[i] = best


def _gallop_left(a: Buffer, v: float, hint: int) -> int:
    """``bisect.bisect_left(a, v)`` (the number of items < v, a sorted without NaN) searched outwards
    from ``hint``: a few steps where consecutive searches end close together."""
    n = len(a)
    step = 1
    if hint < n and a[hint] < v:  # the answer is above hint
        lo = hint + 1
        hi = lo
        while hi < n and a[hi] < v:
            lo = hi + 1
            hi += step
            step *= 2
        hi = min(hi, n)
    else:  # the answer is at most hint
        hi = hint
        lo = hint - 1
        while lo >= 0 and not a[lo] < v:
            hi = lo
            lo -= step
            step *= 2
        lo = max(lo + 1, 0)
    return _bisect_left(a, v, lo, hi)  # a[< lo] < v ≤ a[hi] (or hi = n)


_bisect_left = bisect.bisect_left
_bisect_right = bisect.bisect_right


def _compiled_bisect_left(a: Buffer, v: float, lo: int = 0, hi: int = -1) -> int:
    """``bisect.bisect_left`` written out (CPython's loop), for the compiled walks (``hi`` < 0: len(a))."""
    if hi < 0:
        hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if a[mid] < v:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _compiled_bisect_right(a: Buffer, v: float) -> int:
    """``bisect.bisect_right`` written out (CPython's loop), for the compiled walks."""
    lo = 0
    hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if v < a[mid]:
            hi = mid
        else:
            lo = mid + 1
    return lo


COMPILE_STEPS = 300_000
"""Lines a process walks in the interpreter (about 0.2 s) before it loads the compiled walks."""


def _warm(functions: jit.Functions) -> None:
    """Both walks on a tiny input, compiled (Numba compiles or loads them at the first call)."""
    lines = np.array([-2.0, -1.0, 0.0]), np.array([1.0, 0.9, 0.0])
    functions["hull_walk"](*lines, np.zeros(3, dtype=np.int64))
    x, y = np.array([0.0, 0.2, 0.5, 1.0]), np.array([1.0, 0.5, 0.2, 0.0])
    slope = np.diff(y) / np.diff(x)
    functions["thin_walk"](x, y, -y, slope, y[:-1] - slope * x[:-1], 3, 1e-6, np.zeros(4), np.zeros(4))
    a = np.array([2.0, 0.5])
    functions["corner_rises"](x, y, a, 1.0 - a / 4, a, a / 4, np.zeros(3), np.zeros(2))


LOOPS = jit.Loops(globals(), ("crossing", "fits", "hull_walk", "thin_walk", "_gallop_left", "corner_rises"),
                  threshold=COMPILE_STEPS,
                  what="the region walks", warm=_warm,
                  replaced={"_bisect_left": _compiled_bisect_left, "_bisect_right": _compiled_bisect_right})


def hull(slopes: NDArray[np.float64], intercepts: NDArray[np.float64]) -> NDArray[np.int64]:
    """``hull_walk`` on lines sorted by strictly increasing slope: the indices of the envelope's lines."""
    n = slopes.size
    functions, compiled = LOOPS.pick(n)
    if compiled:
        buffer = np.zeros(n, dtype=np.int64)
        m = functions["hull_walk"](slopes, intercepts, buffer)
        return buffer[:m]
    listed: list[int] = [0] * n
    m = functions["hull_walk"](slopes.tolist(), intercepts.tolist(), listed)
    return np.asarray(listed[:m], dtype=np.int64)


def thinned(x: NDArray[np.float64], y: NDArray[np.float64], tolerance: float
            ) -> tuple[NDArray[np.float64], NDArray[np.float64], float]:
    """``thin_walk`` on the polyline (x, y) (strictly increasing x, convex, non-increasing y):
    the thinned vertices and the largest gap."""
    n = x.size - 1
    slope = np.diff(y) / np.diff(x)
    icpt = y[:-1] - slope * x[:-1]
    functions, compiled = LOOPS.pick(n)
    if compiled:
        xs, ys = np.zeros(n + 1), np.zeros(n + 1)
        m, worst = functions["thin_walk"](x, y, -y, slope, icpt, n, tolerance, xs, ys)
        return xs[:m], ys[:m], float(worst)
    xl, yl = x.tolist(), y.tolist()
    out_x, out_y = [0.0] * (n + 1), [0.0] * (n + 1)
    m, worst = functions["thin_walk"](xl, yl, (-y).tolist(), slope.tolist(), icpt.tolist(), n, tolerance,
                                      out_x, out_y)
    return np.asarray(out_x[:m]), np.asarray(out_y[:m]), float(worst)
