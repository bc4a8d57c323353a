"""KOV closed-form composition: Thm 3.4 (homogeneous) and Thm 3.5 (heterogeneous).

ε = min{Σε, T + √(2Σε² ln(e + √(Σε²)/δ~)), T + √(2Σε² ln(1/δ~))} with
T = Σ ε_i (e^{ε_i} − 1)/(e^{ε_i} + 1) = Σ ε_i tanh(ε_i/2), and
δ = 1 − (1 − δ~) Π(1 − δ_i). For one level this is exactly Thm 3.4. √(Σε²) is computed scaled (no
underflow at a subnormal ε0) and the square-root terms are rounded up (docs/MATH.md §10).
"""

from __future__ import annotations

import math
import sys

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.composition.levels import Levels, describe_floor, log_no_delta, root_sum_epsilon_sq, sum_epsilon
from dpviz.guarantee import DeltaCurve, Guarantee, Kind
from dpviz.numerics import ROUND_ULPS, round_up, round_up_array

SOURCE_HOMOGENEOUS = "KOV Thm 3.4"
SOURCE_HETEROGENEOUS = "KOV Thm 3.5"

_LOG_FLOAT_MAX = math.log(sys.float_info.max)


def _source(levels: Levels) -> str:
    return SOURCE_HOMOGENEOUS if len(levels) == 1 else SOURCE_HETEROGENEOUS


def drift(levels: Levels) -> float:
    """T = Σ ε_i (e^{ε_i} − 1)/(e^{ε_i} + 1)."""
    return math.fsum(lv.count * lv.epsilon * math.tanh(lv.epsilon / 2.0) for lv in levels)


def slack_for_delta(levels: Levels, delta: float) -> float:
    """δ~ with 1 − (1 − δ~) Π(1 − δ_i) = δ (negative when δ is below the floor).

    δ~ = 1 − e^x with x = ln(1 − δ) − ln Π(1 − δ_i); x > 0 means δ is below the floor, and
    once x passes ln(float max) the exact δ~ is below −1.8e308, returned as −inf.
    """
    x = math.log1p(-delta) - log_no_delta(levels)
    if x > _LOG_FLOAT_MAX:
        return -math.inf
    return -math.expm1(x)


def total_delta(levels: Levels, slack: float) -> float:
    """1 − (1 − δ~) Π(1 − δ_i); 1 at δ~ = 1."""
    if slack >= 1.0:
        return 1.0
    return 0.0 - math.expm1(math.log1p(-slack) + log_no_delta(levels))  # 0.0 −: never −0.0


