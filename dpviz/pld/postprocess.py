"""The optimistic (lower) discretisation as a *post-processing* of the mechanism.

Soundness. Let a map send each outcome x, using only its privacy loss L(x) and coins drawn
independently of the hypothesis, to a symbol. Under P and under Q the symbols have laws P', Q'
(the images of P and Q): a post-processing, so by the data-processing inequality δ'(ε) ≤ δ(ε) for
every ε, and the k-fold products of such maps are post-processings of the composed mechanism
(Steinke, seed 001, Prop. 7 and Thm 9), so every composed δ' is below the composed δ too.
Storing a symbol as P'-mass at a loss ℓ ≤ ln P'/Q' (implicit Q'' = P'e^{−ℓ} ≥ Q') only lowers δ
further (more Q-mass lowers Σ(P − e^ε Q)_+). The stored grid is therefore a lower bound.

Construction (ε-lattice h·ℤ, half-cells (jh/2, (j+1)h/2]). Symbol m is, by default, the window
((m − ½)h, (m + ½)h] around the lattice point m·h: its balance X_m = Σ (P − e^{mh}Q) = P' − e^{mh}Q'
is ≥ 0 iff its loss is ≥ m·h. Scanning down from the top, each symbol first takes what is left
above m·h (pieces of positive balance), then pieces below m·h (negative balance) while its
balance stays ≥ η·P' (the last piece in the fraction that brings it to η·P', a random split),
so every symbol has loss m·h up to the margin η (round-off in the cell masses). Where the pieces
below run out the balance stays positive (the symbol's loss is above m·h; stored at m·h: sound).
Atoms exactly on a lattice point are symbols of their own, exact. Mass below the grid is dropped,
mass above the grid joins the top symbol.

Accuracy. Unlike lowering each cell's chord (first order in the per-step curvature, accumulating
linearly over k steps), each symbol keeps its P- and Q-mass and sits at its true loss; the map
only merges outcomes within about h of each other, so the composed error is second order in h,
like the pessimistic connect-the-dots grid (Doroshenko et al., "Connect the dots"), which
*spreads* each cell to its two ends where this map *merges* neighbouring half-cells.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpviz.pld import scan
from dpviz.pld.law import LossLaw

MARGIN = 1e-13
"""Relative safety margin of each balance, in units of the piece's P-mass, on top of the piece's
computed round-off (``HalfCells.noise``). It was 1e-9 alone: each balanced symbol then sat 1e-9 above
its lattice point, a loss the lower end kept at every step (10^6 steps: ε lower by ≈ 1e-3), while
in far tails at fine h, where a cell's mass is a small difference of tails, 1e-9 could be too small."""

TAIL_RTOL = 1e-14
"""Relative accuracy assumed of a law's tail functions (as ``discretize._TAIL_RTOL``)."""

_U = 2.0**-53

_Q_RELIABLE = 1e-290
_ULPS = 8 * np.finfo(float).eps
_ON_GRID = 1e-9


def atom_slack(p: NDArray[np.float64], q: NDArray[np.float64], t: NDArray[np.float64],
               h: float) -> NDArray[np.float64]:
    """How far (in units of h) an atom at t = loss/h may sit on the unsound side of a grid point and
    still count as on it: the round-off of its loss. A loss ln p − ln q (e.g. replace-one's
    lp − lq) is computed with an absolute error of a few u·(|ln p| + |ln q|), not u·|loss| (review
    R3: geometric replace-one q = 1 lost a whole step of its heavy atom, [0.0556, 0.1031] for the
    exact 0.1031); 64 u of that, and at least 8 u·max(1, |t|), at most ``_ON_GRID``·max(1, |t|)."""
    scale = np.maximum(1.0, np.abs(t))
    with np.errstate(divide="ignore", over="ignore"):  # a denormal h: +inf, capped below
        logs = np.abs(np.log(np.where(p > 0, p, 1.0))) + np.abs(np.log(np.where(q > 0, q, 1.0)))
        own = 64.0 * np.finfo(float).eps / 2.0 * logs / h
    return np.minimum(np.maximum(_ULPS * scale, own), _ON_GRID * scale)


