"""The privacy region of any pair of finite distributions (KOV §2).

The lower boundary is the trade-off curve of the Neyman-Pearson tests: reject H0 (data
from P) on outcomes in increasing order of the privacy loss ln P(x)/Q(x), randomising
at ties. ``LossAtoms.tradeoff`` walks the sorted losses; this module turns a pair of
probability vectors into those atoms and the vertices into a :class:`Boundary`.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpviz.composition.atoms import LossAtoms
from dpviz.regions.boundary import Boundary
from dpviz.validation import ParameterError

_SUM_TOLERANCE = 1e-9
"""How far from 1 the entries of a probability vector may sum (rounding in user input)."""


def pair_atoms(p: ArrayLike, q: ArrayLike) -> LossAtoms:
    """Loss atoms of (P, Q): outcomes with Q = 0 go to the mass at +∞; outcomes with P = 0
    carry no P-mass (their Q-mass is what ``tradeoff`` finds missing)."""
    p = np.asarray(p, dtype=float)
    q = np.asarray(q, dtype=float)
    for name, v in (("P", p), ("Q", q)):
        if v.ndim != 1 or v.size == 0 or not np.all(np.isfinite(v)) or np.any(v < 0) \
                or abs(v.sum() - 1.0) > _SUM_TOLERANCE:
            raise ParameterError(name, v.tolist() if v.size <= 8 else f"{v.size} values",
                                 "a non-empty vector of non-negative probabilities summing to 1")
    if p.shape != q.shape:
        raise ParameterError("Q", f"{q.size} values", f"as many outcomes as P ({p.size})")
    both = (p > 0) & (q > 0)
    return LossAtoms.from_masses(np.log(p[both]) - np.log(q[both]), np.log(p[both]),
                                 p_inf=float(p[(p > 0) & (q == 0)].sum()))


def atoms_boundary(atoms: LossAtoms) -> Boundary:
    """The trade-off curve of a loss distribution as boundary vertices (duplicates merged)."""
    p_fa, p_md = atoms.tradeoff()
    keep = np.append(np.diff(p_fa) > 0, True) | (p_md == 0)
    x, y = p_fa[keep], p_md[keep]
    x[0] = 0.0
    return Boundary(p_fa=np.maximum.accumulate(x), p_md=np.minimum.accumulate(y))


def pair_boundary(p: ArrayLike, q: ArrayLike) -> Boundary:
    """Lower boundary of the region of tests of H0: P against H1: Q (KOV §2)."""
    return atoms_boundary(pair_atoms(p, q))