def total_deltas(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`total_delta` at many slacks at once (the regions' sweep): the same floats, from
    ``math``'s log1p and expm1 (numpy's may differ in the last bit), with Π(1 − δ_i) summed once."""
    base = log_no_delta(levels)
    return np.array([1.0 if s >= 1.0 else 0.0 - math.expm1(math.log1p(-s) + base)
                     for s in np.asarray(slacks, dtype=float).tolist()], dtype=float)


def epsilon_at_slack(levels: Levels, *, slack: float) -> float:
    """The theorem's ε for δ~ ∈ [0, 1]; Σε when δ~ = 0."""
    return epsilon_with_drift(levels, drift(levels), slack=slack)


def epsilon_with_drift(levels: Levels, t: float, *, slack: float) -> float:
    """The three-term minimum of Thm 3.4/3.5 with drift ``t``, at δ~ ∈ [0, 1]. The two square-root
    terms are rounded up; Σε is basic composition's own value, so that KOV is never above basic."""
    total = sum_epsilon(levels)
    if slack <= 0:
        return total
    root = root_sum_epsilon_sq(levels)
    second = t + math.sqrt(2.0 * math.log(math.e + root / slack)) * root
    third = t + math.sqrt(2.0 * -math.log(slack)) * root
    return min(total, round_up(min(second, third)))


def epsilon_at_slacks(levels: Levels, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`epsilon_at_slack` at many slacks δ~ ∈ [0, 1] at once (the regions' sweep)."""
    return epsilons_with_drift(levels, drift(levels), slacks)


def epsilons_with_drift(levels: Levels, t: float, slacks: ArrayLike) -> NDArray[np.float64]:
    """:func:`epsilon_with_drift` at many slacks at once."""
    s = np.asarray(slacks, dtype=float)
    total, root = sum_epsilon(levels), root_sum_epsilon_sq(levels)
    positive = np.where(s > 0, s, 1.0)
    second = t + np.sqrt(2.0 * np.log(math.e + root / positive)) * root
    third = t + np.sqrt(2.0 * -np.log(positive)) * root
    return np.where(s > 0, np.minimum(total, round_up_array(np.minimum(second, third))), total)


def epsilon_for_delta(levels: Levels, *, delta: float) -> Guarantee:
    return epsilon_for_delta_with_drift(levels, drift(levels), delta=delta, source=_source(levels))


def epsilon_for_delta_with_drift(levels: Levels, t: float, *, delta: float, source: str,
                                 detail: str = "") -> Guarantee:
    """ε at total δ of the three-term bound with drift ``t`` (Thm 3.4/3.5 or its simplified form)."""
    slack = slack_for_delta(levels, delta)
    if slack < 0:
        floor = describe_floor(log_no_delta(levels))
        return Guarantee.impossible(source=source, reason=f"needs δ ≥ 1 − Π(1 − δ_i) = {floor}")
    return Guarantee(epsilon=epsilon_with_drift(levels, t, slack=slack), delta=delta,
                     kind=Kind.UPPER, source=source, detail=detail)


def delta_for_epsilon(levels: Levels, *, epsilon: float) -> Guarantee:
    """Smallest δ~ for which one of the three terms is ≤ ε, then the total δ."""
    return delta_for_epsilon_with_drift(levels, drift(levels), epsilon=epsilon, source=_source(levels))


def delta_for_epsilon_with_drift(levels: Levels, t: float, *, epsilon: float, source: str,
                                 detail: str = "") -> Guarantee:
    """δ at ε of the three-term bound with drift ``t``: the smallest δ~ for which a term is ≤ ε."""
    (delta,) = deltas_with_drift(levels, t, [epsilon])
    if delta is None:
        return Guarantee.impossible(source=source, solved="delta", reason=no_delta(t))
    return Guarantee(epsilon=epsilon, delta=delta, kind=Kind.UPPER, source=source, solved="delta",
                     detail=detail)


def deltas_with_drift(levels: Levels, t: float, epsilons: list[float]) -> list[float | None]:
    """:func:`delta_for_epsilon_with_drift`'s δ at each ε (``None``: ε ≤ the drift, no δ)."""
    total, root = sum_epsilon(levels), root_sum_epsilon_sq(levels)
    out: list[float | None] = []
    for epsilon in epsilons:
        if epsilon >= total:
            out.append(total_delta(levels, 0.0))
            continue
        excess = epsilon - t
        if excess <= 0 or root == 0:
            out.append(None)
            continue
        ratio = excess / root  # ∞ past 1.8e308 (a subnormal √Σε²): a product, where ** would raise
        z = 0.5 * ratio * ratio * (1.0 - ROUND_ULPS)  # rounded down, so δ~ is rounded up
        candidates = [math.exp(-z)]  # third term: ln(1/δ~) = z
        if z > 1.0:  # second term: ln(e + √var/δ~) = z ⇔ δ~ = √var / (e^z − e)
            log_slack = math.log(root) - z - math.log(-math.expm1(1.0 - z))
            candidates.append(math.exp(log_slack + ROUND_ULPS * abs(log_slack)))
        slack = min(math.nextafter(min(candidates), math.inf), 1.0)
        out.append(total_delta(levels, slack))
    return out


def no_delta(t: float) -> str:
    """Why the three-term bound with drift ``t`` gives no δ at an ε ≤ t."""
    return f"the theorem gives no δ for ε ≤ its drift term {t:.6g}"


def delta_curve(levels: Levels, epsilons: ArrayLike) -> DeltaCurve:
    """δ at each ε of ``epsilons``: the same numbers as :func:`delta_for_epsilon` point by point."""
    return delta_curve_with_drift(levels, drift(levels), epsilons, source=_source(levels))


def delta_curve_with_drift(levels: Levels, t: float, epsilons: ArrayLike, *, source: str) -> DeltaCurve:
    """:func:`delta_for_epsilon_with_drift` at each ε of ``epsilons`` (without a Guarantee per point)."""
    eps = np.asarray(epsilons, dtype=float).ravel()
    return DeltaCurve.bounds(eps, deltas_with_drift(levels, t, eps.tolist()), kind=Kind.UPPER,
                             source=source, reason=no_delta(t))
