"""The atoms of the k-fold canonical (ε0, δ0) pair (KOV eq. 16, Thm 3.3): given no A-outcome, the
count l of "low" outcomes is Binomial(k, 1/(1 + e^{ε0})) and the loss (k − 2l)ε0; the weights in log
space (Loader, docs/MATH.md §10.2), several k in one pass.

Binomial tails. Atoms whose P-mass is below e^{``TAIL_LOG_MASS``} (≈ 1e−348, below every
double) are not stored one by one: each tail is lumped into a single atom of *larger* loss
(the upper tail at the largest loss kε0, the lower tail into the lowest kept atom) with a
mass that bounds the tail's from above. δ(ε) = P(L=∞) + E[(1 − e^{ε−L})_+] only grows when
P-mass moves to a larger loss or grows (the lumped pair is one the true pair is a
post-processing of), so the result stays sound, and it differs from the full sum by less
than e^{−780}. Memory and time then grow like √k, not k: ≈ 40√k atoms (126,000 at k = 10^7).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

from dpviz.numerics import bisect_int, log_binom_pmf, log_binom_pmf_runs, softplus


def away_from_zero(loss: NDArray[np.float64]) -> NDArray[np.float64]:
    """Each nonzero loss one ulp further from 0 (a larger |L| only increases δ(ε))."""
    return np.where(loss == 0.0, 0.0, np.nextafter(loss, np.copysign(np.inf, loss)))


TAIL_LOG_MASS = -800.0
"""Binomial atoms with ln P-mass below this are lumped (module docstring)."""


def binomial_log_weights(k: int, eps0: float,
                         l_idx: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """ln [C(k, l) e^{(k−l)ε0} / (1 + e^{ε0})^k] for l in ``l_idx`` (default 0..k): the law of
    the number of "low" outcomes among k canonical pairs (KOV eq. 16), each low with
    probability 1/(1 + e^{ε0}).

    Loader's saddle-point form keeps ~1e-13 relative accuracy at k = 10^6, where
    log-gamma differences would lose 2e-9.
    """
    log_low = -float(softplus(eps0))
    log_high = eps0 - float(softplus(eps0))
    x = np.arange(k + 1, dtype=float) if l_idx is None else np.asarray(l_idx, dtype=float)
    return log_binom_pmf(k, x, log_p=log_low, log_q=log_high)


_SCALAR_SLACK = 1e-9
"""A scalar weight this close (relative) to the threshold is recomputed by ``binomial_log_weights``."""


def _stirlerr_series(n: float) -> float:
    """Stirling remainder ln n! − ln(√(2πn)(n/e)^n) for n > 15 (the series of ``numerics``)."""
    n2 = n * n
    s0, s1, s2, s3, s4 = 1 / 12, 1 / 360, 1 / 1260, 1 / 1680, 1 / 1188
    return (s0 - (s1 - (s2 - (s3 - s4 / n2) / n2) / n2) / n2) / n


def _bd0_scalar(x: float, np_: float) -> float:
    """x ln(x/np) + np − x (Loader's deviance term, series where x ≈ np), one value."""
    if abs(x - np_) >= 0.1 * (x + np_):
        return x * math.log(x / np_) + np_ - x
    v = (x - np_) / (x + np_)
    s = (x - np_) * v
    ej = 2.0 * x * v
    v2 = v * v
    for j in range(1, 20):
        ej *= v2
        term = ej / (2 * j + 1)
        s += term
        if abs(term) <= 1e-17 * abs(s):
            break
    return s


def _weight_fn(k: int, eps0: float) -> Callable[[int], float]:
    """l ↦ ln weight of ``binomial_log_weights`` for one index, as plain floats (≈ 3 µs instead of
    ≈ 300 µs of numpy calls on a one-element array; equal to it up to rounding)."""
    log_low = -float(softplus(eps0))
    log_high = eps0 - float(softplus(eps0))
    np_, nq = k * math.exp(log_low), k * math.exp(log_high)
    st_k = _stirlerr_series(float(k)) if k > 15 else 0.0

    def w(index: int) -> float:
        if index == 0:  # C(k, 0) = 1: the array route's own product ``n * log_q``, the same float
            return k * log_high
        if index == k:  # C(k, k) = 1: ``n * log_p``
            return k * log_low
        if index <= 15 or k - index <= 15:  # table values of the Stirling remainder: exact route
            return float(binomial_log_weights(k, eps0, np.array([float(index)]))[0])
        x, y = float(index), float(k - index)
        lc = (st_k - _stirlerr_series(x) - _stirlerr_series(y) - _bd0_scalar(x, np_) - _bd0_scalar(y, nq))
        return lc + 0.5 * math.log(k / (2 * math.pi * x * y))
    return w


@lru_cache(maxsize=256)
def binomial_window(k: int, eps0: float) -> tuple[int, int]:
    """(lo, hi): the indices l with ln weight ≥ ``TAIL_LOG_MASS`` are exactly lo..hi.

    The binomial is log-concave, so that set is an interval around the mode; each end is
    found by bisection on single weights (≈ 50 evaluations, no array of size k). Each weight is
    computed with scalar floats; one within ``_SCALAR_SLACK`` of the threshold, where rounding
    could decide the comparison, is recomputed by ``binomial_log_weights``, so every comparison
    (and the window) is the one the array weights give.
    """
    fast = _weight_fn(k, eps0)

    def w(index: int) -> float:
        value = fast(index)
        if abs(value - TAIL_LOG_MASS) <= _SCALAR_SLACK * abs(TAIL_LOG_MASS):
            return float(binomial_log_weights(k, eps0, np.array([float(index)]))[0])
        return value

    mode = min(k, max(0, int((k + 1) / (1.0 + math.exp(eps0)))))
    lo = 0
    if w(0) < TAIL_LOG_MASS:  # first l in (0, mode] above the threshold
        lo = bisect_int(lambda i: w(i) < TAIL_LOG_MASS, 0, mode)[1]
    hi = k
    if w(k) < TAIL_LOG_MASS:  # last l in [mode, k) above the threshold
        hi = bisect_int(lambda i: w(i) >= TAIL_LOG_MASS, mode, k)[0]
    return lo, hi


def binomial_atom_count(k: int, eps0: float) -> int:
    """Number of atoms ``binomial_atoms`` stores: the window plus the upper lump."""
    lo, hi = binomial_window(k, eps0)
    return hi - lo + 1 + int(lo > 0)


def binomial_atoms(k: int, eps0: float, *, above: float | None = None
                   ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(loss, ln P-mass) of the k-fold canonical pair given no A outcome, sorted by decreasing
    loss, with the negligible tails lumped soundly (module docstring).

    Upper tail l < lo: mass ≤ lo·w_{lo−1} (the weights increase up to the mode), put at the
    largest loss kε0. Lower tail l > hi: mass ≤ (k − hi)·w_{hi+1}, added to atom hi (its loss
    is larger than theirs).

    ``above``: only the atoms with loss > ``above`` (all that δ(ε) for ε ≥ ``above`` sums; each
    kept atom is the same number as in the full set).
    """
    return binomial_atoms_many([k], eps0, above=above)[0]


def binomial_atoms_many(ks: Sequence[int], eps0: float, *, above: float | None = None
                        ) -> list[tuple[NDArray[np.float64], NDArray[np.float64]]]:
    """:func:`binomial_atoms` for each k at one ε0: the weights of every k, and of its lumped tails'
    edges, in one ``log_binom_pmf_runs`` call (the floats of one call per k: an ε-against-k curve
    builds 49 sets, each of them once a few numpy calls on a few hundred atoms)."""
    log_low = -float(softplus(eps0))
    log_high = eps0 - float(softplus(eps0))
    plans, xs = [], []
    for k in ks:
        lo, hi = binomial_window(k, eps0)
        l_idx = np.arange(lo, hi + 1, dtype=float)
        # floating-point rounding of (k − 2l)ε0 can never make δ too small
        loss = away_from_zero((k - 2.0 * l_idx) * eps0)
        whole = True
        if above is not None:
            kept = int(np.searchsorted(-loss, -above, side="left"))  # loss decreases with l
            whole = kept == loss.size
            l_idx, loss = l_idx[:kept], loss[:kept]
        below = hi < k and whole
        edges = [hi + 1.0] if below else []  # the lumped tails' edge weights (module docstring)
        edges += [lo - 1.0] if lo > 0 else []
        plans.append((k, lo, hi, loss, l_idx.size, below))
        xs += [l_idx, np.array(edges)]
    lengths = [x.size for x in xs]
    weights = log_binom_pmf_runs([k for k in ks for _ in (0, 1)], np.concatenate(xs), lengths,
                                 log_p=log_low, log_q=log_high)
    out = []
    at = 0
    for (k, lo, hi, loss, size, below), n_edges in zip(plans, lengths[1::2], strict=True):
        log_w = weights[at:at + size].copy()
        edge_w = weights[at + size:at + size + n_edges].tolist()
        at += size + n_edges
        if below:
            log_w[-1] = np.logaddexp(log_w[-1], edge_w.pop(0) + math.log(k - hi))
        if lo > 0:
            loss = np.concatenate([away_from_zero(np.array([k * eps0])), loss])
            log_w = np.concatenate([[edge_w.pop(0) + math.log(lo)], log_w])
        out.append((loss, log_w))
    return out
