"""The composition-curves view: ε against k, δ against ε, value tables (KOV §3)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import plotly.graph_objects as go

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS, expected_loss, homogeneous
from dpviz.composition.curves import Series, comparison, delta_vs_epsilon, epsilon_vs_k, k_grid
from dpviz.composition.levels import Levels, sum_epsilon
from dpviz.figures.curves import delta_vs_epsilon_figure, epsilon_vs_k_figure
from dpviz.figures.style import style
from dpviz.figures.tables import table_rows, value_table
from dpviz.guarantee import Guarantee, Kind
from dpviz.params import CURVES_DELTA, CURVES_DELTA0, EPS0, HETERO_DELTA, HETERO_LEVELS, K_MAX, LOG_K, K
from dpviz.results import results_json
from dpviz.views import View, ViewSpec

LABELS = {m: style(m).label for m in METHODS}
HETEROGENEOUS_LABELS = {**LABELS, "kov": "KOV Thm 3.5",
                        "kov_simplified": "KOV Thm 3.5, simplified (Σε_i² drift)"}
"""Row names of the heterogeneous table: KOV's closed form for mixed levels is Thm 3.5."""


def lemma7_text(eps0: float) -> str:
    """Why advanced composition grows like √k (Roth lecture 4 Lemma 7), with the numbers at ``eps0``:
    Lemma 7's bound on one step's expected privacy loss, zCDP's ε0²/2 and the exact largest KL."""
    def num(x: float) -> str:
        return f"{x:.4g}"
    return (
        "**Why √k: Roth Lemma 7.** If each of Y, Z is within a factor e^ε0 of the other, the expected "
        "privacy loss (the KL divergence) is small: D(Y‖Z) ≤ ε0(e^ε0 − 1), not ε0. The k losses add "
        "up to about kε0(e^ε0 − 1) on average, and Azuma's inequality bounds the deviation from it by "
        "ε0√(2k ln(1/δ′)) except with probability δ′: that is advanced composition. "
        f"At ε0 = {num(eps0)}: Lemma 7 gives {num(expected_loss.lemma7(eps0))} (DRV's drift); zCDP's "
        f"ε0²/2 = {num(expected_loss.zcdp_kl(eps0))}; the largest KL of any ε0-DP pair, randomized "
        f"response's ε0 tanh(ε0/2) = {num(expected_loss.worst_kl(eps0))}, is KOV Thm 3.4's drift.")


def epsilon_series(*, eps0: float, delta0: float, delta: float, k_max: int,
                   budget: Budget = budgets.PAGE) -> Series:
    """ε at total δ against k on one log-spaced grid of k ≤ k_max, for both axis types: the
    log-k switch restyles the figure, it does not change (or recompute) a number."""
    ks = tuple(int(v) for v in k_grid(k_max, log=True))
    return epsilon_vs_k(eps0=eps0, delta0=delta0, delta=delta, ks=ks, budget=budget)


def composed(eps0: float, delta0: float) -> str:
    """What the curves compose, for a figure's title: "(0.1, 0)-DP mechanisms"."""
    return f"({eps0:g}, {delta0:g})-DP mechanisms"


def epsilon_figure(curve: Series, *, delta: float, log_k: bool, eps0: float, delta0: float) -> go.Figure:
    return epsilon_vs_k_figure(curve.x, curve.y, delta=delta, log_x=log_k, of=composed(eps0, delta0))


@dataclass(frozen=True)
class AtK:
    """Everything at the fixed k: δ against ε, each method's ε at the target δ, its figure."""

    curve: Series
    results: dict[str, Guarantee]
    figure: go.Figure


@lru_cache(maxsize=32)
def delta_curves(*, eps0: float, delta0: float, k: int, budget: Budget = budgets.PAGE) -> Series:
    """δ against ε at k for every method: the part of ``at_k`` that does not depend on the target δ,
    remembered apart (a change of δ redoes only the table and the figure; 16 ms of 20 at defaults)."""
    fixed = homogeneous(k=k, eps0=eps0, delta0=delta0)
    eps_grid = np.linspace(0.0, max(sum_epsilon(fixed), 1e-9) * 1.05, 160)
    return delta_vs_epsilon(fixed, epsilons=eps_grid, budget=budget)


