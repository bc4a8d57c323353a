"""Numerical helpers, each written once: log-space sums and binomials, ln(2^k − 1), bisection,
the lower convex hull.

Every module that needs one of these imports it from here (issue 11 item 4): a fix or a
speed-up then reaches every caller. Conventions: docs/MATH.md §10 (log space, Loader's binomial
weights, rounding directions, solving ε(δ)).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

__all__ = ["bisect_float", "bisect_int", "log1mexp", "log_binom_pmf", "log_binom_pmf_runs", "log_comb",
           "log_pow2_minus_1", "logaddexp_float", "logsumexp", "logsumexp_rows", "lower_hull", "round_up",
           "round_up_array", "softplus"]

LN2 = float(np.log(2.0))

ROUND_ULPS = 16.0 * 2.0**-52
"""Relative rounding allowance of a short float formula (a few logs, roots, products and sums)."""
_SUBNORMAL_STEPS = 4
"""Steps of the smallest subnormal added on top: below 2^-1022 each rounding loses up to half of
2^-1074 in absolute terms, which no relative allowance covers (docs/MATH.md §10)."""


def round_up(v: float) -> float:
    """A float formula's value raised past its rounding error, so that an upper bound whose exact
    value is positive is never reported as 0 or below its exact value (a subnormal ε0 has
    ε0² = 0 in floating point); ∞ and NaN pass through."""
    if not math.isfinite(v):
        return v
    w = v + ROUND_ULPS * abs(v)
    for _ in range(_SUBNORMAL_STEPS):
        w = math.nextafter(w, math.inf)
    return w


def round_up_array(v: ArrayLike) -> NDArray[np.float64]:
    """:func:`round_up` entry by entry."""
    w = np.asarray(v, dtype=float)
    w = w + ROUND_ULPS * np.abs(w)
    for _ in range(_SUBNORMAL_STEPS):
        w = np.nextafter(w, np.inf)
    return w


def logsumexp(a: ArrayLike) -> float:
    """ln Σ e^a over all entries (:func:`logsumexp_rows`: one value per row)."""
    out = _logsumexp(a, None)
    return out if isinstance(out, float) else float(out)


def logsumexp_rows(a: ArrayLike) -> NDArray[np.float64]:
    """ln Σ e^a along the last axis: one value per row."""
    out = _logsumexp(a, -1)
    return np.asarray(out, dtype=float)


def _logsumexp(a: ArrayLike, axis: int | None) -> NDArray[np.float64] | float:
    """ln Σ e^a over ``axis`` (all entries when ``None``), as ``scipy.special.logsumexp`` computes
    it step for step in SciPy 1.17 (the largest terms set apart, log1p of the rest; the direct
    ln Σ e^a where that is not finite), so results are bit-identical — without SciPy's ~0.2 ms of
    dispatch per call, which a page's thousands of calls paid (issue 10 item 8)."""
    x = np.asarray(a, dtype=float)
    if x.ndim == 0:
        x = x.reshape(1)
    if x.ndim == 1 and axis is None and x.size:  # the common case, without keepdims
        x_max = float(x.max())
        if x_max == -math.inf:
            return -math.inf
        if math.isfinite(x_max):  # no warning can arise: every shifted term is ≤ 0
            top = x == x_max
            m = float(np.count_nonzero(top))
            s = float(np.exp(np.where(top, -np.inf, x) - x_max).sum())
            s = s if s == 0 else s / m
            out1 = float(np.log1p(s) + np.log(m) + x_max)  # numpy's logs, as SciPy's (math.log may differ)
            if math.isfinite(out1):
                return out1
    ax = tuple(range(x.ndim)) if axis is None else axis
    if x.size == 0:
        out = np.full(np.max(x, axis=ax, keepdims=True, initial=-np.inf).shape, -np.inf)
    else:
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            x_max = np.max(x, axis=ax, keepdims=True)
            top = x == x_max
            m = np.sum(top, axis=ax, keepdims=True, dtype=float)
            s = np.sum(np.exp(np.where(top, -np.inf, x) - x_max), axis=ax, keepdims=True)
            s = np.where(s == 0, s, s / m)
            out = np.log1p(s) + np.log(m) + x_max
            bad = ~np.isfinite(out)
            if bad.any():  # infinite or NaN terms: the direct sum decides, as in SciPy
                out = np.where(bad, np.log(np.sum(np.exp(x), axis=ax, keepdims=True)), out)
    out = np.squeeze(out, axis=ax)
    return float(out) if axis is None else out


