"""Discretise an exact loss law onto the grid h·ℤ, once pessimistically and once optimistically.

Let α = e^ε and δ(α) = Σ_x (P(x) − αQ(x))_+. For any measure pair δ is convex and
decreasing in α, with right slope −Q(L > ln α), and a measure whose atoms sit on the grid
has a δ-curve that is linear in α between grid points α_i = e^{ih}.

Pessimistic — *connect the dots*. The P-mass of each grid cell (ε_i, ε_{i+1}] (and of each
off-grid atom) is split between ε_i and ε_{i+1} so that the cell's P- and Q-mass are both
kept: b = (P_c − e^{ε_i} Q_c)/(1 − e^{−h}) at ε_{i+1}, P_c − b at ε_i. Each cell's curve is
then the chord of its convex curve between α_i and α_{i+1} and equal to it elsewhere, so
δ_pess(α) ≥ δ(α) for all α ≥ 0, with equality at grid points. Mass below the grid is raised
to its lowest point, mass above it goes to +∞ (both only increase δ).

Optimistic — *post-processing* (``dpviz.pld.postprocess``). Outcomes are mapped, by their loss
and independent coins, to lattice symbols whose loss is exactly (or at least) their lattice point;
the map is a post-processing, so the symbol pair's δ is below the law's for every ε and after any
composition (data-processing inequality). Mass below the grid is dropped, mass above it is
lowered onto the top grid point (both only decrease δ).

Both constructions are second order in h for smooth laws (errors ∝ h² after composition),
unlike rounding every loss up or down (error ∝ h per composition). Atoms exactly on the grid are kept
exactly, so randomized response, geometric, Laplace and canonical pairs with h | ε0 are
discretised without error.

Extreme inputs (issue 14). e^{ε_i}Q_c is computed in log space; where Q_c underflows or h is
too fine for the split to be resolved in floating point, the cell falls back to the first-order
split (all P-mass up for the pessimistic grid; the optimistic grid then rounds the cell down).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpviz.pld import postprocess
from dpviz.pld.grid import DEFAULT_TAIL, MAX_BINS, GridPLD
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError

_ON_GRID = 1e-9
"""Atoms within this relative distance of a grid point count as on it when that moves them the
sound way; the other way only within ``postprocess.atom_slack`` (their loss's round-off)."""

_TAIL_RTOL = 1e-14
"""Relative accuracy assumed of a law's tail functions (sf/cdf; ≈ 45 u, generous for scipy's)."""

_SPLIT_MARGIN = 1e-10
"""Fraction of each cell's P-mass moved up (pessimistic) or down (optimistic) beyond the exact
split, so that round-off in the split cannot act in the unsound direction."""


_Q_RELIABLE = 1e-290
"""Cell Q-masses below this (near the subnormal range) carry no relative precision: such a cell
is split the sound first-order way (all P-mass up, or all down) instead of by the exact chord."""

def grid_range(law: LossLaw, *, h: float, tail: float = DEFAULT_TAIL, offset: float = 0.0) -> tuple[int, int]:
    lo, hi = law.support(tail)
    a, b = (lo - offset) / h, (hi - offset) / h
    if not (math.isfinite(a) and math.isfinite(b)) or b - a > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough for at most {MAX_BINS:,} grid points "
                                     f"(this law spans losses {lo:.4g} to {hi:.4g})")
    return math.floor(a) - 1, math.ceil(b) + 1


