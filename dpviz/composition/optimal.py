"""Exact optimal composition (KOV Thm 3.3 and its heterogeneous extension).

Every (ε0, δ0)-DP mechanism is a post-processing of the canonical pair (KOV eq. 16),
so the hockey-stick curve of the k-fold product of canonical pairs is the exact
worst case over all k-fold (adaptive) compositions. Its privacy loss has finitely
many atoms (``LossAtoms``): binomial for one level, a product of binomials for a
few distinct levels (exact; the general problem is #P-hard, Murtagh-Vadhan).

``δ_opt(ε) = 1 − Π(1−δ_i) (1 − Σ_l C(k,l) max(0, e^{(k−l)ε0} − e^{ε+lε0}) / (1+e^{ε0})^k)``
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from dpviz.composition.atoms import LossAtoms, away_from_zero, binomial_log_weights
from dpviz.composition.levels import Level, Levels, log_no_delta
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import ParameterError

SOURCE_HOMOGENEOUS = "KOV Thm 3.3 (exact)"
SOURCE_HETEROGENEOUS = "KOV Thm 3.3, product of canonical pairs (exact)"

MAX_ATOMS = 4_000_000
"""Largest number of loss atoms for the exact heterogeneous sum (≈100 MB of arrays)."""


def atom_count(levels: Levels) -> int:
    """Number of loss atoms Π(count_i + 1) the exact method has to sum over."""
    return math.prod(lv.count + 1 for lv in levels if lv.epsilon > 0)


@lru_cache(maxsize=32)
def loss_atoms(levels: Levels) -> LossAtoms:
    """The privacy loss atoms of the composed canonical pairs (bounded cache)."""
    if len(levels) == 1:
        lv = levels[0]
        return LossAtoms.binomial(k=lv.count, eps0=lv.epsilon, delta0=lv.delta)
    n = atom_count(levels)
    if n > MAX_ATOMS:
        raise ParameterError(
            "levels", f"{len(levels)} levels with {n:,} loss atoms",
            f"at most {MAX_ATOMS:,} atoms Π(count_i + 1) for the exact heterogeneous optimum "
            "(use fewer distinct levels, or the PLD accountant)")
    loss = np.zeros(1)
    log_p = np.zeros(1)
    for lv in levels:
        if lv.epsilon == 0:
            continue
        loss_l, log_p_l = _level_atoms(lv)
        loss = np.add.outer(loss, loss_l).ravel()
        log_p = np.add.outer(log_p, log_p_l).ravel()
    log_free = log_no_delta(levels)
    return LossAtoms.from_masses(loss, log_p + log_free, p_inf=-math.expm1(log_free))


def _level_atoms(lv: Level) -> tuple[np.ndarray, np.ndarray]:
    """Binomial atoms of one level, rounded away from zero like ``LossAtoms.binomial``."""
    l_idx = np.arange(lv.count + 1, dtype=float)
    loss = (lv.count - 2.0 * l_idx) * lv.epsilon
    return away_from_zero(loss), binomial_log_weights(lv.count, lv.epsilon)


def _source(levels: Levels) -> str:
    return SOURCE_HOMOGENEOUS if len(levels) == 1 else SOURCE_HETEROGENEOUS


def _atoms_or_reason(levels: Levels) -> LossAtoms | Guarantee:
    """The loss atoms, or a Guarantee saying why the exact sum is not attempted."""
    try:
        return loss_atoms(levels)
    except ParameterError as exc:
        return Guarantee.infeasible(source=_source(levels), reason=f"too large for the exact sum: {exc}")


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    """δ_opt(ε): exact for every ε ≥ 0, not only the Thm 3.3 grid points."""
    atoms = _atoms_or_reason(levels)
    if isinstance(atoms, Guarantee):
        return atoms
    return Guarantee(epsilon=epsilon, delta=min(atoms.delta(epsilon), 1.0),
                     kind=Kind.EXACT, source=_source(levels))


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    """Smallest ε with δ_opt(ε) ≤ δ; infeasible below the floor 1 − Π(1 − δ_i)."""
    atoms = _atoms_or_reason(levels)
    if isinstance(atoms, Guarantee):
        return atoms
    eps = atoms.epsilon(delta)
    if eps is None:
        return Guarantee.infeasible(
            source=_source(levels),
            reason=f"no ε reaches δ below 1 − Π(1 − δ_i) = {atoms.p_inf:.6g}")
    return Guarantee(epsilon=eps, delta=min(atoms.delta(eps), 1.0), kind=Kind.EXACT,
                     source=_source(levels))


def kov_grid(*, k: int, eps0: float, delta0: float) -> tuple[np.ndarray, np.ndarray]:
    """KOV Thm 3.3 as stated: ((k − 2i)ε0, δ_(i)) for i = 0..⌊k/2⌋.

    δ_(i) = 1 − (1 − δ0)^k (1 − δ_i) with
    δ_i = Σ_{l<i} C(k,l)(e^{(k−l)ε0} − e^{(k−2i+l)ε0}) / (1 + e^{ε0})^k.
    """
    atoms = loss_atoms((Level(epsilon=eps0, delta=delta0, count=k),))
    eps = (k - 2.0 * np.arange(k // 2 + 1)) * eps0
    return eps, np.array([min(atoms.delta(float(e)), 1.0) for e in eps])
