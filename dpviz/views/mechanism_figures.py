"""The Mechanisms page's figures: the loss histogram, δ(ε) with its certified band, the trade-off
region against the generic optimal region for the same per-step (ε0, δ0), and ε against k, with
their CSV columns; all k composed at once on a grid coarser than the PLD route's."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, OverBudget, cost_of
from dpviz.composition import optimal
from dpviz.figures.mechanisms import delta_band_figure, epsilon_vs_k_figure, pld_histogram_figure
from dpviz.figures.regions import VACUOUS_AREA, excluded_area, region_figure
from dpviz.figures.style import wrap
from dpviz.guarantee import Status
from dpviz.mechanisms import routes
from dpviz.pld import discretize
from dpviz.pld.accountant import compose_many
from dpviz.pld.grid import DEFAULT_TAIL
from dpviz.rdp.conversion import epsilon_from_rdp
from dpviz.rdp.subsampled import DEFAULT_ORDERS
from dpviz.regions import intersection_boundary, method_region
from dpviz.validation import ParameterError
from dpviz.views import View

CURVE_SHARE = 0.2
"""Share of the view's budget for the figures: the δ(ε) band with the trade-off region (their δ
evaluations) and the composition of every k of the ε-against-k plot."""

FIGURE_COARSENING = 4
"""The figures' grid is this many times coarser than the PLD route's: their band is as certified
(only wider) and all k of the ε-against-k plot are composed at once, at a quarter of the cost."""

BAND_POINTS, REGION_POINTS = 120, 240
"""ε grid of the δ(ε) band and of the region's envelope (thinned when over their budget share)."""


def k_values(k: int) -> list[int]:
    """The k of the ε-against-k plot: five geometric steps from 1 to k, and k."""
    return sorted({max(1, round(float(v))) for v in np.geomspace(1, k, 5)} | {k})


def delta_points(grids: int, h: float, n: int, budget: Budget) -> int:
    """How many δ(ε) evaluations of ``grids`` composed grids of width h fit ``budget`` (at most n,
    at least 12): each sums the atoms within one unit of loss above ε exactly, ≈ 1/h per grid."""
    per = cost_of("delta_eval", grids) + cost_of("delta_eval_atom", grids / h)
    return int(min(n, max(12, budget.seconds / max(per.seconds, 1e-12))))


def figures(mech: Any, *, k: int, delta: float | None = None, epsilon: float | None = None,
            h: float = 2e-4, answer: tuple[float | None, float | None] | None = None,
            budget: Budget = budgets.PAGE) -> View:
    """The figures and their CSV columns, on a grid ``FIGURE_COARSENING`` times coarser than the
    PLD route's width ``h`` (``refine``'s summary). ``answer``: the certified (lower, upper) ε that
    the δ(ε) plot marks at the target δ (the routes' table's; default: read off the coarser grid)."""
    law = mech.law
    ks = k_values(k)
    h = FIGURE_COARSENING * h  # figures: a coarser grid, still certified
    try:
        many = compose_many(law, ks, h=h, budget=budget.share(CURVE_SHARE))
    except (OverBudget, ParameterError, ArithmeticError, ValueError, MemoryError):
        many = {}  # the figures then show the other routes and a coarse one-run histogram
    figs, csv = _figures(mech, law, k=k, ks=ks, many=many, composed=many.get(k), h=h, answer=answer,
                         delta=delta if delta is not None else 1e-5, epsilon=epsilon, budget=budget)
    return View(figures=figs, csv=csv)