def _cells(law: LossLaw, h: float, i_lo: int, i_hi: int, margin: float, offset: float = 0.0) -> tuple[
        NDArray[np.float64], NDArray[np.float64], NDArray[np.float64], NDArray[np.float64],
        NDArray[np.float64], float, float]:
    """Per-cell P- and Q-masses (open cells) and on-grid atom masses at grid points."""
    idx = np.arange(i_lo, i_hi + 1)
    eps: NDArray[np.float64] = np.asarray(idx * h + offset, dtype=np.float64)
    n = idx.size
    pc = np.zeros(n - 1)
    qc = np.zeros(n - 1)
    split_b = np.zeros(n - 1)  # P-mass the pessimistic split sends to the upper end of each cell
    on_p = np.zeros(n)
    below = above = 0.0
    c = law.continuous
    if c is not None:
        pc_c, tail_p, cdf_first, sf_last = c.cell_masses_ends(eps, side="p")
        qc_c, tail_q = c.cell_masses(eps, side="q")
        pc += pc_c
        qc += qc_c
        # ∫_cell (1 − e^{ε_i − ℓ}) dP = P_c − e^{ε_i} Q_c ∈ [0, P_c(1 − e^{−h})]; e^{ε_i} Q_c in log
        # space (e^{ε_i} overflows past 709 where Q_c underflows), and only where Q_c is precise
        reliable = qc >= _Q_RELIABLE
        log_qc = np.log(qc, out=np.full_like(qc, -np.inf), where=reliable)
        num = pc - np.exp(np.minimum(eps[:-1] + log_qc, 700.0))
        # the split's margin per cell (review R8): P_c and Q_c are differences of tails, so num is
        # off by ≈ r·(2T_p + P_c + e^{ε_i}(2T_q + Q_c)) (T = the tail used, r = _TAIL_RTOL), in
        # units of P_c(1 − e^{−h}); where that reaches 1 the exact split is meaningless: first order
        m = split_margin(pc_c, qc_c, tail_p, tail_q, eps[:-1], h, margin)
        fine = m < 1.0
        exact_b = np.clip(num / -math.expm1(-h) + np.copysign(np.where(fine, m, 0.0), margin) * pc, 0.0, pc)
        first_order = pc if margin > 0 else np.zeros_like(pc)
        split_b += np.where((reliable | (pc == 0)) & fine, exact_b, first_order)
        below += cdf_first  # c.cdf_p at eps[0] and c.sf_p at eps[-1], as read for the cells
        above += sf_last
    t = (law.loss - offset) / h
    # atoms beyond the grid (``LossLaw.support`` leaves out end atoms within the tail): below it
    # raised to its lowest point, above it to +∞ (the pessimistic grid: both only increase δ)
    inside = (t >= i_lo) & (t <= i_hi)
    if not np.all(inside):
        below += float(law.p[t < i_lo].sum())
        above += float(law.p[t > i_hi].sum())
        law_p, law_q, law_loss, t = law.p[inside], law.q[inside], law.loss[inside], t[inside]
    else:
        law_p, law_q, law_loss = law.p, law.q, law.loss
    # Atoms within _ON_GRID of a grid point count as on it only when that moves them the
    # sound way: up for the pessimistic grid (margin > 0), down for the optimistic one;
    # the other way only within the round-off of L (``postprocess.atom_slack``).
    d = t - np.round(t)
    scale = np.maximum(1.0, np.abs(t))
    wide, ulps = _ON_GRID * scale, postprocess.atom_slack(law_p, law_q, t, h)
    on = (d >= -wide) & (d <= ulps) if margin > 0 else (d >= -ulps) & (d <= wide)
    pos = np.round(t[on]).astype(np.int64) - i_lo
    np.add.at(on_p, pos, law_p[on])
    off = ~on
    if np.any(off):
        cell = np.floor(t[off]).astype(np.int64) - i_lo
        p_off = law_p[off]
        np.add.at(pc, cell, p_off)
        np.add.at(qc, cell, law_q[off])
        # the lower grid point (cell + i_lo)·h is rounded by ~u·|L|, which the split divides by h
        m_atom = _margin(margin, h, 4e-16 * (1.0 + float(np.abs(law_loss[off]).max())))
        if abs(m_atom) < 1.0:
            frac = np.clip(-np.expm1(eps[cell] - law_loss[off]) / -math.expm1(-h), 0.0, 1.0)
            np.add.at(split_b, cell, np.clip(frac * p_off + m_atom * p_off, 0.0, p_off))
        elif margin > 0:
            np.add.at(split_b, cell, p_off)
    return eps, pc, qc, split_b, on_p, below, above


