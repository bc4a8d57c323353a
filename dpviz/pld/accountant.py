"""PLD accounting with certified error bars: ε(δ) and δ(ε) as intervals [lower, upper].

A composition is a list of (loss law, count) parts. ``dpviz.pld.refine`` chooses the grid and
``dpviz.pld.composed`` composes every law's pessimistic and optimistic grids in both directions (one
transform per law, ``dpviz.pld.power``); the answer is read off the composed grids exactly, so

    lower = max_dir lower_dir ≤ truth ≤ max_dir upper_dir = upper.

The cost is checked before any transform (``dpviz.pld.cost``): requests above ``MAX_BINS`` raise
``ParameterError`` naming h, requests above a ``Budget`` ``OverBudget``; both become a guarantee
that is "not computed", with the reason.
"""

from __future__ import annotations

import math
import time

import numpy as np
from numpy.typing import NDArray

from dpviz.budget import Budget, OverBudget
from dpviz.guarantee import DeltaCurve, Guarantee, Kind, Status
from dpviz.pld.composed import Composed, compose, compose_many, compose_within_limits
from dpviz.pld.cost import PLAN_CELLS, Parts, cell_unit, cost, directions, plan
from dpviz.pld.refine import DEFAULT_ACCURACY, checked_parts, composition
from dpviz.validation import ParameterError, check_delta, check_epsilon

__all__ = ["DEFAULT_ACCURACY", "PLAN_CELLS", "SOURCE", "Composed", "cell_unit", "compose", "compose_many",
           "compose_within_limits", "composition", "cost", "delta_bounds", "delta_curve", "directions",
           "epsilon_bounds", "max_loss", "plan"]

SOURCE = "PLD grid (connect-the-dots upper, Doroshenko et al.; post-processed lower)"


def max_loss(parts: Parts) -> float:
    """ε at δ = 0: the largest composed finite loss Σ k_i·max L_i, maximised over both directions;
    ``math.inf`` when some law has mass at +∞ (or −∞, for the reverse direction) or an unbounded
    continuous part (then no finite ε has δ = 0)."""
    worst = -math.inf
    for d in directions(parts):
        total = 0.0
        for law, k in d:
            total += k * law.max_loss()
        worst = max(worst, total)
    return max(worst, 0.0)




def epsilon_bounds(parts: Parts, *, delta: float, accuracy: float = DEFAULT_ACCURACY,
                   h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """ε at δ of the composition of ``parts``, certified: ``lower ≤ ε(δ) ≤ upper``.

    δ = 0 is answered exactly from the laws (Σ k·max loss, or IMPOSSIBLE when a loss is
    unbounded). Otherwise the grids of ``composition`` are read off (``Composed.epsilon``).
    """
    t0 = time.perf_counter()
    delta = check_delta(delta)
    parts = checked_parts(parts)
    if delta == 0.0:
        top = max_loss(parts)
        if math.isinf(top):
            return Guarantee.impossible(source=SOURCE, delta=0.0, reason=(
                "ε at δ = 0 is infinite: the privacy loss is unbounded (a continuous tail or mass at +∞)"))
        return Guarantee(epsilon=top, delta=0.0, kind=Kind.EXACT, source="largest composed loss Σ k·max L",
                         seconds=time.perf_counter() - t0)
    try:
        c = composition(parts, delta=delta, accuracy=accuracy, h=h, budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        return Guarantee.not_computed(source=SOURCE, delta=delta, reason=str(exc))
    lo, up = c.epsilon(delta)
    detail = c.describe()
    seconds = time.perf_counter() - t0
    if lo is None:  # even the optimistic grid has δ(ε) > δ for every ε: ε = ∞
        return Guarantee.impossible(source=SOURCE, delta=delta, reason=(
            f"δ = {delta:g} is below the probability of infinite privacy loss: no finite ε"))
    if up is None:
        return Guarantee(epsilon=None, delta=delta, kind=Kind.INFEASIBLE, source=SOURCE,
                         status=Status.NOT_COMPUTED, lower=lo, detail=detail, seconds=seconds,
                         reason="δ is below the tail mass the grid sends to +∞ (a finer tail is needed)")
    up = max(min(up, max_loss(parts)), lo)  # ε(0) = Σ k·max L is an upper bound at every δ
    kind = Kind.EXACT if up == lo else Kind.UPPER
    return Guarantee(epsilon=up, delta=delta, kind=kind, source=SOURCE, lower=lo, upper=up,
                     detail=detail, seconds=seconds)


def delta_bounds(parts: Parts, *, epsilon: float, accuracy: float = DEFAULT_ACCURACY,
                 h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """δ at ε of the composition of ``parts``, certified: ``lower ≤ δ(ε) ≤ upper``."""
    t0 = time.perf_counter()
    epsilon = check_epsilon(epsilon, maximum=EPSILON_COMPOSED_MAX)
    parts = checked_parts(parts)
    top = max_loss(parts)
    if epsilon >= top:
        return Guarantee(epsilon=epsilon, delta=0.0, kind=Kind.EXACT, solved="delta",
                         source="largest composed loss Σ k·max L", seconds=time.perf_counter() - t0)
    try:
        c = composition(parts, epsilon=epsilon, accuracy=accuracy, h=h, budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        return Guarantee.not_computed(source=SOURCE, epsilon=epsilon, solved="delta", reason=str(exc))
    lo, up = c.delta(epsilon)
    up = max(up, lo)
    kind = Kind.EXACT if up == lo else Kind.UPPER
    return Guarantee(epsilon=epsilon, delta=up, kind=kind, source=SOURCE, lower=lo, upper=up,
                     solved="delta", detail=c.describe(), seconds=time.perf_counter() - t0)


def delta_curve(parts: Parts, *, epsilons: NDArray[np.float64], accuracy: float = DEFAULT_ACCURACY,
                h: float | None = None, budget: Budget | None = None) -> DeltaCurve:
    """δ(ε) over ``epsilons`` from one composition (NaN everywhere when it is not computed)."""
    eps = np.asarray(epsilons, dtype=float)
    parts = checked_parts(parts)
    try:
        c = composition(parts, epsilon=float(eps.min()) if eps.size else 0.0, accuracy=accuracy, h=h,
                        budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        nan = np.full(eps.shape, math.nan)
        return DeltaCurve(epsilon=eps, lower=nan, upper=nan.copy(), kind=Kind.UPPER, source=SOURCE,
                          reason=str(exc))
    lo = np.array([c.delta(float(e))[0] for e in eps.ravel()]).reshape(eps.shape)
    up = np.array([c.delta_upper(float(e)) for e in eps.ravel()]).reshape(eps.shape)
    return DeltaCurve(epsilon=eps, lower=lo, upper=np.maximum(up, lo), kind=Kind.UPPER, source=SOURCE)


EPSILON_COMPOSED_MAX = 1e6
"""Largest ε accepted by ``delta_bounds`` (a composed ε; per-step ε are checked elsewhere)."""


