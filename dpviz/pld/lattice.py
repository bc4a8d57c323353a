"""Where a law's atoms sit: the lattice a PLD grid should divide so that they are on grid points
(exactly kept by both grids, docs/MATH.md §17.9), for ``dpviz.pld.refine`` and ``dpviz.pld.predict``."""

from __future__ import annotations

import numpy as np

from dpviz.pld.cost import Parts
from dpviz.pld.law import LossLaw


def anchor(parts: Parts) -> float | None:
    """A width the grid should divide: the distance between the two heaviest atoms (by P-mass) of
    the first part that has two, so that with ``composed.law_offset`` both sit on grid points (e.g. a
    subsampled Laplace's atoms at its largest and smallest loss, where δ is decided); None if no
    part has two atoms."""
    for law, _ in parts:
        keep = (law.p > 0) & np.isfinite(law.loss)
        if np.count_nonzero(keep) >= 2:
            loss, p = law.loss[keep], law.p[keep]
            two = np.argsort(p)[-2:]
            d = abs(float(loss[two[1]] - loss[two[0]]))
            if d * LATTICE_STEPS_MAX > float(np.max(np.abs(loss))):  # as ``common_lattice``: two atoms
                return d  # 1.2e-9 apart (a subsampled discrete Gaussian's, at ±347) made h = 1.2e-9
    return None


LATTICE_STEPS_MAX = 1 << 26
"""Most lattice steps from 0 to a law's largest finite loss. The test "on the lattice" allows a
relative float error of 1e-9 (a loss computed as a product or a log is exact only to a few ulps):
at 2^26 steps that is 0.07 of a step, still telling a lattice point from its neighbours; far
beyond it every number passes. A loss that is 0 up to round-off, e.g. ln(1 − q + q e^0) =
8.7e-19 for a Poisson-subsampled discrete Gaussian at q = 0.005, made a "lattice" of 8.7e-19 whose
steps overflowed ``stride``'s int64."""


def _finite_atoms(law: LossLaw) -> np.ndarray:
    """The finite losses of the atoms with mass (an infinite loss is kept apart, never on a grid)."""
    loss = law.loss[(law.p > 0) | (law.q > 0)]
    return loss[np.isfinite(loss)]


def common_lattice(parts: Parts) -> float | None:
    """The coarsest h putting every finite atom of every law on the grid h·ℤ, with at most
    ``LATTICE_STEPS_MAX`` steps to the largest (None if there is none)."""
    cands = []
    for law, _ in parts:
        loss = _finite_atoms(law)
        nz = np.abs(loss[loss != 0])
        if nz.size == 0:
            continue
        cands.append(float(nz.min()))
    if not cands:
        return None
    base = min(cands)
    for div in range(1, 13):
        h0 = base / div
        ok = True
        for law, _ in parts:
            t = _finite_atoms(law) / h0
            if np.any(np.abs(t) > LATTICE_STEPS_MAX) or \
                    np.any(np.abs(t - np.round(t)) > 1e-9 * np.maximum(1.0, np.abs(t))):
                ok = False
                break
        if ok:
            return h0
    return None


MAX_STRIDE = 12
"""Largest stride ``stride`` tries: every atom of a law on the same residue modulo it."""


def stride(parts: Parts, lattice: float) -> int:
    """The largest m ≤ ``MAX_STRIDE`` such that each law's atoms all sit on one residue class of
    ``lattice``·ℤ modulo m, i.e. on m·lattice·ℤ + o for an o of the law's own (1 if none): a grid of
    width m·lattice shifted onto any one of its atoms (``composed.law_offset``) still holds every atom
    exactly, with m times fewer bins. A discrete Gaussian with odd Δ has its losses Δ(2x − Δ)/(2σ²)
    at the odd multiples of Δ/(2σ²) only: half the bins of its common lattice were empty."""
    index = []
    for law, _ in parts:
        loss = _finite_atoms(law)
        if loss.size:
            index.append(np.rint(loss / lattice).astype(np.int64))  # |steps| ≤ LATTICE_STEPS_MAX
    if not index:
        return 1
    for m in range(MAX_STRIDE, 1, -1):
        if all(np.all((t - t[0]) % m == 0) for t in index):
            return m
    return 1
