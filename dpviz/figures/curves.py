"""Composition-curve figures: ε against k and δ against ε, one trace per method."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.style import (
    AXIS_COLOR,
    LABEL_WRAP,
    figure_of,
    hover,
    layout_of,
    log_axis,
    style,
    wrap,
)


def series_figure(x: np.ndarray, series: Mapping[str, np.ndarray], *, title: str, x_title: str,
                  y_title: str, log_x: bool = False, log_y: bool = False,
                  labels: Mapping[str, str] | None = None, hover_x: str = "x = %{x:.4g}",
                  hover_y: str = "y = %{y:.6g}",
                  marks: tuple[list[dict[str, Any]], dict[str, Any]] = ([], {})) -> go.Figure:
    """Lines per method (NaN points, i.e. infeasible, are left as gaps); hover names the curve;
    ``marks``: traces drawn over them and layout entries (``target_marks``)."""
    labels = labels or {}
    data = []
    for key, y in series.items():
        s = style(key)
        data.append({"type": "scatter", "x": x, "y": y, "mode": "lines+markers" if x.size <= 40 else "lines",
                     "name": wrap(labels.get(key, s.label), LABEL_WRAP),
                     "line": {"color": s.color, "dash": s.dash, "width": s.width}, "marker": {"size": 5},
                     "hovertemplate": hover(hover_x, hover_y)})
    layout = layout_of(title=title, x_title=x_title, y_title=y_title)
    layout["xaxis"].update(type="log" if log_x else "linear", **(log_axis(x) if log_x else {}))
    layout["yaxis"].update(type="log" if log_y else "linear", exponentformat="power")
    return figure_of(data + marks[0], {**layout, "height": 520, **marks[1]})


def epsilon_vs_k_figure(ks: np.ndarray, series: Mapping[str, np.ndarray], *, delta: float,
                        log_x: bool, of: str = "") -> go.Figure:
    """Total ε at ``delta`` against k per method; ``of`` names what is composed (in the title: an
    exported figure stands alone)."""
    what = f" of {of}" if of else ""
    return series_figure(ks, series, title=f"Total ε against k{what} at total δ = {delta:.3g}",
                         x_title="k (number of composed mechanisms)", y_title="total ε",
                         log_x=log_x, hover_x="k = %{x:,.0f}", hover_y="ε = %{y:.6g}")


def delta_vs_epsilon_figure(eps: np.ndarray, series: Mapping[str, np.ndarray], *, k: int,
                            target_delta: float | None = None,
                            answers: Mapping[str, float | None] | None = None,
                            labels: Mapping[str, str] | None = None, of: str = "") -> go.Figure:
    """δ against ε per method; with ``target_delta``, the target δ line and each method's answer ε
    there (``answers``: ε by method, None where the method proves nothing); ``of`` as above."""
    title = f"Total δ against total ε of k = {k:,} {of}" if of else f"Total δ against total ε, k = {k:,}"
    marks = ([], {}) if target_delta is None else \
        target_marks(target_delta=target_delta, answers=answers or {}, labels=labels or {})
    return series_figure(eps, series, title=title,
                         x_title="total ε", y_title="total δ", log_y=True, labels=labels,
                         hover_x="ε = %{x:.4g}", hover_y="δ = %{y:.4g}", marks=marks)


def target_marks(*, target_delta: float, answers: Mapping[str, float | None], labels: Mapping[str, str],
                 answer_name: str = "ε at the target δ", log_y: bool = True
                 ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(traces, layout entries) of a dotted line at the target δ and a marker at each method's answer
    ε on it (a δ(ε) plot, δ on a log axis unless ``log_y`` is false), as dictionaries for
    ``figure_of``: the line and the label Plotly's ``add_hline`` and ``add_annotation`` would add, each
    property as they set it, without their validation (2.7 ms a figure). A target δ = 0 has no place
    on a log axis: nothing is marked."""
    if log_y and not target_delta > 0:
        return [], {}
    line = {"type": "line", "x0": 0, "x1": 1, "xref": "x domain", "y0": target_delta, "y1": target_delta,
            "yref": "y", "line": {"color": AXIS_COLOR, "dash": "dot", "width": 1.5}}
    # placed by hand: add_hline's own label ignores a log axis (it lands at 10^δ, the top)
    label = {"x": 1.0, "xref": "x domain", "xanchor": "right", "yanchor": "bottom", "showarrow": False,
             "y": float(np.log10(target_delta)) if log_y else target_delta, "yref": "y",
             "text": f"target δ = {target_delta:.3g}", "font": {"color": AXIS_COLOR, "size": 14}}
    traces = []
    found = {key: eps for key, eps in answers.items() if eps is not None and np.isfinite(eps)}
    if found:
        traces.append({
            "type": "scatter", "x": list(found.values()), "y": [target_delta] * len(found),
            "mode": "markers", "name": answer_name,
            "text": [labels.get(key, style(key).label) for key in found],
            "marker": {"size": 11, "symbol": "diamond", "color": [style(key).color for key in found],
                       "line": {"color": "white", "width": 1.5}},
            "hovertemplate": hover("%{text}: ε = %{x:.6g}", "δ = %{y:.3g}")})
    return traces, {"shapes": [line], "annotations": [label]}
