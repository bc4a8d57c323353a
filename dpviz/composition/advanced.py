"""Advanced composition of Dwork, Rothblum and Vadhan.

Roth lecture 4 Thm 6 / KOV Thm 3.2: for δ' > 0 the k-fold composition of
(ε0, δ0)-DP mechanisms is (√(2k ln(1/δ')) ε0 + kε0(e^{ε0} − 1), kδ0 + δ')-DP.
For heterogeneous levels the same proof gives √(2 ln(1/δ') Σε_i²) + Σε_i(e^{ε_i} − 1)
with δ = Σδ_i + δ' (DRV 2010, Thm III.3 in its general form). The raw theorem
value is reported, without a min with basic composition. √(Σε_i²) is computed scaled (no
underflow at a subnormal ε0) and every value is rounded up (docs/MATH.md §10).
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.composition.levels import Levels, root_sum_epsilon_sq, sum_delta
from dpviz.guarantee import DeltaCurve, Guarantee, Kind
from dpviz.numerics import ROUND_ULPS, round_up, round_up_array

SOURCE = "Advanced composition (DRV; KOV Thm 3.2; Roth Thm 6)"


def drift(levels: Levels) -> float:
    """Σ ε_i (e^{ε_i} − 1), the mean-drift term."""
    return math.fsum(lv.count * lv.epsilon * math.expm1(lv.epsilon) for lv in levels)


def epsilon_at_slack(levels: Levels, *, slack: float) -> float:
    """ε for slack δ' ∈ (0, 1], rounded up."""
    return round_up(math.sqrt(2.0 * -math.log(slack)) * root_sum_epsilon_sq(levels) + drift(levels))


def epsilon_at_slacks(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`epsilon_at_slack` at many slacks δ' ∈ (0, 1] at once (the regions' sweep)."""
    s = np.asarray(slacks, dtype=float)
    return round_up_array(np.sqrt(2.0 * -np.log(s)) * root_sum_epsilon_sq(levels) + drift(levels))


def total_delta(levels: Levels, slack: float) -> float:
    """δ = Σδ_i + δ' (at most 1) that goes with :func:`epsilon_at_slack` at slack δ'."""
    return min(sum_delta(levels) + slack, 1.0)


def total_deltas(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`total_delta` at many slacks at once (the regions' sweep; the same floats)."""
    return np.minimum(sum_delta(levels) + np.asarray(slacks, dtype=float), 1.0)


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
    (delta,) = _deltas(levels, [epsilon])
    if delta is None:
        return Guarantee.impossible(source=SOURCE, solved="delta", reason=_no_delta(levels))
    return Guarantee(epsilon=epsilon, delta=delta, kind=Kind.UPPER, source=SOURCE, solved="delta")


def _deltas(levels: Levels, epsilons: list[float]) -> list[float | None]:
    """δ = Σδ_i + δ' at each ε, δ' = e^{−(ε − drift)²/(2Σε_i²)} rounded up (``None``: ε ≤ the drift)."""
    t, root, base = drift(levels), root_sum_epsilon_sq(levels), sum_delta(levels)
    if root == 0:  # every ε_i = 0: ε = 0 for any slack δ' > 0, so δ is Σδ_i + δ' for all δ' > 0
        return [min(base, 1.0) for _ in epsilons]
    out: list[float | None] = []
    for epsilon in epsilons:
        excess = epsilon - t
        if excess <= 0:
            out.append(None)
            continue
        ratio = excess / root  # ∞ past 1.8e308 (a subnormal √Σε²): a product, where ** would raise
        z = 0.5 * ratio * ratio  # δ' = e^{−z}, rounded up
        slack = math.nextafter(math.exp(-z * (1.0 - ROUND_ULPS)), math.inf)
        out.append(min(math.nextafter(base + slack, math.inf), 1.0))
    return out


def _no_delta(levels: Levels) -> str:
    return f"advanced composition gives no δ for ε ≤ Σε_i(e^ε_i − 1) = {drift(levels):.6g}"


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return DeltaCurve.bounds(eps, _deltas(levels, eps.tolist()), kind=Kind.UPPER, source=SOURCE,
                             reason=_no_delta(levels))
