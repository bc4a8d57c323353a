"""A lecture without a server (issue 20): one figure per k, played by a slider in one HTML file.

The figures are the pages' own (``dpviz.figures.regions``, ``dpviz.figures.curves``, built by the
views from the same data functions); this module only stacks them as Plotly frames under a slider
over k and writes a self-contained page: plotly.js embedded, no request to any server, the dpviz
template (``dpviz.figures.style``) and each trace's hover coordinates kept.
"""

from __future__ import annotations

import html
from collections.abc import Mapping

import plotly.graph_objects as go

SLIDER_PAD_TOP = 48
"""Space between the plot's bottom edge and the slider (room for the x-axis title), in pixels."""
SLIDER_HEIGHT = 110
"""Height the slider and its k label add below the figure, in pixels."""


def _padded(fig: go.Figure, traces: int) -> list[go.Scatter]:
    """``fig``'s traces, padded with empty ones to ``traces``: every frame updates traces 0…n−1,
    so a trace one k lacks (no answer to mark) is emptied rather than left from another k."""
    empty = go.Scatter(x=[], y=[], mode="lines", showlegend=False, hoverinfo="skip")
    return [*fig.data, *([empty] * (traces - len(fig.data)))]


def _frame_layout(fig: go.Figure) -> go.Layout:
    """What changes with k besides the data: title (it names k), notes and lines; axes rescale."""
    return go.Layout(title=fig.layout.title, annotations=fig.layout.annotations or [],
                     shapes=fig.layout.shapes or [], xaxis={"autorange": fig.layout.xaxis.range is None},
                     yaxis={"autorange": fig.layout.yaxis.range is None})


def slider_figure(figures: Mapping[int, go.Figure], *, active: int) -> go.Figure:
    """One figure with a frame per k of ``figures`` (each the page's figure at that k) and a slider
    over them, showing k = ``active`` first. Frame names are the k values."""
    if active not in figures:
        raise ValueError(f"k = {active} has no figure")
    ks = sorted(figures)
    traces = max(len(f.data) for f in figures.values())
    first = figures[active]
    fig = go.Figure(data=_padded(first, traces), layout=first.layout)
    fig.frames = [go.Frame(name=str(k), data=_padded(figures[k], traces), traces=list(range(traces)),
                           layout=_frame_layout(figures[k])) for k in ks]
    play = {"mode": "immediate", "frame": {"duration": 0, "redraw": True}, "transition": {"duration": 0}}
    height = int(first.layout.height or 600) + SLIDER_HEIGHT
    fig.update_layout(
        height=height,  # the slider takes its room below the axis title (automargin), the legend below it
        sliders=[{"active": ks.index(active), "x": 0.0, "len": 1.0, "xanchor": "left",
                  "y": 0.0, "yanchor": "top", "pad": {"t": SLIDER_PAD_TOP, "b": 10},
                  "currentvalue": {"prefix": "k = ", "font": {"size": 16}},
                  "steps": [{"label": f"{k:,}", "method": "animate", "args": [[str(k)], play]} for k in ks]}])
    return fig


def lecture_html(fig: go.Figure, *, title: str) -> str:
    """A complete HTML page holding ``fig`` and plotly.js itself: opened from disk, offline, it
    draws, hovers and plays the slider without any request (no CDN, no MathJax, no fonts)."""
    body = fig.to_html(include_plotlyjs=True, include_mathjax=False, full_html=False, auto_play=False,
                       config={"displaylogo": False, "responsive": True}, div_id="lecture")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n</head>\n<body style=\"margin: 0\">\n{body}\n"
            "</body>\n</html>\n")

