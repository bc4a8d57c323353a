"""One colour and line style per method on every page.

Colours are from the Okabe-Ito palette (colour-blind safe) plus two of Paul Tol's
muted colours; every method also has its own dash pattern, so the figures read in
greyscale, on a projector and in both Streamlit themes.
"""

from __future__ import annotations

from dataclasses import dataclass

import plotly.graph_objects as go


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
}

FONT_SIZE = 16
"""Large enough to read on a projector."""


def style(key: str) -> Style:
    return STYLES.get(key, Style(key, "#7F7F7F", "solid"))


def rgba(color: str, alpha: float) -> str:
    """'#RRGGBB' with an opacity, for fills."""
    r, g, b = (int(color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({r},{g},{b},{alpha})"


def base_layout(fig: go.Figure, *, title: str, x_title: str, y_title: str) -> go.Figure:
    """Common layout: Unicode labels (no MathJax needed offline), legible fonts."""
    fig.update_layout(
        template="plotly_white",  # white for reports; Streamlit applies its own theme on the page
        title={"text": title, "x": 0.0, "xanchor": "left"},
        font={"size": FONT_SIZE},
        xaxis_title=x_title,
        yaxis_title=y_title,
        legend={"orientation": "h", "yanchor": "top", "y": -0.18, "x": 0.0},
        margin={"l": 70, "r": 20, "t": 60, "b": 40},
        hovermode="closest",
    )
    return fig


def export_config(filename: str) -> dict:
    """plotly config for ``st.plotly_chart``: modebar exports at 3× resolution."""
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": "png", "filename": filename, "scale": 3},
        "modeBarButtonsToAdd": ["toImage"],
    }