def _figures(mech: Any, law: Any, *, k: int, ks: list[int], many: Mapping[int, Any], composed: Any, h: float,
             delta: float, epsilon: float | None, budget: Budget,
             answer: tuple[float | None, float | None] | None = None
             ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
    """Histogram, δ(ε) band, trade-off region, ε against k; and the CSV columns of the band
    (``delta_vs_epsilon``) and of ε against k (``epsilon_vs_k``)."""
    lo = up = None
    if answer is not None:
        lo, up = answer
    elif composed is not None and delta > 0:
        lo, up = composed.epsilon(delta)
    top = max(v for v in (up, epsilon, 0.5) if v is not None and math.isfinite(v))
    curve_budget = budget.share(CURVE_SHARE / 3)
    n_band = BAND_POINTS if composed is None else \
        delta_points(len(composed.upper) + len(composed.lower), composed.h, BAND_POINTS, curve_budget)
    eps = np.linspace(0.0, 2.5 * top, n_band)
    band = np.array([composed.delta(float(e)) for e in eps]) if composed is not None \
        else np.full((eps.size, 2), np.nan)
    levels = None
    if delta > 0:
        level = routes.step_level(mech, k, step_delta=delta / (2.0 * k))  # as the generic route's
        levels = None if isinstance(level, str) else (level,)
    lines = {} if levels is None else {
        "optimal": np.array([optimal.delta_for_epsilon(levels, epsilon=float(e), budget=budget).delta
                             for e in eps], dtype=float)}
    closed = [mech.closed_form(k, epsilon=float(e)) for e in eps[:1]]
    if closed[0] is not None:
        lines["analytic"] = np.array([mech.closed_form(k, epsilon=float(e)).delta for e in eps], dtype=float)
    lines = {key: np.where(v > 0, v, np.nan) for key, v in lines.items()}

    regions = {} if levels is None else {"optimal": method_region("optimal", levels)}
    left_out = "optimal" in regions and excluded_area(regions["optimal"]) < VACUOUS_AREA
    if left_out:
        del regions["optimal"]  # the whole square says nothing about this mechanism (issue 21)
    if composed is not None:
        n_r = delta_points(len(composed.upper), composed.h, REGION_POINTS, budget.share(CURVE_SHARE * 2 / 3))
        eps_r = np.linspace(0.0, 2.5 * top, n_r)
        deltas = np.minimum([composed.delta_upper(float(e)) for e in eps_r], 1.0)
        regions["pld"] = intersection_boundary(eps_r, deltas)

    kl, ku, gen, rdp = [], [], [], []
    try:  # ρ of k steps is k·ρ of one (Steinke Lemma 31): one curve for every k
        one_step = routes.rdp_curve([(mech, 1)])
    except NotImplementedError:
        one_step = None
    for kk in ks:
        a, b = many[kk].epsilon(delta) if kk in many else (None, None)
        kl.append(np.nan if a is None else a)
        ku.append(np.nan if b is None else b)
        g = routes.generic([(mech, kk)], delta=delta)
        gen.append(np.nan if g.status is not Status.OK or g.upper is None else g.upper)
        if one_step is not None and bool(np.any(np.isfinite(one_step))) and delta > 0:
            rdp.append(epsilon_from_rdp(DEFAULT_ORDERS, np.asarray(kk * one_step, dtype=np.float64),
                                        delta=delta)[0])
        else:
            rdp.append(np.nan)
    k_lines = {"generic": np.array(gen), "rdp": np.array(rdp)}
    if composed is not None and composed.single is not None:
        single = composed.single
    else:  # a histogram on at most ~4096 cells (a fine one may be what was over budget)
        lo_l, hi_l = law.support(DEFAULT_TAIL)
        single = discretize.pessimistic(law, h=max(h, (hi_l - lo_l) / 4096))
    figs = {
        "histogram": pld_histogram_figure(single.losses, single.mass, p_inf=single.p_inf,
                                          title=f"Privacy loss of one run: {law.name}"),
        "delta": delta_band_figure(eps, band[:, 0], band[:, 1], lines, k=k,
                                   target_delta=delta if epsilon is None and delta > 0 else None,
                                   answer=(lo, up), of=law.name),
        # wrapped narrower than other titles: in its half-width column a 40-character line ran under the
        # modebar, and "k =" stays with its value
        "region": region_figure(regions, title=f"Trade-off region after k = {k:,}<br>"
                                               + wrap(f"runs of {law.name}", 32),
                                labels={"pld": "This mechanism (PLD, sound)",
                                        "optimal": "Any mechanism with the same per-step (ε0, δ0)"},
                                height=480,  # shown in a half-width column beside the histogram
                                left_out="Generic region not drawn: the worst case for this per-step "
                                         "(ε0, δ0) allows every test" if left_out else None),
        "epsilon_vs_k": epsilon_vs_k_figure(np.array(ks, dtype=float), np.array(kl), np.array(ku), k_lines,
                                            delta=delta, of=law.name),
    }
    return figs, {"delta_vs_epsilon": {"epsilon": eps, "delta_lower": band[:, 0], "delta_upper": band[:, 1]},
                  "epsilon_vs_k": {"k": np.array(ks), "epsilon_lower": np.array(kl),
                                   "epsilon_upper": np.array(ku)}}

