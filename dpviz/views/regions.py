"""The privacy-regions view (KOV §2-3, Figs. 2-3)."""

from __future__ import annotations

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition.levels import homogeneous
from dpviz.figures.regions import region_figure, region_values
from dpviz.figures.style import style
from dpviz.params import DELTA0, EPS0, K
from dpviz.regions import intersection_boundary, method_region
from dpviz.views import View, ViewSpec

METHODS = ("basic", "advanced", "kov", "optimal")


def build(*, eps0: float, delta0: float, k: int, budget: Budget = budgets.PAGE) -> View:
    """R(ε0, δ0) with its optimal k-fold region, and the four methods' regions. The optimal region
    keeps O(√k) atoms (``composition/atoms.py``), far inside ``budget`` (default: the page's) for
    every k the page accepts; beyond it the view is refused with the reason (``OverBudget``)."""
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    regions = {m: method_region(m, levels, budget=budget) for m in METHODS}
    single = region_figure(
        {"single": intersection_boundary([eps0], [delta0]), "optimal": regions["optimal"]},
        title=f"R({eps0:g}, {delta0:g}) and the optimal {k}-fold region",
        labels={"single": f"One ({eps0:g}, {delta0:g})-DP mechanism",
                "optimal": f"{k}-fold composition, optimal (KOV Thm 3.3)"})
    methods = region_figure(
        regions, title=f"Regions proved for k = {k} mechanisms, each ({eps0:g}, {delta0:g})-DP")
    xs, _ = region_values(regions["optimal"])
    columns = {"P_FA": xs, **{f"P_MD_min_{m}": region_values(regions[m])[1] for m in METHODS}}
    payload = {"view": "regions", "parameters": {"eps0": eps0, "delta0": delta0, "k": k},
               "lower_boundary_vertices": {m: {"P_FA": regions[m].p_fa, "P_MD": regions[m].p_md}
                                           for m in METHODS},
               "legend": {m: style(m).label for m in METHODS}}
    return View(figures={"single": single, "methods": methods}, csv={"regions": columns}, payload=payload)


SPEC = ViewSpec(name="regions", title="Privacy regions", params=(EPS0, DELTA0, K), build=build)