def log_pow2_minus_1(k: float) -> float:
    """ln(2^k − 1) for k > 0, without overflow (the normaliser of U(B ∖ {0⃗}), HBW §V-B)."""
    return k * LN2 + float(log1mexp(-k * LN2))


def bisect_float(above: Callable[[float], bool], lo: float, hi: float, *, rtol: float,
                 scale_floor: float) -> tuple[float, float]:
    """Shrink [lo, hi] with ``above(lo)`` true and ``above(hi)`` false (a monotone predicate, e.g.
    δ(ε) > target) until hi − lo ≤ rtol · max(hi, scale_floor). The two ends stay a certified
    bracket: the caller picks the end on its safe side. It also stops when no float lies strictly
    between the ends: for |hi| beyond about 450 one ulp exceeds 1e-13 · max(hi, 1), and a bracket
    below 0 never meets a relative tolerance, so the tolerance alone could loop forever."""
    while hi - lo > rtol * max(hi, scale_floor):
        mid = 0.5 * (lo + hi)
        if not lo < mid < hi:  # adjacent floats: the bracket cannot shrink further
            break
        if above(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def bisect_int(above: Callable[[int], bool], lo: int, hi: int) -> tuple[int, int]:
    """Integers lo < hi with ``above(lo)`` true and ``above(hi)`` false (monotone predicate,
    neither end evaluated): shrink to hi = lo + 1, the last index above and the first not."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if above(mid):
            lo = mid
        else:
            hi = mid
    return lo, hi


def lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> NDArray[np.int64]:
    """Indices of the lower convex hull of points sorted by x (Andrew's monotone chain); a
    point on or above the segment of its neighbours is dropped."""
    hull: list[int] = []
    xs, ys = np.asarray(x, dtype=float).tolist(), np.asarray(y, dtype=float).tolist()
    for i in range(len(xs)):
        while len(hull) >= 2:
            a, b = hull[-2], hull[-1]
            if (ys[b] - ys[a]) * (xs[i] - xs[a]) >= (ys[i] - ys[a]) * (xs[b] - xs[a]):
                hull.pop()
            else:
                break
        hull.append(i)
    return np.asarray(hull, dtype=np.int64)


def log_comb(n: ArrayLike, k: ArrayLike) -> NDArray[np.float64]:
    """ln C(n, k) via log-gamma; exact to ~1e-15 relative, no overflow."""
    # imported here, not at the top: scipy.special costs ~0.2 s of CPU at start-up, and most commands
    # (``dpviz compose``, ``--help``) never need it (issue 19 item 7; benchmarks/cli_startup.py)
    from scipy.special import gammaln

    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    return gammaln(n + 1.0) - gammaln(k + 1.0) - gammaln(n - k + 1.0)


def log1mexp(x: ArrayLike) -> NDArray[np.float64]:
    """ln(1 − e^x) for x ≤ 0, accurate for x near 0 and for x → −∞ (Mächler 2012)."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.where(x > -LN2, np.log(-np.expm1(x)), np.log1p(-np.exp(x)))


def logaddexp_float(x: float, y: float) -> float:
    """ln(e^x + e^y) of two floats, step for step numpy's ``npy_logaddexp`` (libm's exp and log1p;
    equal arguments, ±∞ and NaN alike), so an accumulation gives ``np.logaddexp.accumulate``'s floats.
    For the loops of ``dpviz.jit``, which compile it in their own module: its only global is ``math``."""
    if x == y:
        return x + 0.6931471805599453  # NPY_LOGE2: ln 2 rounded
    tmp = x - y
    if tmp > 0:
        return x + math.log1p(math.exp(-tmp))
    if tmp <= 0:
        return y + math.log1p(math.exp(tmp))
    return tmp  # NaN


def softplus(x: ArrayLike) -> NDArray[np.float64]:
    """ln(1 + e^x) without overflow."""
    return np.logaddexp(0.0, np.asarray(x, dtype=float))


# --- Binomial probabilities without cancellation (Loader 2000) ----------------------------
# ln C(n, x) + x ln p + (n − x) ln q through log-gamma cancels terms of size n ln n: at
# n = 10^5 that leaves ~1e-10 relative error in every weight, enough to make an "exact"
# ε(δ) unsound. Loader's saddle-point form writes the same number as a sum of small terms.

_STIRLERR_SMALL: NDArray[np.float64] | None = None


def _stirlerr(n: NDArray[np.float64]) -> NDArray[np.float64]:
    """δ(n) = ln n! − ln(√(2πn) (n/e)^n), the Stirling remainder (n ≥ 1)."""
    global _STIRLERR_SMALL
    if _STIRLERR_SMALL is None:
        m = np.arange(1, 16, dtype=float)
        log_factorial = np.array([math.log(math.factorial(int(j))) for j in m])  # ln m!, correctly rounded
        _STIRLERR_SMALL = log_factorial - (m + 0.5) * np.log(m) + m - 0.5 * np.log(2 * np.pi)
    n = np.asarray(n, dtype=float)
    n2 = n * n
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (s0 - (s1 - (s2 - (s3 - s4 / n2) / n2) / n2) / n2) / n  # series: exact enough past 15
    small = np.flatnonzero(n <= 15)
    out[small] = _STIRLERR_SMALL[n[small].astype(int) - 1]
    return out


def _bd0(x: NDArray[np.float64], np_: NDArray[np.float64], run: NDArray[np.int64]) -> NDArray[np.float64]:
    """x ln(x/np) + np − x, by its series where x ≈ np (Loader's deviance term), for the entries of
    several runs (``run``: each entry's run): a run's series stops once every term it adds is
    negligible, as one call per run stops."""
    out = x * np.log(x / np_) + np_ - x
    near = np.flatnonzero(np.abs(x - np_) < 0.1 * (x + np_))
    if near.size:
        xn, npn, runs = x[near], np_[near], run[near]
        v = (xn - npn) / (xn + npn)  # |v| < 0.1, so each term is ≥ 100× smaller than the last
        s = (xn - npn) * v
        ej = 2.0 * xn * v
        v2 = v * v
        going = np.ones(near.size, dtype=bool)
        size = int(runs.max()) + 1
        for j in range(1, 20):
            if size == 1:  # one run: all its entries go on together
                ej = ej * v2
                term = ej / (2 * j + 1)
                s = s + term
                if np.all(np.abs(term) <= 1e-17 * np.abs(s)):
                    break
                continue
            ej = np.where(going, ej * v2, ej)
            term = ej / (2 * j + 1)
            s = np.where(going, s + term, s)
            unfinished = going & ~(np.abs(term) <= 1e-17 * np.abs(s))
            going &= np.bincount(runs[unfinished], minlength=size)[runs] > 0  # while one of its terms counts
            if not going.any():
                break
        out[near] = s
    return out


def log_binom_pmf(n: int, x: ArrayLike, *, log_p: float, log_q: float) -> NDArray[np.float64]:
    """ln [C(n, x) p^x q^(n−x)] with p = e^log_p, q = e^log_q, p + q = 1, to ~1e-15 relative
    in the probability (Loader 2000, as in R's dbinom), for n up to 10^7."""
    x = np.asarray(x, dtype=float)
    return log_binom_pmf_runs([n], x.ravel(), [x.size], log_p=log_p, log_q=log_q).reshape(x.shape)


def log_binom_pmf_runs(ns: Sequence[int], x: ArrayLike, lengths: Sequence[int], *, log_p: float,
                       log_q: float) -> NDArray[np.float64]:
    """:func:`log_binom_pmf` for several n at once: the entries of ``x`` in consecutive runs of the
    given lengths, run i at n = ns[i] (each entry the float of its own call: elementwise steps, and
    each run's series of ``_bd0`` as long as its own)."""
    x = np.asarray(x, dtype=float)
    n_run = np.asarray(ns, dtype=float)  # exactly the integers (n ≤ 10^7)
    n = np.repeat(n_run, lengths)
    run = np.repeat(np.arange(n_run.size), lengths)
    p, q = np.exp(log_p), np.exp(log_q)
    out = np.empty_like(x)
    lo, hi = x == 0, x == n
    out[lo] = n[lo] * log_q
    out[hi] = n[hi] * log_p
    mid = ~(lo | hi)
    xm, nm, rm = x[mid], n[mid], run[mid]
    lc = (_stirlerr(n_run)[rm] - _stirlerr(xm) - _stirlerr(nm - xm)
          - _bd0(xm, nm * p, rm) - _bd0(nm - xm, nm * q, rm))
    out[mid] = lc + 0.5 * np.log(nm / (2 * np.pi * xm * (nm - xm)))
    return out
