"""KOV Thm 3.4 in its simplified form (the high-privacy regime, ε0 ≤ 0.9).

ε = min{kε0, kε0² + ε0√(2k ln(e + √(kε0²)/δ~)), kε0² + ε0√(2k ln(1/δ~))},
δ = 1 − (1 − δ0)^k (1 − δ~): Thm 3.4 with the drift kε0 tanh(ε0/2) replaced by kε0².
KOV state it for ε0 ≤ 0.9; since tanh(x/2) ≤ x/2 it is never below Thm 3.4, so it holds at
every ε0 (docs/MATH.md §18). With levels, Σ ε_l² replaces the drift of Thm 3.5 the same way.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.composition import kov
from dpviz.composition.levels import Levels, sum_epsilon_sq
from dpviz.guarantee import DeltaCurve, Guarantee

SOURCE_HOMOGENEOUS = "KOV Thm 3.4, simplified form"
SOURCE_HETEROGENEOUS = "KOV Thm 3.5, simplified as Thm 3.4"
PAPER_RANGE = 0.9
"""KOV state the simplified form for ε0 ≤ 0.9 (the high-privacy regime)."""

total_delta = kov.total_delta
total_deltas = kov.total_deltas


def _source(levels: Levels) -> str:
    return SOURCE_HOMOGENEOUS if len(levels) == 1 else SOURCE_HETEROGENEOUS


def drift(levels: Levels) -> float:
    """kε0² (Σ count_l ε_l² with levels), rounded up: never below KOV's drift Σ ε tanh(ε/2)."""
    t = sum_epsilon_sq(levels)
    return math.nextafter(t, math.inf) if t > 0 else 0.0


def _detail(levels: Levels) -> str:
    """Where the paper's stated range ε0 ≤ 0.9 is left, say why the value still holds."""
    if max(lv.epsilon for lv in levels) <= PAPER_RANGE:
        return ""
    return ("KOV state this form for ε0 ≤ 0.9; it also holds above, being never below Thm 3.4 "
            "(tanh(ε0/2) ≤ ε0/2 ≤ ε0)")


def epsilon_at_slack(levels: Levels, *, slack: float) -> float:
    """The simplified ε for δ~ ∈ [0, 1]; Σε when δ~ = 0."""
    return kov.epsilon_with_drift(levels, drift(levels), slack=slack)


def epsilon_at_slacks(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`epsilon_at_slack` at many slacks at once (the regions' sweep)."""
    return kov.epsilons_with_drift(levels, drift(levels), slacks)


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    return kov.epsilon_for_delta_with_drift(levels, drift(levels), delta=delta, source=_source(levels),
                                            detail=_detail(levels))


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    return kov.delta_for_epsilon_with_drift(levels, drift(levels), epsilon=epsilon, source=_source(levels),
                                            detail=_detail(levels))


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    return kov.delta_curve_with_drift(levels, drift(levels), epsilons, source=_source(levels))
