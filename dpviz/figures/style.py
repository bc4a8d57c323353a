"""One colour and line style per method on every page.

Colours are from the Okabe-Ito palette (colour-blind safe) plus four of Paul Tol's
muted colours (wine, olive, teal, indigo); the methods of one figure also differ in dash
pattern, so the figures read in greyscale, on a projector and in both Streamlit themes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio


@dataclass(frozen=True)
class Style:
    label: str
    color: str
    dash: str
    width: float = 2.5


STYLES: dict[str, Style] = {
    "basic": Style("Basic (KOV Thm 3.1)", "#D55E00", "dot"),
    "advanced": Style("Advanced (DRV, KOV Thm 3.2)", "#E69F00", "dash"),
    "kov": Style("KOV Thm 3.4", "#CC79A7", "dashdot"),
    "optimal": Style("Optimal (KOV Thm 3.3)", "#0072B2", "solid", 3.0),
    "exact": Style("Exact worst case", "#009E73", "solid", 3.0),
    "paper": Style("Paper bound", "#882255", "longdash"),
    "pld": Style("PLD", "#56B4E9", "solid"),
    "buckets": Style("Privacy buckets", "#999999", "longdashdot"),
    "rdp": Style("Rényi DP", "#999933", "dash"),
    "analytic": Style("Analytic", "#44AA99", "dot", 3.0),
    "single": Style("One mechanism", "#7F7F7F", "solid", 1.5),
    "zcdp": Style("zCDP (Steinke Thm 18/22)", "#332288", "longdash"),
    "kov_simplified": Style("KOV Thm 3.4, simplified", "#117733", "longdashdot"),
}
"""Method keys (``dpviz.composition.METHODS``) and mechanism routes. New keys go at the end: the
template's colorway follows this order, so earlier traces keep their colours."""

FONT_SIZE = 16
"""Large enough to read on a projector."""
LEGEND_FONT_SIZE = 14
FONT_FAMILY = 'Arial, "Liberation Sans", Helvetica, sans-serif'
"""Arial or its metric twin (Liberation Sans, which fontconfig substitutes for Arial on Linux): the
same text widths on screen and in kaleido's Chromium, so an export is laid out as the screen is."""
TEXT_COLOR = "#262730"
GRID_COLOR = "#E1E4EA"
AXIS_COLOR = "#8C8F99"
TEMPLATE_NAME = "dpviz"
"""The Plotly template of every figure (``plotly.io.templates["dpviz"]``)."""

LABEL_WRAP = 30
"""Legend labels longer than this wrap onto a second line (a 390 px phone-width export fits)."""
TITLE_WRAP = 42
"""Titles longer than this wrap at a word boundary."""


def _template() -> go.layout.Template:
    """plotly_white with the app's font, colours, title and legend placement."""
    t = go.layout.Template(pio.templates["plotly_white"])
    axis = {"gridcolor": GRID_COLOR, "linecolor": AXIS_COLOR, "showline": True, "ticks": "outside",
            "tickcolor": AXIS_COLOR, "zerolinecolor": GRID_COLOR, "automargin": True,
            "title": {"standoff": 8}}
    t.layout.update(
        font={"family": FONT_FAMILY, "size": FONT_SIZE, "color": TEXT_COLOR},
        colorway=[s.color for s in STYLES.values()],
        paper_bgcolor="white",
        plot_bgcolor="white",
        # above the plot area, pushing the top margin as far as a wrapped title needs
        title={"x": 0.0, "xref": "container", "xanchor": "left", "pad": {"l": 12, "b": 14},
               "y": 1.0, "yref": "paper", "yanchor": "bottom", "automargin": True,
               "font": {"size": FONT_SIZE + 2}},
        # below the x-axis title, from the figure's left edge: a legend row can use the full width
        legend={"orientation": "h", "xref": "container", "x": 0.0, "xanchor": "left",
                "yref": "container", "y": 0.0, "yanchor": "bottom",
                "font": {"size": LEGEND_FONT_SIZE}, "itemwidth": 30, "bgcolor": "rgba(255,255,255,0)"},
        margin={"l": 12, "r": 16, "t": 16, "b": 12, "autoexpand": True},
        hovermode="closest",
        hoverlabel={"font": {"family": FONT_FAMILY, "size": LEGEND_FONT_SIZE}, "namelength": -1},
        xaxis=axis,
        yaxis=axis,
    )
    # only what these figures use: plotly_white also styles 22 other trace types and the 3-D, polar,
    # ternary and map subplots, 6 KB of every figure's JSON sent on every change (issue 20) and a
    # deep copy in every figure's construction; a trace type not listed would still draw, in
    # plotly.js's own defaults
    spec = t.to_plotly_json()
    spec["data"] = {kind: spec["data"][kind] for kind in TRACE_TYPES}
    spec["layout"] = {key: value for key, value in spec["layout"].items() if key not in _UNUSED_LAYOUT}
    return go.layout.Template(spec)


TRACE_TYPES = ("scatter", "bar")
"""The trace types of dpviz's figures, the only ones its template styles (tests/figures/
test_template.py checks every figure of every view against it)."""
_UNUSED_LAYOUT = frozenset({"colorscale", "coloraxis", "geo", "polar", "scene", "ternary"})


