"""The attack on a binned post-processing, sampled from its composed law (docs/MATH.md §14.5).

Drawing every step costs N·k draws (Laplace's middle steps, every subsampled step). Instead the
attacker first post-processes each step's output y to its *symbol* j(y): the window
((j − ½)h, (j + ½)h] that holds its loss L(y), the two end windows taking everything beyond them.
The symbol is a function of the output alone, so (P′, Q′), the laws of the symbol under the two
hypotheses, are a post-processing of the step's pair, and their cell masses are exact from the loss
law's tails (``LossLaw``: atoms plus the continuous part's sf/cdf under P and Q).

The attacker's statistic is T = Σ_i j_i, clipped: the k-fold law is built by repeated squaring, and
after each convolution the same index range is kept under both hypotheses, mass outside it moved
to its ends. The clipped nested sums are one function of the k symbols, the same under P and Q,
so T's two laws are exactly the composed arrays (up to floating point), and any threshold test on
T is a test on the mechanism's output: by the data-processing inequality its error rates lie in
the mechanism's privacy region, and the ε it certifies is a lower confidence bound of the
mechanism's ε. Trials are then index draws from the two composed pmfs — one draw per trial,
whatever k is. The statistic reported is h·T (≈ the loss sum, within kh/2).

Floating point: each cell mass is a difference of tails, off by at most r·(2·tail + mass) with
r = 1e-14 (docs/MATH.md §7.2); FFT products add ``dpviz.pld.fft.l1_error``; errors propagate as
err_{a∗b} ≤ err_a‖b‖₁ + err_b‖a‖₁ + err_a·err_b. ``law_error`` bounds the L1 distance between the
sampled pmf and T's true law, hence any rate of T by that much: ``curve.certify`` adds it to both
upper bounds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz.mechanisms.subsampling import subsample_remove
from dpviz.pld import fft
from dpviz.pld.law import LossLaw

TAIL = 1e-11
"""Mass (under either hypothesis) each clip may move to an end of the kept range."""

CELL_ROUND_OFF = 1e-14
"""r: relative round-off of a cell mass against the tail it is computed from (docs/MATH.md §7.2)."""

STEP_CELLS = 16
"""Windows across a step's loss support (before coarsening)."""

SD_CELLS = 32
"""At least this many windows per standard deviation of a step's loss (a subsampled step's loss is
mostly within q of 0, its support far wider)."""

MAX_STEP_CELLS = 1 << 16
"""Most windows of one step."""

MAX_BINS = 1 << 21
"""Most composed indices kept; h is doubled until the estimate fits."""

INDEX_SPAN = 2.0**32
"""h is at least the step's largest |loss| over this: every window index fits in 32 bits and a sum of
10^7 of them in 64 (a step whose loss is one point, 2.8e-17 for the canonical pair at ε0 = 1e-300
subsampled at q = 0.1, had h = 1.5e-305 and indices of 10^288)."""

DIRECT = 1 << 14
"""Products a·b up to this size are summed directly (no FFT round-off)."""


@dataclass(frozen=True)
class BinnedPair:
    """The symbol laws (P′, Q′) on indices lo … lo + size − 1 of windows of width h, with an L1
    round-off bound ``err`` for each."""

    h: float
    lo: int
    p: NDArray[np.float64]
    q: NDArray[np.float64]
    err_p: float
    err_q: float


def usable(law: LossLaw) -> bool:
    """Binning needs finite losses (mass at ±∞ makes T infinite; those laws keep their samplers)."""
    return law.p_inf == 0.0 and law.q_neg_inf == 0.0


def step_width(law: LossLaw, k: int, lattice: float | None = None) -> float:
    """h: ``STEP_CELLS`` windows across the step's support or ``SD_CELLS`` per standard deviation,
    whichever is finer (at most ``MAX_STEP_CELLS``, and no finer than ``INDEX_SPAN`` allows), a
    divisor of the atoms' ``lattice`` when given (atoms then sit at window centres), doubled until
    the k-fold range fits ``MAX_BINS``."""
    lo, hi = law.support(TAIL)
    width = max(hi - lo, 1e-300)
    mean_p, sd = _mean_sd(law)
    floor = max(abs(lo), abs(hi)) / INDEX_SPAN
    h = max(min(width / STEP_CELLS, sd / SD_CELLS), width / MAX_STEP_CELLS, floor)
    if lattice and lattice >= floor:
        h = lattice / max(1, math.ceil(lattice / h))
    # the kept range holds both k-fold laws, whose means are k·(E_P L − E_Q L) apart (the two KL
    # divergences): for Laplace ε0 = 20 at k = 2·10^5, 7.7·10^6 in loss, where the spread alone
    # gave a few thousand (the composition then ran for minutes on 10^8 bins)
    drift = k * max(mean_p - _mean_sd(law, side="q")[0], 0.0)
    while 2.0 * (30.0 * math.sqrt(k) * sd + width) / h + width / h + drift / h > MAX_BINS:
        h *= 2.0
    return h


def _mean_sd(law: LossLaw, side: str = "p") -> tuple[float, float]:
    """Mean and standard deviation of the loss under P (``side`` "p") or Q, from a fine quadrature
    of the tails."""
    lo, hi = law.support(TAIL)
    edges = np.linspace(lo, hi, 2049)
    mids = 0.5 * (edges[:-1] + edges[1:])
    m = np.zeros(mids.size)
    if law.continuous is not None:
        m = law.continuous.mass(edges[:-1], edges[1:], side=side)
    x = np.concatenate([mids, law.loss])
    w = np.concatenate([m, law.p if side == "p" else law.q])
    total = max(float(w.sum()), 1e-300)
    mean = float((w * x).sum() / total)
    return mean, math.sqrt(max(float((w * (x - mean) ** 2).sum() / total), 0.0))