def split_margin(pc: NDArray[np.float64], qc: NDArray[np.float64], tail_p: NDArray[np.float64],
                 tail_q: NDArray[np.float64], eps: NDArray[np.float64], h: float,
                 margin: float) -> NDArray[np.float64]:
    """|margin| of each cell's chord split (≥ 1: the split means nothing), from the tails its
    masses were computed from: P_c − e^{ε}Q_c is off by ≤ r·(2T_p + P_c + e^{ε}(2T_q + Q_c)),
    r = ``_TAIL_RTOL``, divided by P_c(1 − e^{−h}) (review R8; a margin of ~1e-14·P_c was up to
    5.5e3 times too small in the bulk of a Gaussian at h = 1e-5)."""
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        log_tq = np.log(2.0 * tail_q + qc)
        noise = _TAIL_RTOL * (2.0 * tail_p + pc + np.exp(np.minimum(eps + log_tq, 700.0)))
        m = np.where(pc > 0, noise / (pc * -math.expm1(-h)), np.inf)
    return np.maximum(m, abs(margin))


def _margin(margin: float, h: float, round_off: float) -> float:
    """The split margin, widened to cover ``round_off`` (an error in units of the cell's P-mass
    before division by 1 − e^{−h}); ≥ 1 in size means the exact split is meaningless at this h."""
    return math.copysign(max(abs(margin), round_off / -math.expm1(-h)), margin)


def pessimistic(law: LossLaw, *, h: float, tail: float = DEFAULT_TAIL, offset: float = 0.0) -> GridPLD:
    """Connect-the-dots upper bound (module docstring) on the grid h·ℤ + ``offset``."""
    i_lo, i_hi = _checked_range(law, h, tail, offset)
    _eps, pc, _qc, b, on_p, below, above = _cells(law, h, i_lo, i_hi, _SPLIT_MARGIN, offset)
    mass = on_p.copy()
    mass[:-1] += pc - b
    mass[1:] += b
    mass[0] += below
    # mass above the grid: to +∞, or for bounded losses to the largest loss (δ still only grows)
    return GridPLD(h=h, lo=i_lo, mass=mass, p_inf=law.p_inf + above, pessimistic=True,
                   top=_top(law, h, i_lo, mass, offset), offset=offset)


def _top(law: LossLaw, h: float, i_lo: int, mass: NDArray[np.float64], offset: float) -> float:
    """The loss of the mass above the grid: the law's largest loss (or +∞), at least the highest
    grid point holding mass (connect-the-dots moves some of a top cell's mass up to its end)."""
    nz = np.flatnonzero(mass)
    return max(law.max_loss(), (i_lo + int(nz[-1])) * h + offset if nz.size else -math.inf)


def optimistic(law: LossLaw, *, h: float, tail: float = DEFAULT_TAIL, offset: float = 0.0) -> GridPLD:
    """Lower bound by post-processing (``dpviz.pld.postprocess``) on the grid h·ℤ + ``offset``:
    outcomes merged into lattice symbols whose loss is their lattice point."""
    i_lo, i_hi = _checked_range(law, h, tail, offset)
    mass = postprocess.windowed_masses(postprocess.half_cell_terms(law, h, i_lo, i_hi, offset))
    return GridPLD(h=h, lo=i_lo, mass=mass, p_inf=law.p_inf, pessimistic=False, offset=offset)


def _checked_range(law: LossLaw, h: float, tail: float, offset: float = 0.0) -> tuple[int, int]:
    if not (h > 0 and math.isfinite(h)):
        raise ParameterError("h", h, "a positive grid width")
    i_lo, i_hi = grid_range(law, h=h, tail=tail, offset=offset)
    if i_hi - i_lo + 1 > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough for at most {MAX_BINS:,} grid points "
                                     f"(this law needs {i_hi - i_lo + 1:,})")
    return i_lo, i_hi
