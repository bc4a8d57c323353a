"""The lecture file (issue 20): a view's figure at every k of a grid, for ``dpviz figure … --out x.html``.

Each frame is the page's own figure at that k, from the same function the page calls
(``regions.at_k``, ``curves.at_k``); ``dpviz.figures.lecture`` puts them under a slider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import plotly.graph_objects as go

from dpviz.budget import Budget
from dpviz.composition.curves import k_grid
from dpviz.figures.lecture import slider_figure
from dpviz.validation import ParameterError
from dpviz.views import curves, regions

STEPS = 12
"""Slider positions: k on a log grid from 1 to the chosen k (fewer when k is small)."""
FIGURES: dict[str, tuple[str, ...]] = {"regions": ("single", "methods"), "curves": ("delta_vs_epsilon",)}
"""The figures that change with k, by view; the first is the lecture's default."""


def slider_ks(k: int, steps: int = STEPS) -> list[int]:
    """The slider's k values: a log grid from 1 to ``k``, ``k`` itself included."""
    return sorted({*(int(v) for v in k_grid(k, points=steps)), k})


def figure_at(view: str, which: str, values: Mapping[str, Any], k: int, budget: Budget) -> go.Figure:
    """The page's figure ``which`` of ``view`` at ``k``, the other inputs from ``values``."""
    if view == "regions":
        return regions.at_k(eps0=values["eps0"], delta0=values["delta0"], k=k, budget=budget).figures[which]
    return curves.at_k(eps0=values["eps0"], delta0=values["delta0"], delta=values["delta"], k=k,
                       budget=budget).figure


def lecture_figure(view: str, values: Mapping[str, Any], *, which: str | None,
                   budget: Budget) -> tuple[str, go.Figure]:
    """(figure name, the figure with a frame per k of :func:`slider_ks`, showing ``values["k"]``);
    the budget is shared between the frames."""
    if view not in FIGURES:
        raise ParameterError("out", f"{view} … .html", f"a .html lecture of the {' or '.join(FIGURES)} view")
    names = FIGURES[view]
    which = which or names[0]
    if which not in names:
        raise ParameterError("which", which, f"one of {', '.join(names)} (the figures that change with k) "
                                             "for a .html lecture")
    ks = slider_ks(values["k"])
    share = budget.share(1.0 / len(ks))
    return which, slider_figure({k: figure_at(view, which, values, k, share) for k in ks}, active=values["k"])