def half_cell_terms(law: LossLaw, h: float, i_lo: int, i_hi: int, offset: float = 0.0) -> HalfCells:
    """Terms of the half-cells (jh/2, (j+1)h/2], j = 2·i_lo .. 2·i_hi − 1, plus the cell above the
    top point (j = last): P-mass, B = P − e^{ε_j}Q ≥ 0 (ε_j = jh/2, its lower end), |A| =
    e^{ε_j + h/2}Q − P ≥ 0 (its upper end) and B2 = P − e^{ε_j − h/2}Q ≥ 0 (the lattice point below
    an upper half-cell); and the P-mass of atoms exactly on lattice points i_lo..i_hi.

    Where a Q-mass is too small to be precise, B = B2 = 0 and |A| = ∞ (such a half-cell is only
    ever moved down, never counted on to balance)."""
    g = h / 2.0
    j = np.arange(2 * i_lo, 2 * i_hi + 1)  # the last entry is the cell above the grid
    eps: NDArray[np.float64] = np.asarray(j * g + offset, dtype=np.float64)
    n = j.size
    pc = np.zeros(n)
    b = np.zeros(n)
    a = np.zeros(n)
    b2 = np.zeros(n)
    a2 = np.zeros(n)
    qh = np.zeros(n)
    ok = np.ones(n, dtype=bool)
    on_p = np.zeros(i_hi - i_lo + 1)
    tp = np.zeros(n)  # the tails the continuous masses were computed from (their round-off)
    tq = np.zeros(n)
    c = law.continuous
    if c is not None:
        pcc = np.zeros(n)
        qcc = np.zeros(n)
        pcc[:-1], tp[:-1], _cdf, sf_p_top = c.cell_masses_ends(eps, side="p")
        qcc[:-1], tq[:-1], _cdf, sf_q_top = c.cell_masses_ends(eps, side="q")
        if eps[-1] < c.hi:
            if eps[-1] < c.lo:  # the whole continuous part is above the grid
                top = np.array([c.lo])
                sf_p_top, sf_q_top = float(c.sf_p(top)[0]), float(c.sf_q(top)[0])
            pcc[-1] = tp[-1] = sf_p_top  # the tails at eps[-1] as read for the cells
            qcc[-1] = tq[-1] = sf_q_top
        reliable = (qcc >= _Q_RELIABLE) | (pcc == 0.0)
        log_q = np.log(qcc, out=np.full_like(qcc, -np.inf), where=qcc > 0)
        pc += pcc
        qh += qcc
        ok &= reliable
        b += np.where(reliable, np.maximum(pcc - np.exp(np.minimum(eps + log_q, 700.0)), 0.0), 0.0)
        b2 += np.where(reliable, np.maximum(pcc - np.exp(np.minimum(eps - g + log_q, 700.0)), 0.0), 0.0)
        a += np.where(reliable, np.maximum(np.exp(np.minimum(eps + g + log_q, 700.0)) - pcc, 0.0), np.inf)
        a2 += np.where(reliable, np.maximum(np.exp(np.minimum(eps + h + log_q, 700.0)) - pcc, 0.0), np.inf)
    a[-1] = 0.0
    if law.loss.size:
        keep = law.p > 0
        loss, p = law.loss[keep], law.p[keep]
        t = (loss - offset) / h
        d = t - np.round(t)
        scale = np.maximum(1.0, np.abs(t))
        on = (d >= -atom_slack(p, law.q[keep], t, h)) & (d <= _ON_GRID * scale)
        pos = np.round(t[on]).astype(np.int64) - i_lo
        inside = (pos >= 0) & (pos < on_p.size)
        np.add.at(on_p, pos[inside], p[on][inside])
        on_p[-1] += float(p[on][pos >= on_p.size].sum())  # above the grid: lowered to the top point
        off = ~on
        cell = np.floor((loss[off] - offset) / g).astype(np.int64) - 2 * i_lo
        kept = cell >= 0  # below the grid: dropped
        cell, lo_, p_ = np.minimum(cell[kept], n - 1), loss[off][kept], p[off][kept]
        base = eps[cell]  # ≤ ℓ
        np.add.at(pc, cell, p_)
        np.add.at(qh, cell, law.q[keep][off][kept])
        np.add.at(b, cell, -p_ * np.expm1(base - lo_))
        np.add.at(b2, cell, -p_ * np.expm1(base - g - lo_))
        with np.errstate(over="ignore"):  # e^{g} overflows for huge h: +inf, as for unreliable cells
            np.add.at(a, cell, np.where(cell == n - 1, 0.0, p_ * np.expm1(base + g - lo_)))
            np.add.at(a2, cell, np.where(cell == n - 1, 0.0, p_ * np.expm1(base + h - lo_)))
    lq = np.log(qh, out=np.full_like(qh, -np.inf), where=qh > 0)
    # round-off of a piece's balance P − e^{v}Q (module docstring): P and Q are differences of tails,
    # off by ≤ r·(2T + mass); the exponential and the logarithm add a few u·(|v| + |ln Q|) relative
    ulp = 8.0 * _U * (3.0 + np.abs(eps) + h + np.abs(np.where(np.isfinite(lq), lq, 0.0)))
    noise_p = TAIL_RTOL * (2.0 * tp + pc) + ulp * pc
    with np.errstate(divide="ignore"):
        log_noise_q = np.log(TAIL_RTOL * (2.0 * tq + qh) + ulp * qh)
    noise = noise_p + np.exp(np.minimum(eps + h + log_noise_q, 700.0))  # at v = ε_j + h, the largest
    return HalfCells(g=g, lo=i_lo, offset=offset, p=pc, b=b, a=a, b2=b2, a2=a2,
                     log_q=np.where(ok, lq, np.nan), on_p=on_p, noise=noise, noise_p=noise_p,
                     log_noise_q=log_noise_q)


