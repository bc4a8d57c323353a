"""Loader's binomial weights as ``dpviz.numerics`` computed them before several n were taken in one
pass (``log_binom_pmf_runs``, issue 20), kept verbatim: the reference the new pass must equal bit
for bit (tests/composition/test_atom_searches.py). The Stirling remainder is unchanged and shared."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.numerics import _stirlerr


def bd0(x: NDArray[np.float64], np_: float) -> NDArray[np.float64]:
    x = np.asarray(x, dtype=float)
    out = x * np.log(x / np_) + np_ - x
    near = np.abs(x - np_) < 0.1 * (x + np_)
    if near.any():
        xn = x[near]
        v = (xn - np_) / (xn + np_)
        s = (xn - np_) * v
        ej = 2.0 * xn * v
        v2 = v * v
        for j in range(1, 20):
            ej = ej * v2
            term = ej / (2 * j + 1)
            s = s + term
            if np.all(np.abs(term) <= 1e-17 * np.abs(s)):
                break
        out[near] = s
    return out


def log_binom_pmf(n: int, x: ArrayLike, *, log_p: float, log_q: float) -> NDArray[np.float64]:
    x = np.asarray(x, dtype=float)
    p, q = np.exp(log_p), np.exp(log_q)
    out = np.empty_like(x)
    lo, hi = x == 0, x == n
    out[lo] = n * log_q
    out[hi] = n * log_p
    mid = ~(lo | hi)
    xm = x[mid]
    lc = (_stirlerr(np.array([float(n)]))[0] - _stirlerr(xm) - _stirlerr(n - xm)
          - bd0(xm, n * p) - bd0(n - xm, n * q))
    out[mid] = lc + 0.5 * np.log(n / (2 * np.pi * xm * (n - xm)))
    return out
