"""Privacy-region figures (KOV Figs. 1-3): P_FA on x, P_MD on y, equal axes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.colors as pcolors
import plotly.graph_objects as go

from dpviz.figures.style import AXIS_COLOR, LABEL_WRAP, TEXT_COLOR, figure_of, hover, layout_of, style, wrap
from dpviz.regions.boundary import Boundary, region_polygon

MAX_DRAWN_VERTICES = 4000
"""Vertices drawn per boundary; beyond that, vertices closer than the screen can show are merged."""


def thin(boundary: Boundary, max_points: int = MAX_DRAWN_VERTICES) -> Boundary:
    """Drop vertices that are closer than ~1e-4 to the previous kept one (display only)."""
    x, y = boundary.p_fa, boundary.p_md
    if x.size <= max_points:
        return boundary
    keep = [0]
    for i in range(1, x.size - 1):
        if abs(x[i] - x[keep[-1]]) + abs(y[i] - y[keep[-1]]) > 1e-4:
            keep.append(i)
    keep.append(x.size - 1)
    return Boundary(p_fa=x[keep], p_md=y[keep])


VACUOUS_AREA = 1e-3
"""A region whose complement (the tests it rules out) covers less of the square than this is drawn
as the full square: the figure says so in words."""


def excluded_area(boundary: Boundary) -> float:
    """Area of the square the region rules out: twice the area under its lower boundary (the region
    is symmetric about P_FA = P_MD)."""
    return 2.0 * float(np.trapezoid(boundary.p_md, boundary.p_fa))


FILL_TINT = 0.16
"""Strength of a region's fill: its colour mixed with this much of itself and the rest white."""


def tint(color: str, strength: float = FILL_TINT) -> str:
    """'#RRGGBB' mixed with white, opaque: nested regions each show their own tint, never a mix of
    every fill beneath them (translucent fills stacked into a muddy brown where four overlapped)."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return "rgb({},{},{})".format(*(round(255 - (255 - c) * strength) for c in (r, g, b)))


def region_figure(regions: Mapping[str, Boundary], *, title: str,
                  labels: Mapping[str, str] | None = None, colors: Mapping[str, str] | None = None,
                  fill: bool = True, height: int = 620, left_out: str | None = None) -> go.Figure:
    """The figure of ``region_spec``'s traces and layout."""
    return figure_of(*region_spec(regions, title=title, labels=labels, colors=colors, fill=fill,
                                  height=height, left_out=left_out))


