"""Composition-curve figures: ε against k and δ against ε, one trace per method."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.style import base_layout, style


def series_figure(x: np.ndarray, series: Mapping[str, np.ndarray], *, title: str, x_title: str,
                  y_title: str, log_x: bool = False, log_y: bool = False,
                  labels: Mapping[str, str] | None = None, hover: str = "%{x:.4g}, %{y:.6g}") -> go.Figure:
    """Lines per method (NaN points, i.e. infeasible, are left as gaps)."""
    fig = go.Figure()
    labels = labels or {}
    for key, y in series.items():
        s = style(key)
        fig.add_trace(go.Scatter(
            x=x, y=y, mode="lines+markers" if x.size <= 40 else "lines",
            name=labels.get(key, s.label),
            line={"color": s.color, "dash": s.dash, "width": s.width}, marker={"size": 5},
            hovertemplate=f"{hover}<extra>%{{fullData.name}}</extra>",
        ))
    base_layout(fig, title=title, x_title=x_title, y_title=y_title)
    fig.update_xaxes(type="log" if log_x else "linear")
    fig.update_yaxes(type="log" if log_y else "linear", exponentformat="power")
    fig.update_layout(height=520)
    return fig


def epsilon_vs_k_figure(ks: np.ndarray, series: Mapping[str, np.ndarray], *, delta: float,
                        log_x: bool) -> go.Figure:
    return series_figure(ks, series, title=f"Total ε against k at total δ = {delta:.3g}",
                         x_title="k (number of composed mechanisms)", y_title="total ε",
                         log_x=log_x, hover="k=%{x:.0f}: ε=%{y:.6g}")


def delta_vs_epsilon_figure(eps: np.ndarray, series: Mapping[str, np.ndarray], *, k: int) -> go.Figure:
    return series_figure(eps, series, title=f"Total δ against total ε, k = {k:,}",
                         x_title="total ε", y_title="total δ", log_y=True,
                         hover="ε=%{x:.4g}: δ=%{y:.4g}")
