"""Heterogeneous composition of (ε_i, δ_i)-DP mechanisms (count_i of each).

Three routes side by side:
- ``exact``: the optimum over all mechanisms, i.e. the composed canonical pairs (KOV eq. 16,
  Thm 3.3 extended to products of binomials; ``dpviz.composition.optimal``), exact while the
  number of loss atoms stays below ``optimal.MAX_ATOMS`` and its cost within the budget;
- ``pld``: the same canonical pairs composed on a loss grid (certified [lower, upper]); it
  scales to many distinct levels;
- ``kov``: the closed form of KOV Thm 3.5.
"""

from __future__ import annotations

import math
import time

from dpviz.budget import Budget, OverBudget
from dpviz.composition import kov, optimal
from dpviz.composition.levels import Levels
from dpviz.guarantee import Kind
from dpviz.mechanisms import canonical
from dpviz.pld.accountant import DEFAULT_H, Interval, compose, compose_within_limits, plan
from dpviz.validation import ParameterError, check_delta

DEFAULT_BUDGET = 1 << 20


def parts(levels: Levels) -> list:
    """(canonical loss law, count) for every level with ε > 0 or δ > 0."""
    return [(canonical.loss_law(eps0=lv.epsilon, delta0=lv.delta), lv.count) for lv in levels]


def grid_width(levels: Levels, *, budget: int = DEFAULT_BUDGET) -> float:
    """A width on which every ε_i is a grid point when the ε_i share a unit ≥ DEFAULT_H/10,
    coarsened (by whole factors) until the composed grid fits ``budget``."""
    eps = sorted({lv.epsilon for lv in levels if lv.epsilon > 0})
    unit = None
    if eps:
        u = eps[0]
        for cand in (u / m for m in range(1, 1001)):
            if cand < DEFAULT_H / 10:
                break
            if all(abs(e / cand - round(e / cand)) < 1e-9 * max(1.0, e / cand) for e in eps):
                unit = cand
                break
    h = DEFAULT_H if unit is None else unit / max(1, math.ceil(unit / DEFAULT_H))
    ps = parts(levels)
    for _ in range(40):
        try:
            if plan(ps, h=h) <= budget:
                return h
        except ParameterError:
            pass
        h = h * 2.0 if unit is None else unit / max(1, math.floor(unit / h / 2.0))
    raise ParameterError("levels", f"{len(levels)} levels", "small enough for the PLD grid")


def compare(levels: Levels, *, delta: float, h: float | None = None,
            budget: Budget | None = None) -> dict[str, Interval]:
    """ε at total δ by the exact, PLD and KOV Thm 3.5 routes, each within ``budget``
    (``dpviz.budget``; ``None`` = the CLI default): the exact row is left out beyond it (KOV is
    the closed form it would fall back on), the PLD grid coarsens to fit or says why not."""
    delta = check_delta(delta, field="delta", positive=True)
    out: dict[str, Interval] = {}
    if optimal.atom_count(levels) <= optimal.MAX_ATOMS:
        t0 = time.perf_counter()
        g = optimal.epsilon_for_delta(levels, delta=delta, budget=budget)
        if g.kind is not Kind.UPPER:  # an upper closed form stands in over budget: KOV's row shows it
            e = g.epsilon if g.feasible else math.inf
            out["exact"] = Interval(lower=e, upper=e, method="exact", seconds=time.perf_counter() - t0,
                                    exact=e, detail=g.source)
        else:
            out["exact"] = Interval(lower=None, upper=None, method="exact", detail=str(g.reason))
    t0 = time.perf_counter()
    hh = h if h is not None else grid_width(levels)
    try:
        c = compose_within_limits(parts(levels), h=hh, budget=budget) if h is None \
            else compose(parts(levels), h=hh, budget=budget)  # a width the caller chose is kept
        lo, up = c.epsilon(delta)
        out["pld"] = Interval(lower=math.inf if lo is None else lo, upper=up, method="pld",
                              seconds=time.perf_counter() - t0, detail=f"h={c.h:.3g}")
    except OverBudget as exc:
        out["pld"] = Interval(lower=None, upper=None, method="pld", detail=f"PLD {exc.reason}")
    t0 = time.perf_counter()
    g = kov.epsilon_for_delta(levels, delta=delta)
    out["kov"] = Interval(lower=None, upper=g.epsilon if g.feasible else None, method="kov",
                          seconds=time.perf_counter() - t0, detail=g.source)
    return out