def at_k(*, eps0: float, delta0: float, delta: float, k: int, budget: Budget = budgets.PAGE) -> AtK:
    """δ against ε and the value table at k. Homogeneous optima cost O(√k)
    (``composition/atoms.py``)."""
    fixed = homogeneous(k=k, eps0=eps0, delta0=delta0)
    dcurve = delta_curves(eps0=eps0, delta0=delta0, k=k, budget=budget)
    results = comparison(fixed, delta=delta, budget=budget)
    figure = delta_vs_epsilon_figure(
        dcurve.x, dcurve.y, k=k, target_delta=delta, labels=LABELS, of=composed(eps0, delta0),
        answers={m: g.epsilon if g.feasible else None for m, g in results.items()})
    return AtK(curve=dcurve, results=results, figure=figure)


def heterogeneous(levels: Levels, *, hdelta: float, budget: Budget = budgets.PAGE) -> dict[str, Guarantee]:
    """Each method's ε at total δ for the heterogeneous rows (the only table that can reach the
    budget: beyond it a row shows the best closed form and says why)."""
    return comparison(levels, delta=hdelta, budget=budget)


def assemble(*, eps0: float, delta0: float, delta: float, k_max: int, k: int, levels: Levels, hdelta: float,
             curve: Series, figure_k: go.Figure, fixed: AtK, hetero: dict[str, Guarantee]) -> View:
    """The view from its parts (cheap: no bound and no figure is computed here)."""
    csv = {
        "epsilon_vs_k": curve.columns("k", "epsilon_", METHODS),
        "delta_vs_epsilon": fixed.curve.columns("epsilon", "delta_", METHODS),
    }
    payload = {"view": "curves",
               "parameters": {"eps0": eps0, "delta0": delta0, "delta": delta, "k_max": k_max, "k": k,
                              "levels": [[lv.epsilon, lv.delta, lv.count] for lv in levels],
                              "hdelta": hdelta},
               "results_at_k": results_json(fixed.results), "results_heterogeneous": results_json(hetero),
               "epsilon_vs_k": csv["epsilon_vs_k"], "delta_vs_epsilon": csv["delta_vs_epsilon"]}
    return View(
        figures={"epsilon_vs_k": figure_k, "delta_vs_epsilon": fixed.figure},
        csv=csv, payload=payload,
        tables={"at_k": table_rows(fixed.results, value_table(LABELS)),
                "heterogeneous": table_rows(hetero, value_table(HETEROGENEOUS_LABELS))},
        summary={"best_closed_form": best_closed_form(fixed.results)})


def build(*, eps0: float, delta0: float, delta: float, k_max: int, k: int, log_k: bool,
          levels: Levels, hdelta: float, budget: Budget = budgets.PAGE) -> View:
    """ε against k, δ against ε, the value tables. ``budget`` (default: the page's) bounds each
    exact optimum; beyond it a table row shows the best closed form and says why, a curve point is
    left out. The page caches the parts (``epsilon_series``, ``epsilon_figure``, ``at_k``,
    ``heterogeneous``) separately and assembles them the same way."""
    curve = epsilon_series(eps0=eps0, delta0=delta0, delta=delta, k_max=k_max, budget=budget)
    return assemble(eps0=eps0, delta0=delta0, delta=delta, k_max=k_max, k=k, levels=levels,
                    hdelta=hdelta, curve=curve, figure_k=epsilon_figure(curve, delta=delta, log_k=log_k,
                                                                    eps0=eps0, delta0=delta0),
                    fixed=at_k(eps0=eps0, delta0=delta0, delta=delta, k=k, budget=budget),
                    hetero=heterogeneous(levels, hdelta=hdelta, budget=budget))


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
