"""The privacy-regions view (KOV §2-3, Figs. 2-3)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial

import plotly.graph_objects as go

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import METHODS as COMPOSITION_METHODS
from dpviz.composition.levels import homogeneous
from dpviz.figures.regions import nested_region_figure, region_figure, region_values
from dpviz.figures.style import STYLES, style
from dpviz.params import DELTA0, EPS0, K, Param
from dpviz.regions import intersection_boundary, method_region
from dpviz.regions.boundary import Boundary
from dpviz.regions.methods import method_slack_region, region_methods, slack_module
from dpviz.regions.slack import TOLERANCE, SlackRegion
from dpviz.validation import ParameterError, check_count
from dpviz.views import View, ViewSpec

METHODS = region_methods()
"""basic, every method stated per slack (advanced, KOV, zCDP, …), optimal."""
LABELS = {m: style(m).label if m in STYLES else COMPOSITION_METHODS[m].label for m in METHODS}
"""Legend names: the figure style's, or the composition method's own for a method without one."""
MAX_OVERLAID = 8
"""Most k values drawn nested in one figure (more would not be told apart)."""


def check_ks(value: object) -> tuple[int, ...]:
    """The k values of the nested figure: whole numbers in [1, 1,000,000], separated by commas or
    spaces, at most ``MAX_OVERLAID`` distinct ones; sorted, repeats dropped."""
    field = "overlaid k values"
    allowed = f"1 to {MAX_OVERLAID} whole numbers in [1, 1,000,000], e.g. 1,3,10,30"
    if isinstance(value, tuple | list):
        parts: list[object] = list(value)
    else:
        parts = [p for p in str(value).replace(",", " ").split() if p]
    if not 1 <= len(parts) <= 4 * MAX_OVERLAID:
        raise ParameterError(field, value, allowed)
    try:
        ks = sorted({check_count(p, field=field, maximum=1_000_000) for p in parts})
    except ParameterError:
        raise ParameterError(field, value, allowed) from None
    if len(ks) > MAX_OVERLAID:
        raise ParameterError(field, value, allowed)
    return tuple(ks)


K_PAGE_MAX = 10_000
"""Largest k the page draws (its route budget); the CLI takes ``K``'s range."""

K_PAGE = Param("k", K.label, K.default, partial(check_count, field="k", maximum=K_PAGE_MAX),
               f"Number of composed mechanisms: any whole number from 1 to {K_PAGE_MAX:,} (type it).")
"""The page's k: typed, so every k can be chosen (a slider of log-spaced values skipped k = 7, 9,
11; issue 21); links that carried a slider value still open with it."""

KS = Param("ks", "k values overlaid (nested regions)", "1,3,10,30,100", check_ks,
           f"Up to {MAX_OVERLAID} numbers of mechanisms whose optimal regions are drawn nested, "
           "as in KOV Fig. 2, e.g. 1,3,10,30,100.")


@dataclass(frozen=True)
class AtK:
    """Everything that depends on k: each method's region (``swept``: the slack methods' sweeps, with
    their error bounds) and the two figures of k mechanisms."""

    regions: dict[str, Boundary]
    swept: dict[str, SlackRegion]
    figures: dict[str, go.Figure]


def at_k(*, eps0: float, delta0: float, k: int, budget: Budget = budgets.PAGE) -> AtK:
    """R(ε0, δ0) with its optimal k-fold region, and every method's region (``METHODS``; the slack
    methods' within ``TOLERANCE`` of the theorems', docs/MATH.md §13). The optimal region keeps
    O(√k) atoms (``composition/atoms.py``), far inside ``budget`` for every k the page accepts;
    beyond it the view is refused with the reason (``OverBudget``)."""
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    swept = {m: method_slack_region(m, levels) for m in METHODS if slack_module(m) is not None}
    regions = {m: swept[m].boundary if m in swept else method_region(m, levels, budget=budget)
               for m in METHODS}
    single = region_figure(
        {"single": intersection_boundary([eps0], [delta0]), "optimal": regions["optimal"]},
        title=f"R({eps0:g}, {delta0:g}) and the optimal {k}-fold region",
        labels={"single": f"One ({eps0:g}, {delta0:g})-DP mechanism",
                "optimal": f"{k}-fold composition, optimal (KOV Thm 3.3)"})
    methods = region_figure(
        regions, title=f"Regions proved for k = {k} mechanisms, each ({eps0:g}, {delta0:g})-DP",
        labels=LABELS)
    return AtK(regions=regions, swept=swept, figures={"single": single, "methods": methods})


@dataclass(frozen=True)
class Nested:
    """The optimal regions of several k (``nested``) and their figure."""

    regions: dict[int, Boundary]
    figure: go.Figure


def nested(*, eps0: float, delta0: float, ks: tuple[int, ...], budget: Budget = budgets.PAGE) -> Nested:
    """The optimal regions for each k in ``ks`` and their figure, nested (KOV Fig. 2); each region
    gets an equal share of ``budget``. Apart from :func:`at_k`: a change of k or of ``ks`` redoes
    only its own part."""
    share = budget.share(1.0 / len(ks))
    regions = {n: method_region("optimal", homogeneous(k=n, eps0=eps0, delta0=delta0), budget=share)
               for n in ks}
    return Nested(regions=regions, figure=nested_region_figure(regions, eps0=eps0, delta0=delta0))


def assemble(fixed: AtK, rings: Nested, *, eps0: float, delta0: float, k: int, ks: tuple[int, ...]) -> View:
    """The view from :func:`at_k` and :func:`nested` (cheap: the CSV's samples and the payload)."""
    regions, swept = fixed.regions, fixed.swept
    xs, _ = region_values(regions["optimal"])
    columns = {"P_FA": xs, **{f"P_MD_min_{m}": region_values(regions[m])[1] for m in METHODS}}
    payload = {"view": "regions", "parameters": {"eps0": eps0, "delta0": delta0, "k": k, "ks": list(ks)},
               "lower_boundary_vertices": {m: {"P_FA": regions[m].p_fa, "P_MD": regions[m].p_md}
                                           for m in METHODS},
               "nested_optimal_vertices": {str(n): {"P_FA": b.p_fa, "P_MD": b.p_md}
                                           for n, b in rings.regions.items()},
               "legend": {m: LABELS[m] for m in METHODS},
               "region_error_bound": {
                   "tolerance": TOLERANCE,
                   "note": "each slack method's drawn region contains the theorem's (the intersection over "
                           "every slack) and is larger by at most this much, in P_FA at every P_MD",
                   **{m: r.error_bound for m, r in swept.items()}}}
    return View(figures={**fixed.figures, "nested": rings.figure}, csv={"regions": columns},
                payload=payload)


def build(*, eps0: float, delta0: float, k: int, ks: tuple[int, ...] = (1, 3, 10, 30, 100),
          budget: Budget = budgets.PAGE) -> View:
    """The figures of :func:`at_k` (default budget: the page's) and the optimal regions for each k
    in ``ks`` nested (KOV Fig. 2). The page caches the two parts apart and assembles them alike."""
    return assemble(at_k(eps0=eps0, delta0=delta0, k=k, budget=budget),
                    nested(eps0=eps0, delta0=delta0, ks=ks, budget=budget),
                    eps0=eps0, delta0=delta0, k=k, ks=ks)


SPEC = ViewSpec(name="regions", title="Privacy regions", params=(EPS0, DELTA0, K, KS), build=build)
