"""Advanced composition of Dwork, Rothblum and Vadhan.

Roth lecture 4 Thm 6 / KOV Thm 3.2: for δ' > 0 the k-fold composition of
(ε0, δ0)-DP mechanisms is (√(2k ln(1/δ')) ε0 + kε0(e^{ε0} − 1), kδ0 + δ')-DP.
For heterogeneous levels the same proof gives √(2 ln(1/δ') Σε_i²) + Σε_i(e^{ε_i} − 1)
with δ = Σδ_i + δ' (DRV 2010, Thm III.3 in its general form). The raw theorem
value is reported, without a min with basic composition.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.composition.levels import Levels, sum_delta, sum_epsilon_sq
from dpviz.guarantee import DeltaCurve, Guarantee, Kind

SOURCE = "Advanced composition (DRV; KOV Thm 3.2; Roth Thm 6)"


def drift(levels: Levels) -> float:
    """Σ ε_i (e^{ε_i} − 1), the mean-drift term."""
    return math.fsum(lv.count * lv.epsilon * math.expm1(lv.epsilon) for lv in levels)


def epsilon_at_slack(levels: Levels, *, slack: float) -> float:
    """ε for slack δ' ∈ (0, 1]."""
    return math.sqrt(2.0 * sum_epsilon_sq(levels) * -math.log(slack)) + drift(levels)


def epsilon_at_slacks(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`epsilon_at_slack` at many slacks δ' ∈ (0, 1] at once (the regions' sweep)."""
    s = np.asarray(slacks, dtype=float)
    return np.sqrt(2.0 * sum_epsilon_sq(levels) * -np.log(s)) + drift(levels)


def total_delta(levels: Levels, slack: float) -> float:
    """δ = Σδ_i + δ' (at most 1) that goes with :func:`epsilon_at_slack` at slack δ'."""
    return min(sum_delta(levels) + slack, 1.0)


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    """ε with δ' = δ − Σδ_i (``.delta`` is the target: the slack is spent); impossible when δ' ≤ 0."""
    slack = delta - sum_delta(levels)
    if slack <= 0:
        return Guarantee.impossible(
            source=SOURCE, reason=f"advanced composition needs δ > Σδ_i = {sum_delta(levels):.6g}")
    return Guarantee(epsilon=epsilon_at_slack(levels, slack=min(slack, 1.0)), delta=delta,
                     kind=Kind.UPPER, source=SOURCE)


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    """Invert the theorem for δ'; defined only for ε above the drift term."""
    excess = epsilon - drift(levels)
    var = sum_epsilon_sq(levels)
    if var == 0:  # every ε_i = 0: ε = 0 for any slack δ' > 0, so δ is Σδ_i + δ' for all δ' > 0
        return Guarantee(epsilon=epsilon, delta=min(sum_delta(levels), 1.0), kind=Kind.UPPER,
                         source=SOURCE, solved="delta")
    if excess <= 0:
        return Guarantee.impossible(
            source=SOURCE, solved="delta",
            reason=f"advanced composition gives no δ for ε ≤ Σε_i(e^ε_i − 1) = {drift(levels):.6g}")
    slack = math.exp(-(excess**2) / (2.0 * var))
    return Guarantee(epsilon=epsilon, delta=min(sum_delta(levels) + slack, 1.0),
                     kind=Kind.UPPER, source=SOURCE, solved="delta")


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return DeltaCurve.pointwise([delta_for_epsilon(levels, epsilon=float(e)) for e in eps], eps,
                                source=SOURCE)
