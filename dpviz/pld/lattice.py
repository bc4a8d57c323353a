"""Where a law's atoms sit: the lattice a PLD grid should divide so that they are on grid points
(exactly kept by both grids, docs/MATH.md §17.9), for ``dpviz.pld.refine`` and ``dpviz.pld.predict``."""

from __future__ import annotations

import numpy as np

from dpviz.pld.cost import Parts


def anchor(parts: Parts) -> float | None:
    """A width the grid should divide: the distance between the two heaviest atoms (by P-mass) of
    the first part that has two, so that with ``composed.law_offset`` both sit on grid points (e.g. a
    subsampled Laplace's atoms at its largest and smallest loss, where δ is decided); None if no
    part has two atoms."""
    for law, _ in parts:
        keep = law.p > 0
        if np.count_nonzero(keep) >= 2:
            loss, p = law.loss[keep], law.p[keep]
            two = np.argsort(p)[-2:]
            d = abs(float(loss[two[1]] - loss[two[0]]))
            if d > 0:
                return d
    return None


def common_lattice(parts: Parts) -> float | None:
    """The coarsest h putting every atom of every law on the grid h·ℤ (None if there is none)."""
    cands = []
    for law, _ in parts:
        loss = law.loss[(law.p > 0) | (law.q > 0)]
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
            t = law.loss[(law.p > 0) | (law.q > 0)] / h0
            if np.any(np.abs(t - np.round(t)) > 1e-9 * np.maximum(1.0, np.abs(t))):
                ok = False
                break
        if ok:
            return h0
    return None
