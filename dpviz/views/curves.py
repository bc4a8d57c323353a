"""The composition-curves view: ε against k, δ against ε, value tables (KOV §3)."""

from __future__ import annotations

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS, homogeneous
from dpviz.composition.curves import comparison, delta_vs_epsilon, epsilon_vs_k, k_grid
from dpviz.composition.levels import Levels, sum_epsilon
from dpviz.figures.curves import delta_vs_epsilon_figure, epsilon_vs_k_figure
from dpviz.figures.style import style
from dpviz.figures.tables import guarantee_rows
from dpviz.guarantee import Guarantee, Kind
from dpviz.params import CURVES_DELTA, CURVES_DELTA0, EPS0, HETERO_DELTA, HETERO_LEVELS, K_MAX, LOG_K, K
from dpviz.views import View, ViewSpec

LABELS = {m: style(m).label for m in METHODS}


def build(*, eps0: float, delta0: float, delta: float, k_max: int, k: int, log_k: bool,
          levels: Levels, hdelta: float, budget: Budget = budgets.PAGE) -> View:
    """ε against k, δ against ε, the value tables. ``budget`` (default: the page's) bounds each
    exact optimum; beyond it a table row shows the best closed form and says why, a curve point is
    left out. Homogeneous optima cost O(√k) (``composition/atoms.py``): only the heterogeneous
    table can reach it."""
    ks = tuple(int(v) for v in k_grid(k_max, log=log_k))
    curve = epsilon_vs_k(eps0=eps0, delta0=delta0, delta=delta, ks=ks, budget=budget)
    fixed = homogeneous(k=k, eps0=eps0, delta0=delta0)
    eps_grid = np.linspace(0.0, max(sum_epsilon(fixed), 1e-9) * 1.05, 160)
    dcurve = delta_vs_epsilon(fixed, epsilons=eps_grid, budget=budget)
    results = comparison(fixed, delta=delta, budget=budget)
    hetero = comparison(levels, delta=hdelta, budget=budget)
    csv = {
        "epsilon_vs_k": {"k": curve.x, **{f"epsilon_{m}": curve.y[m] for m in METHODS}},
        "delta_vs_epsilon": {"epsilon": dcurve.x, **{f"delta_{m}": dcurve.y[m] for m in METHODS}},
    }
    payload = {"view": "curves",
               "parameters": {"eps0": eps0, "delta0": delta0, "delta": delta, "k_max": k_max, "k": k,
                              "levels": [[lv.epsilon, lv.delta, lv.count] for lv in levels],
                              "hdelta": hdelta},
               "results_at_k": {m: g.to_json() for m, g in results.items()},
               "results_heterogeneous": {m: g.to_json() for m, g in hetero.items()},
               "epsilon_vs_k": csv["epsilon_vs_k"], "delta_vs_epsilon": csv["delta_vs_epsilon"]}
    return View(
        figures={"epsilon_vs_k": epsilon_vs_k_figure(curve.x, curve.y, delta=delta, log_x=log_k),
                 "delta_vs_epsilon": delta_vs_epsilon_figure(
                     dcurve.x, dcurve.y, k=k, target_delta=delta, labels=LABELS,
                     answers={m: g.epsilon if g.feasible else None for m, g in results.items()})},
        csv=csv, payload=payload,
        tables={"at_k": guarantee_rows(results, LABELS), "heterogeneous": guarantee_rows(hetero, LABELS)},
        summary={"best_closed_form": best_closed_form(results)})


def best_closed_form(results: dict[str, Guarantee]) -> tuple[float, float] | None:
    """(smallest closed-form ε, exact ε) among the feasible results, if both exist."""
    closed = [g.epsilon for key, g in results.items()
              if key != "optimal" and g.feasible and g.epsilon is not None]
    exact = results["optimal"]
    if not closed or exact.kind is not Kind.EXACT or exact.epsilon is None:
        return None
    return min(closed), exact.epsilon


SPEC = ViewSpec(name="curves", title="Composition curves",
                params=(EPS0, CURVES_DELTA0, CURVES_DELTA, K_MAX, K, LOG_K, HETERO_LEVELS, HETERO_DELTA),
                build=build)