pio.templates[TEMPLATE_NAME] = _template()
pio.templates.default = TEMPLATE_NAME
"""Every figure starts in the dpviz template: Plotly assigns its default template without validating
it again, ~0.5 ms per figure instead of ~11 ms for ``update_layout(template=…)`` (three figures
per rerun on the regions page)."""
TEMPLATE_SPEC = pio.templates[TEMPLATE_NAME].to_plotly_json()
"""The template as a dictionary, which ``figure_of`` hands to each figure: Plotly builds a figure's
template from it in 0.5 ms, where assigning the default template deep-copies it (3.5 ms), and
Streamlit's import makes its own template the default (15 ms a figure, validated, by name)."""


def style(key: str) -> Style:
    return STYLES.get(key, Style(key, "#7F7F7F", "solid"))


def rgba(color: str, alpha: float) -> str:
    """'#RRGGBB' with an opacity, for fills."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def wrap(text: str, width: int) -> str:
    """``text`` broken with ``<br>`` at spaces so that no line is much longer than ``width``."""
    if len(text) <= width or "<br>" in text:
        return text
    lines: list[str] = []
    line = ""
    for word in text.split(" "):
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    lines.append(line)
    return "<br>".join(lines)


def scatter(**props: Any) -> go.Scatter:
    """``go.Scatter(**props)`` without validation (see ``figure_of``), for a trace added to a
    figure of ``figure_of``."""
    return go.Scatter(_validate=False, **props)


def figure_of(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure made at once from its traces and layout as dictionaries (each trace with its
    ``type``), in the dpviz template, without Plotly's validation: a region figure took 13 ms to
    build property by property (12 of them in Plotly's checks and property tree), 2 ms so
    (benchmarks/results/change_cpu.md). The builders set only properties the schema has, which
    tests/figures/test_unvalidated.py checks for every figure of every view: each, rebuilt with
    validation, gives the same JSON."""
    return go.Figure({"data": data, "layout": {"template": TEMPLATE_SPEC, **layout}}, _validate=False)


def layout_of(*, title: str, x_title: str, y_title: str) -> dict[str, Any]:
    """The dpviz layout of a figure (``figure_of``): Unicode labels (no MathJax needed offline) and
    a wrapped title; the builders wrap legend labels (``wrap(name, LABEL_WRAP)``)."""
    return {"title": {"text": wrap(title, TITLE_WRAP)}, "xaxis": {"title": {"text": x_title}},
            "yaxis": {"title": {"text": y_title}}}


def log_axis(x: Any) -> dict[str, Any]:
    """A log x axis over the positive values of ``x`` labelled with ``log_ticks`` ({} where there is
    no range to label)."""
    xs = np.asarray(x, dtype=float)
    xs = xs[np.isfinite(xs) & (xs > 0)]
    if xs.size and xs.max() > xs.min():
        ticks, text = log_ticks(float(xs.min()), float(xs.max()))
        return {"tickvals": ticks, "ticktext": text}
    return {}


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def log_tick_text(v: float) -> str:
    """A log axis' tick label written in full: Plotly's own labels the ticks between decades with
    their first digit only, and a figure ending at k = 500 read "5" (issue 21)."""
    exponent = round(math.log10(v))
    if v >= 1e5 and math.isclose(v, 10.0 ** exponent):
        return f"10{str(exponent).translate(_SUPERSCRIPT)}"
    return f"{v:,.0f}" if v >= 1 and float(v).is_integer() else f"{v:g}"


def log_ticks(lo: float, hi: float) -> tuple[list[float], list[str]]:
    """Tick values and full labels for a log axis over [lo, hi]: 1, 2, 5 per decade over at most
    three decades, one per decade beyond (labels stay apart on a phone)."""
    steps = (1.0, 2.0, 5.0) if math.log10(hi / lo) <= 3 else (1.0,)
    values = [m * 10.0 ** e for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
              for m in steps]
    ticks = [v for v in values if lo * (1 - 1e-9) <= v <= hi * (1 + 1e-9)]
    return ticks, [log_tick_text(v) for v in ticks]


def hover(x: str, y: str) -> str:
    """A hovertemplate: the trace's own name and both coordinates (``x``, ``y``: the text with
    ``%{x…}``, ``%{y…}`` placeholders)."""
    return f"%{{fullData.name}}<br>{x}<br>{y}<extra></extra>"


MODEBAR_REMOVED = ("zoom2d", "pan2d", "select2d", "lasso2d", "zoomIn2d", "zoomOut2d", "autoScale2d",
                   "resetScale2d")
"""Left out of the modebar, which keeps its PNG button: dragging still zooms and a double click
resets. On a phone Plotly always shows the modebar, and a full one covered the title."""


def export_config(filename: str) -> dict:
    """plotly config for ``st.plotly_chart``: modebar exports at 3× resolution."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 3},
        "modeBarButtonsToAdd": ["toImage"],
        "modeBarButtonsToRemove": list(MODEBAR_REMOVED),
    }
