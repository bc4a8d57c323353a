"""Basic composition (Roth lecture 4 Thm 1; KOV Thm 3.1): ε and δ add up."""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from dpviz.composition.levels import Levels, sum_delta, sum_epsilon
from dpviz.guarantee import DeltaCurve, Guarantee, Kind

SOURCE = "Basic composition (KOV Thm 3.1; Roth Thm 1)"


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    """(Σε_l, Σδ_l) when the target δ allows Σδ_l (``.delta`` is Σδ_l, ≤ the target); impossible
    otherwise: the theorem states nothing below Σδ_l."""
    eps, d = sum_epsilon(levels), sum_delta(levels)
    if d > delta:
        return Guarantee.impossible(
            source=SOURCE, reason=f"basic composition needs δ ≥ Σδ_i = {d:.6g}")
    return Guarantee(epsilon=eps, delta=d, kind=Kind.UPPER, source=SOURCE)


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    """Σδ_l when ε ≥ Σε_l; the theorem gives no δ for a smaller ε."""
    eps, d = sum_epsilon(levels), sum_delta(levels)
    if epsilon < eps:
        return Guarantee.impossible(
            source=SOURCE, reason=f"basic composition gives no δ for ε < Σε_i = {eps:.6g}", solved="delta")
    return Guarantee(epsilon=epsilon, delta=min(d, 1.0), kind=Kind.UPPER, source=SOURCE, solved="delta")


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return DeltaCurve.pointwise([delta_for_epsilon(levels, epsilon=float(e)) for e in eps], eps,
                                source=SOURCE)