def region_spec(regions: Mapping[str, Boundary], *, title: str,
                labels: Mapping[str, str] | None = None, colors: Mapping[str, str] | None = None,
                fill: bool = True, height: int = 620, left_out: str | None = None
                ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The traces and layout (dictionaries, ``figure_of``) of an overlay of privacy regions, largest
    first so smaller ones stay visible. Fills are light
    opaque tints drawn first, every outline on top of every fill (a region's boundary stays visible
    where a smaller region covers its fill); the grid is drawn above the fills. Hover reads
    (P_FA, P_MD) on the boundary of the region under the pointer (the outline answers, the fill
    never does). A region that fills the square is named in a note on the figure; ``left_out`` says
    in a note at the foot of the square why a region is not drawn (kept out of the title, which the
    modebar would cover once it wraps to more lines)."""
    labels, colors = labels or {}, colors or {}
    vacuous: list[str] = []
    fills: list[dict[str, Any]] = []
    outlines: list[dict[str, Any]] = []
    for key, boundary in regions.items():
        s = style(key)
        name = labels.get(key, s.label)
        color = colors.get(key, s.color)
        x, y = region_polygon(thin(boundary))
        shown = wrap(name, LABEL_WRAP)
        if fill:
            fills.append({"type": "scatter", "x": x, "y": y, "mode": "none", "fill": "toself",
                          "fillcolor": tint(color), "name": shown, "legendgroup": key, "showlegend": False,
                          "hoverinfo": "skip"})
        outlines.append({
            "type": "scatter", "x": x, "y": y, "mode": "lines", "name": shown, "legendgroup": key,
            "line": {"color": color, "dash": s.dash if key not in colors else "solid", "width": s.width},
            "hovertemplate": hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}"),
        })
        if excluded_area(boundary) < VACUOUS_AREA:
            vacuous.append(name)
    diagonal = {"type": "scatter", "x": [0, 1], "y": [1, 0], "mode": "lines",
                "name": wrap("No privacy loss (P_FA + P_MD = 1)", LABEL_WRAP),
                "line": {"color": "rgba(128,128,128,0.6)", "width": 1, "dash": "dot"},
                "hovertemplate": hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}")}
    layout = layout_of(title=title, x_title="P_FA (false alarm)", y_title="P_MD (missed detection)")
    layout["xaxis"].update(range=[0, 1], constrain="domain", layer="above traces")
    layout["yaxis"].update(range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain",
                           layer="above traces")
    layout["height"] = height  # the square plot fills the width; less height for narrow columns
    notes = [vacuous_note(vacuous)] if vacuous else []
    if left_out:
        notes.append({"x": 0.02, "y": 0.02, "xref": "x domain", "yref": "y domain", "xanchor": "left",
                      "yanchor": "bottom", "text": wrap(left_out, 26), "showarrow": False, "align": "left",
                      "font": {"size": 11, "color": TEXT_COLOR}})  # no box: every outline stays in view
    if notes:
        layout["annotations"] = notes
    return [*fills, *outlines, diagonal], layout


def sequential_colors(n: int) -> list[str]:
    """``n`` colours of the colour-blind-safe Viridis scale as '#RRGGBB', dark to light, stopping
    before its pale yellow end (which vanishes on white)."""
    stops = [0.0] if n == 1 else list(np.linspace(0.0, 0.82, n))
    return ["#" + "".join(f"{round(255 * float(c)):02X}" for c in rgb)
            for rgb in pcolors.sample_colorscale("Viridis", stops, colortype="tuple")]


def nested_region_figure(regions: Mapping[int, Boundary], *, eps0: float, delta0: float,
                         height: int = 620) -> go.Figure:
    """Optimal k-fold regions of one (ε0, δ0) for several k, nested (KOV Fig. 2): smaller k inside."""
    ks = sorted(regions, reverse=True)  # largest region first, so the smaller ones stay visible
    colors = dict(zip(ks, reversed(sequential_colors(len(ks))), strict=True))
    return region_figure(
        {str(k): regions[k] for k in ks},
        title=f"Optimal k-fold regions of ({eps0:g}, {delta0:g})-DP mechanisms, nested (KOV Fig. 2)",
        labels={str(k): f"k = {k:,}" for k in ks}, colors={str(k): colors[k] for k in ks}, height=height)


def vacuous_note(names: list[str]) -> dict[str, Any]:
    """The note that a guarantee is vacuous: its region is (almost) the whole square. Each name is
    listed as in the legend, on its own line (never inside a sentence, which read "for Any
    mechanism …")."""
    who = [wrap("• " + n.replace("<br>", " "), 34) for n in names]
    text = "<br>".join(["Vacuous: every test is possible", "(δ ≥ 1 or ε very large):", *who])
    return {"x": 0.5, "y": 0.5, "xref": "x domain", "yref": "y domain", "text": text, "showarrow": False,
            "font": {"size": 15, "color": TEXT_COLOR}, "align": "center", "bgcolor": "rgba(255,255,255,0.85)",
            "bordercolor": AXIS_COLOR, "borderwidth": 1, "borderpad": 6}


def region_values(boundary: Boundary, points: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """The lower boundary sampled on a regular P_FA grid (for CSV exports)."""
    xs = np.linspace(0.0, 1.0, points)
    return xs, boundary(xs)
