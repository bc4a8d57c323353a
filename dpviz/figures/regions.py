"""Privacy-region figures (KOV Figs. 1-3): P_FA on x, P_MD on y, equal axes."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.style import base_layout, rgba, style
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


def region_figure(regions: Mapping[str, Boundary], *, title: str,
                  labels: Mapping[str, str] | None = None, fill: bool = True, height: int = 620) -> go.Figure:
    """Overlay of privacy regions, largest first so smaller ones stay visible."""
    fig = go.Figure()
    labels = labels or {}
    for key, boundary in regions.items():
        s = style(key)
        x, y = region_polygon(thin(boundary))
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines", name=labels.get(key, s.label),
            line={"color": s.color, "dash": s.dash, "width": s.width},
            fill="toself" if fill else None, fillcolor=rgba(s.color, 0.12),
            hovertemplate="P_FA=%{x:.4f}<br>P_MD=%{y:.4f}<extra>%{fullData.name}</extra>",
        ))
    fig.add_trace(go.Scatter(x=[0, 1], y=[1, 0], mode="lines", name="No privacy loss (P_FA + P_MD = 1)",
                             line={"color": "rgba(128,128,128,0.6)", "width": 1, "dash": "dot"},
                             hoverinfo="skip"))
    base_layout(fig, title=title, x_title="P_FA (false alarm)", y_title="P_MD (missed detection)")
    fig.update_xaxes(range=[0, 1], constrain="domain")
    fig.update_yaxes(range=[0, 1], scaleanchor="x", scaleratio=1, constrain="domain")
    fig.update_layout(height=height)  # the square plot fills the width; less height for narrow columns
    return fig


def region_values(boundary: Boundary, points: int = 201) -> tuple[np.ndarray, np.ndarray]:
    """The lower boundary sampled on a regular P_FA grid (for CSV exports)."""
    xs = np.linspace(0.0, 1.0, points)
    return xs, boundary(xs)
