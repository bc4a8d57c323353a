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
    (delta,) = _deltas(levels, [epsilon])
    if delta is None:
        return Guarantee.impossible(source=SOURCE, reason=_no_delta(levels), solved="delta")
    return Guarantee(epsilon=epsilon, delta=delta, kind=Kind.UPPER, source=SOURCE, solved="delta")


def _deltas(levels: Levels, epsilons: list[float]) -> list[float | None]:
    """δ at each ε (``None``: the theorem gives none)."""
    eps, d = sum_epsilon(levels), sum_delta(levels)
    return [None if e < eps else min(d, 1.0) for e in epsilons]


def _no_delta(levels: Levels) -> str:
    return f"basic composition gives no δ for ε < Σε_i = {sum_epsilon(levels):.6g}"


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return DeltaCurve.bounds(eps, _deltas(levels, eps.tolist()), kind=Kind.UPPER, source=SOURCE,
                             reason=_no_delta(levels))
