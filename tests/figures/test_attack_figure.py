"""The attack figure is built from dictionaries at once (``dpviz.figures.attack.attack_figure``,
issue 20): the same JSON as the figure built before, a region figure with its three traces added
one by one through Plotly's validated ``go.Scatter``."""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dpviz.figures import attack as fa
from dpviz.figures.regions import region_figure
from dpviz.figures.style import hover
from dpviz.views import attack as av


def validated(*, p_fa: np.ndarray, p_md: np.ndarray, boxes: Any, confidence: float, regions: Any, labels: Any,
              title: str, point: tuple[float, float] | None = None, point_label: str = "",
              test_name: str = "likelihood-ratio test", height: int = 620) -> go.Figure:
    """The attack figure as it was built before (856fc01), every trace validated by Plotly."""
    fig = region_figure(regions, title=title, labels=labels, colors=fa.REGION_COLORS, height=height)
    xs: list[float | None] = []
    ys: list[float | None] = []
    for x0, x1, y0, y1 in zip(boxes["p_fa_lower"], boxes["p_fa_upper"], boxes["p_md_lower"],
                              boxes["p_md_upper"], strict=True):
        xs += [float(x0), float(x1), float(x1), float(x0), float(x0), None]
        ys += [float(y0), float(y0), float(y1), float(y1), float(y0), None]
    fig.add_trace(go.Scatter(x=xs, y=ys, mode="lines", fill="toself", fillcolor="rgba(213,94,0,0.18)",
                             line={"color": fa.BOX_COLOR, "width": 1},
                             name=f"{confidence:.0%} Clopper–Pearson boxes", hoverinfo="skip"))
    mode = "lines+markers" if np.size(p_fa) <= fa.MARKED_POINTS else "lines"
    fig.add_trace(go.Scatter(x=p_fa, y=p_md, mode=mode, name=f"Attack: {test_name}, every threshold",
                             line={"color": fa.EMPIRICAL_COLOR, "width": 1.5},
                             marker={"size": 4, "color": fa.EMPIRICAL_COLOR},
                             hovertemplate=hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}")))
    if point is not None:
        fig.add_trace(go.Scatter(x=[point[0]], y=[point[1]], mode="markers", name=point_label,
                                 marker={"size": 14, "symbol": "star", "color": fa.POINT_COLOR,
                                         "line": {"color": "#000000", "width": 1}},
                                 hovertemplate=hover("P_FA = %{x:.4g}", "P_MD = %{y:.4g}")))
    return fig


def _json(fig: go.Figure) -> Any:
    return json.loads(pio.to_json(fig, validate=False))


def _arguments(result: av.AttackResult, **extra: Any) -> dict[str, Any]:
    regs, labels = av.regions(result)
    return {"p_fa": result.curve.p_fa, "p_md": result.curve.p_md, "boxes": result.box_bounds(),
            "confidence": result.attack.confidence, "regions": regs, "labels": labels, "title": "A title",
            **extra}


@pytest.mark.parametrize("values", [
    {"mechanism": "canonical", "trials": 2000},  # few thresholds: a marker each
    {"mechanism": "gaussian", "k": 100, "trials": 5000},  # many: the line alone
    {"mechanism": "laplace", "k": 3, "trials": 3000, "delta": 0.0},  # no proven region at δ = 0
])
def test_the_dictionary_built_figure_is_the_validated_one(values: dict[str, Any]) -> None:
    page = {"mechanism": "canonical", **{p.key: p.check(p.default) for p in av.ALL_PARAMS[1:]}}
    result = av.run(av.attack_of({**page, **values}))
    rule = {"point": (0.25, 0.5), "point_label": "Rule", "test_name": "count test", "height": 560}
    for extra in ({}, rule):
        built = fa.attack_figure(**_arguments(result, **extra))
        assert _json(built) == _json(validated(**_arguments(result, **extra)))
        assert len(built.data) == len(av.regions(result)[0]) * 2 + 3 + ("point" in extra)
