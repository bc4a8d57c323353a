"""The target-δ marks of a δ(ε) figure, made as dictionaries (``target_marks``, issue 20), are what
Plotly's own ``add_hline``, ``add_annotation`` and ``add_trace`` made before: the same figure JSON."""

from __future__ import annotations

import json
import math

import numpy as np
import plotly.graph_objects as go
import pytest

from dpviz.figures.curves import delta_vs_epsilon_figure, target_marks
from dpviz.figures.style import AXIS_COLOR, figure_of, hover, scatter, style


def plotly_marks(fig: go.Figure, *, target_delta: float, answers: dict[str, float | None],
                 labels: dict[str, str], answer_name: str, log_y: bool) -> go.Figure:
    """The marks as the figure builders added them before (Plotly's validated calls)."""
    fig.add_hline(y=target_delta, line={"color": AXIS_COLOR, "dash": "dot", "width": 1.5})
    fig.add_annotation(x=1.0, xref="x domain", xanchor="right", yanchor="bottom", showarrow=False,
                       y=float(np.log10(target_delta)) if log_y else target_delta, yref="y",
                       text=f"target δ = {target_delta:.3g}", font={"color": AXIS_COLOR, "size": 14})
    found = {key: eps for key, eps in answers.items() if eps is not None and np.isfinite(eps)}
    if found:
        fig.add_trace(scatter(
            x=list(found.values()), y=[target_delta] * len(found), mode="markers", name=answer_name,
            text=[labels.get(key, style(key).label) for key in found],
            marker={"size": 11, "symbol": "diamond", "color": [style(key).color for key in found],
                    "line": {"color": "white", "width": 1.5}},
            hovertemplate=hover("%{text}: ε = %{x:.6g}", "δ = %{y:.3g}")))
    return fig


@pytest.mark.parametrize("target", [1e-5, 0.3, 5e-324])
@pytest.mark.parametrize("answers", [{"basic": 1.2, "optimal": None, "zcdp": 0.7}, {"kov": math.inf}, {}])
@pytest.mark.parametrize("log_y", [True, False])
def test_marks_are_plotlys(target: float, answers: dict[str, float | None], log_y: bool) -> None:
    base = [{"type": "scatter", "x": np.linspace(0, 2, 5), "y": np.linspace(1e-3, 1e-9, 5), "name": "a"}]
    layout = {"yaxis": {"type": "log" if log_y else "linear"}}
    labels = {"basic": "Basic (KOV Thm 3.1)"}
    want = plotly_marks(figure_of(list(base), dict(layout)), target_delta=target, answers=answers,
                        labels=labels, answer_name="ε here", log_y=log_y)
    traces, extra = target_marks(target_delta=target, answers=answers, labels=labels, answer_name="ε here",
                                 log_y=log_y)
    got = figure_of(base + traces, {**layout, **extra})
    assert json.loads(got.to_json()) == json.loads(want.to_json())


def test_no_marks_for_a_target_of_zero_on_a_log_axis() -> None:
    assert target_marks(target_delta=0.0, answers={"basic": 1.0}, labels={}) == ([], {})
    fig = delta_vs_epsilon_figure(np.linspace(0, 1, 3), {"basic": np.ones(3)}, k=3, target_delta=0.0)
    assert not fig.layout.shapes and len(fig.data) == 1