def bin_law(law: LossLaw, h: float) -> BinnedPair:
    """The symbol laws of one step: window j = ((j − ½)h, (j + ½)h] of the loss, the end windows
    open outwards (everything below / above the support)."""
    lo_x, hi_x = law.support(TAIL)
    j_lo, j_hi = math.floor(lo_x / h + 0.5), math.ceil(hi_x / h - 0.5)
    if law.loss.size:
        j_lo = min(j_lo, int(np.min(symbols(law.loss, h))))
        j_hi = max(j_hi, int(np.max(symbols(law.loss, h))))
    j_hi = max(j_hi, j_lo + 1)
    idx = np.arange(j_lo, j_hi + 1)
    edges = (idx[:-1] + 0.5) * h  # upper edges of all but the top window
    a = np.concatenate([[-math.inf], edges])
    b = np.concatenate([edges, [math.inf]])
    p, q = np.zeros(idx.size), np.zeros(idx.size)
    err_p = err_q = 0.0
    c = law.continuous
    if c is not None:
        ca, cb = np.clip(a, c.lo, c.hi), np.clip(b, c.lo, c.hi)
        mp, tp = c.mass_and_tail(ca, cb, side="p")
        mq, tq = c.mass_and_tail(ca, cb, side="q")
        p += mp
        q += mq
        err_p = CELL_ROUND_OFF * float((2.0 * tp + mp).sum())
        err_q = CELL_ROUND_OFF * float((2.0 * tq + mq).sum())
    if law.loss.size:
        s = symbols(law.loss, h) - j_lo
        np.add.at(p, s, law.p)
        np.add.at(q, s, law.q)
        err_p += CELL_ROUND_OFF * float(law.p.sum())
        err_q += CELL_ROUND_OFF * float(law.q.sum())
    return BinnedPair(h=h, lo=j_lo, p=p, q=q, err_p=err_p, err_q=err_q)


def symbols(loss: NDArray[np.float64], h: float) -> NDArray[np.int64]:
    """The window index of each loss: j with (j − ½)h < L ≤ (j + ½)h."""
    return np.ceil(np.asarray(loss, dtype=float) / h - 0.5).astype(np.int64)


def _product(a: NDArray[np.float64], b: NDArray[np.float64], same: bool) -> tuple[NDArray[np.float64], float]:
    """a ∗ b and an L1 bound of its round-off (direct sums for small products)."""
    if a.size * b.size <= DIRECT or min(a.size, b.size) < 64:
        out = np.convolve(a, b)
        return out, 2.0 * min(a.size, b.size) * 2.0**-53 * float(out.sum())
    out = fft.convolve(a, b, same=same)
    return np.maximum(out, 0.0), fft.l1_error(out.size, a, b)


def _compose(x: BinnedPair, y: BinnedPair, same: bool) -> BinnedPair:
    """One product under both hypotheses, clipped to one common index range (module docstring)."""
    p, ep = _product(x.p, y.p, same)
    q, eq = _product(x.q, y.q, same)
    lo = x.lo + y.lo
    i0 = min(_cut_low(p), _cut_low(q))
    i1 = max(p.size - _cut_low(p[::-1]), q.size - _cut_low(q[::-1]), i0 + 1)
    p, q = _clip(p, i0, i1), _clip(q, i0, i1)
    tp, tq = float(x.p.sum()), float(x.q.sum())
    up, uq = float(y.p.sum()), float(y.q.sum())
    err_p = x.err_p * up + y.err_p * tp + x.err_p * y.err_p + ep
    err_q = x.err_q * uq + y.err_q * tq + x.err_q * y.err_q + eq
    return BinnedPair(h=x.h, lo=lo + i0, p=p, q=q, err_p=err_p, err_q=err_q)


def _cut_low(m: NDArray[np.float64]) -> int:
    """How many leading entries sum to at most ``TAIL``."""
    return min(int(np.searchsorted(np.cumsum(m), TAIL, side="right")), m.size - 1)


def _clip(m: NDArray[np.float64], i0: int, i1: int) -> NDArray[np.float64]:
    kept = m[i0:i1].copy()
    kept[0] += m[:i0].sum()
    kept[-1] += m[i1:].sum()
    return kept


def compose(step: BinnedPair, k: int) -> BinnedPair:
    """The clipped k-fold sum's laws by repeated squaring (module docstring)."""
    result: BinnedPair | None = None
    base, rest = step, k
    while True:
        if rest & 1:
            result = base if result is None else _compose(result, base, same=False)
        rest >>= 1
        if not rest:
            break
        base = _compose(base, base, same=True)
    assert result is not None
    return result


def composed_law(law: LossLaw, k: int, lattice: float | None = None) -> BinnedPair:
    """T's two laws for k steps of ``law`` (``step_width`` chooses h)."""
    return compose(bin_law(law, step_width(law, k, lattice)), k)


def law_of(mech: Any, *, sampling_rate: float | None) -> tuple[LossLaw, float | None] | None:
    """(one step's loss law, its atoms' lattice) where the binned route is used: every
    Poisson-subsampled mechanism (remove direction, as ``sampling.subsampled_step``) and a law of
    atoms on a lattice with a continuous part between (Laplace), when ``usable``; None elsewhere
    (their exact samplers already cost one draw per trial)."""
    if sampling_rate is not None:
        law, lattice = subsample_remove(mech.base.law, rate=sampling_rate), None
    elif mech.law.continuous is not None and mech.grid_unit is not None:
        law, lattice = mech.law, mech.grid_unit
    else:
        return None
    return (law, lattice) if usable(law) else None
