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

import time
from dataclasses import replace

from dpviz.budget import Budget
from dpviz.composition import kov, optimal
from dpviz.composition.levels import Levels
from dpviz.guarantee import Guarantee, Kind
from dpviz.mechanisms import canonical
from dpviz.pld.accountant import epsilon_bounds
from dpviz.pld.law import LossLaw
from dpviz.validation import check_delta


def parts(levels: Levels) -> list[tuple[LossLaw, int]]:
    """(canonical loss law, count) for every level (KOV eq. 16)."""
    return [(canonical.loss_law(eps0=lv.epsilon, delta0=lv.delta), lv.count) for lv in levels]


def compare(levels: Levels, *, delta: float, h: float | None = None,
            budget: Budget | None = None) -> dict[str, Guarantee]:
    """ε at total δ by the exact, PLD and KOV Thm 3.5 routes, each a :class:`Guarantee` within
    ``budget`` (``dpviz.budget``; ``None`` = the CLI default). The exact row is absent beyond
    ``optimal.MAX_ATOMS`` and *not computed* over the budget (KOV's row is the closed form it
    would fall back on); the PLD (``dpviz.pld.accountant.epsilon_bounds``) chooses its grid from
    the target, or uses ``h``, and says why when it cannot run."""
    delta = check_delta(delta, field="delta", positive=True)
    out: dict[str, Guarantee] = {}
    if optimal.atom_count(levels) <= optimal.MAX_ATOMS:
        t0 = time.perf_counter()
        g = optimal.epsilon_for_delta(levels, delta=delta, budget=budget)
        if g.kind is Kind.UPPER:  # an upper closed form stands in over budget: KOV's row shows it
            g = Guarantee.not_computed(source=optimal.SOURCE_HETEROGENEOUS, delta=delta,
                                       reason=str(g.reason))
        out["exact"] = replace(g, seconds=time.perf_counter() - t0)
    out["pld"] = epsilon_bounds(parts(levels), delta=delta, h=h, budget=budget)
    t0 = time.perf_counter()
    out["kov"] = replace(kov.epsilon_for_delta(levels, delta=delta), seconds=time.perf_counter() - t0)
    return out
