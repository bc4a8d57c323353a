"""Attack-lab figures: the empirical (P_FA, P_MD) curve of the threshold tests with its
Clopper–Pearson boxes, over the theoretical region (the tested pair's trade-off curve and the proven
R(ε, δ), KOV §2). Data in, ``go.Figure`` out: no bound is computed here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.regions import region_spec
from dpviz.figures.style import figure_of, hover
from dpviz.regions.boundary import Boundary

EMPIRICAL_COLOR = "#000000"
BOX_COLOR = "#D55E00"
POINT_COLOR = "#CC79A7"
REGION_COLORS = {"tradeoff": "#0072B2", "proven": "#7F7F7F"}
MARKED_POINTS = 60
"""Most thresholds drawn with a marker each (more: the line alone)."""


def box_trace(boxes: Mapping[str, np.ndarray], *, confidence: float) -> dict[str, Any]:
    """All boxes as one trace of closed rectangles (``None`` between them), lightly filled."""
    xs: list[float | None] = []
    ys: list[float | None] = []
    for x0, x1, y0, y1 in zip(boxes["p_fa_lower"], boxes["p_fa_upper"], boxes["p_md_lower"],
                              boxes["p_md_upper"], strict=True):
        xs += [float(x0), float(x1), float(x1), float(x0), float(x0), None]
        ys += [float(y0), float(y0), float(y1), float(y1), float(y0), None]
    return {"type": "scatter", "x": xs, "y": ys, "mode": "lines", "fill": "toself",
            "fillcolor": "rgba(213,94,0,0.18)", "line": {"color": BOX_COLOR, "width": 1},
            "name": f"{confidence:.0%} Clopper–Pearson boxes", "hoverinfo": "skip"}


def attack_figure(*, p_fa: np.ndarray, p_md: np.ndarray, boxes: Mapping[str, np.ndarray], confidence: float,
                  regions: Mapping[str, Boundary], labels: Mapping[str, str], title: str,
                  point: tuple[float, float] | None = None, point_label: str = "",
                  test_name: str = "likelihood-ratio test", height: int = 620) -> go.Figure:
    """The regions (``"tradeoff"``: the tested pair's curve, ``"proven"``: R(ε, δ) of the proven ε),
    the empirical curve, its boxes and one highlighted test (``point``). Built from dictionaries at
    once (``figure_of``): adding the three traces to a region figure one by one had Plotly validate
    each, about 1.5 ms of a run's view (tests/figures/test_attack_figure.py: the same JSON)."""
    data, layout = region_spec(regions, title=title, labels=labels, colors=REGION_COLORS, height=height)
    data.append(box_trace(boxes, confidence=confidence))
    # a marker per threshold only where they are few: 2,000 of them made a thick black band that hid
    # the trade-off curve the attack runs along (looking at a subsampled Gaussian, k = 100)
    mode = "lines+markers" if np.size(p_fa) <= MARKED_POINTS else "lines"
    data.append({"type": "scatter", "x": p_fa, "y": p_md, "mode": mode,
                 "name": f"Attack: {test_name}, every threshold",
                 "line": {"color": EMPIRICAL_COLOR, "width": 1.5},
                 "marker": {"size": 4, "color": EMPIRICAL_COLOR},
                 "hovertemplate": hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}")})
    if point is not None:
        data.append({"type": "scatter", "x": [point[0]], "y": [point[1]], "mode": "markers",
                     "name": point_label,
                     "marker": {"size": 14, "symbol": "star", "color": POINT_COLOR,
                                "line": {"color": "#000000", "width": 1}},
                     "hovertemplate": hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}")})
    return figure_of(data, layout)