@dataclass(frozen=True)
class HalfCells:
    """The terms of ``half_cell_terms`` (``log_q`` NaN where the Q-mass is imprecise)."""

    g: float
    lo: int
    offset: float
    p: NDArray[np.float64]
    b: NDArray[np.float64]
    a: NDArray[np.float64]
    b2: NDArray[np.float64]
    a2: NDArray[np.float64]
    log_q: NDArray[np.float64]
    on_p: NDArray[np.float64]
    noise: NDArray[np.float64]
    """Bound on the round-off of each piece's balance P − e^{v}Q for v ≤ ε_j + h (its lower end + h)."""
    noise_p: NDArray[np.float64]
    log_noise_q: NDArray[np.float64]
    """The same for any v: noise_p + e^{v + log_noise_q}."""


def windowed_masses(cells: HalfCells, margin: float = MARGIN, *,
                    upward: bool | None = None) -> NDArray[np.float64]:
    """P'-masses at the lattice points from the half-cell terms (module docstring).

    The symbols are formed in one scan over the lattice, from the top down (``scan.downward``) or from
    the bottom up (``scan.upward``); a scan ends where pieces may be left unbalanced, so it runs towards the
    lighter end of the law (``upward`` None: chosen by ``scan_upward``). Both are sound; they differ
    only in where the last, unbalanced symbol falls (docs/MATH.md §16)."""
    if upward is None:
        upward = scan_upward(cells)
    terms = (cells.p, cells.b, cells.a, cells.b2, cells.a2, cells.log_q, cells.noise, cells.noise_p,
             cells.log_noise_q)
    return scan.masses(terms, cells.lo, cells.offset, cells.g, margin, cells.on_p, upward=upward)


def scan_upward(cells: HalfCells) -> bool:
    """True when the lowest occupied half-cells hold more P-mass than the highest: the scan should end
    at the top. A Poisson-subsampled law (remove direction) has a density spike at its lowest loss
    ln(1 − q); a top-down scan left the spike's mass stored up to h below its loss (q = 1e-4, σ = 1:
    implicit Q-mass 3e-8 too large per step, ε lower by 0.012 after 10^6 steps)."""
    nz = np.flatnonzero(cells.p)
    if nz.size < 4:
        return False
    return float(cells.p[nz[:2]].sum()) > float(cells.p[nz[-2:]].sum())
