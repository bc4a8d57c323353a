"""Figures and tables for the mechanisms view: data in, plotly Figure out, no bounds computed here."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.curves import target_marks
from dpviz.figures.style import LABEL_WRAP, figure_of, hover, layout_of, log_axis, rgba, style, wrap
from dpviz.figures.tables import (
    Column,
    end_column,
    key_column,
    kind_column,
    label_column,
    note_column,
    raw_column,
    time_column,
    width_column,
)

LABELS = {
    "pld": "PLD (certified interval)",
    "analytic": "Analytic (Steinke Cor. 8/10)",
    "rdp": "Rényi DP (Steinke Thm 34)",
    "rdp_analytic": "Rényi DP, analytic subsampling bound (docs/MATH.md §11.5)",
    "zcdp": "zCDP (Steinke Lemma 12 / Prop. 16, Thm 13, Prop. 14)",
    "buckets": "Privacy buckets (Meiser-Mohammadi)",
    "generic": "Generic optimal (KOV Thm 3.3, same per-step ε0, δ0)",
    "optimal": "Generic optimal (KOV Thm 3.3, same per-step ε0, δ0)",
    "exact": "Exact optimum (KOV Thm 3.3, product of canonical pairs)",
    "kov": "KOV Thm 3.5",
    "pure": "Pure DP, basic composition (kε0, KOV Thm 3.1)",
}

ROUTE_KEYS = ("exact", "analytic", "pld", "rdp", "rdp_analytic", "zcdp", "generic", "pure", "buckets")
"""Every key ``dpviz.mechanisms.routes.routes`` can return, in its order (the CLI's help lists them;
tests/figures/test_labels_complete.py fails when a route is added without a label here)."""

ROUTE_LABELS = {**LABELS, "exact": "Exact (finite atoms, Steinke Prop. 7)"}
"""Names of the mechanism routes (``ROUTE_KEYS``); "exact" there composes the atoms."""


MAX_BARS = 2000
"""Most bars the loss histogram draws: a fine grid (20,000–40,000 cells, 0.5 MB of JSON, seconds
to draw) is merged into at most this many bars for display only; the accounting uses the grid."""


def rebin(losses: np.ndarray, masses: np.ndarray, *, max_bars: int = MAX_BARS
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, int]:
    """Merge runs of neighbouring grid cells into at most ``max_bars`` bars, mass-preserving.

    Only the span from the first to the last cell with positive mass is kept. Returns each bar's
    left and right edge (cell centres ± half a cell), its P-mass (the sum of its cells'), its
    mass-weighted mean loss, and the number of cells per bar (1: nothing merged)."""
    losses = np.asarray(losses, dtype=float)
    masses = np.asarray(masses, dtype=float)
    nz = np.flatnonzero(masses > 0)
    if nz.size == 0:
        empty = np.empty(0)
        return empty, empty, empty, empty, 1
    x, m = losses[nz[0]:nz[-1] + 1], masses[nz[0]:nz[-1] + 1]
    half = 0.5 * (float(np.min(np.diff(x))) if x.size > 1 else 1.0)
    cells = max(1, -(-x.size // max(1, max_bars)))  # ceil: at most max_bars bars
    starts = np.arange(0, x.size, cells)
    ends = np.minimum(starts + cells, x.size) - 1
    mass = np.add.reduceat(m, starts)
    moment = np.add.reduceat(m * x, starts)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(mass > 0, moment / np.where(mass > 0, mass, 1.0), 0.5 * (x[starts] + x[ends]))
    return x[starts] - half, x[ends] + half, mass, mean, cells


def pld_histogram_figure(losses: np.ndarray, masses: np.ndarray, *, p_inf: float, title: str,
                         max_bars: int = MAX_BARS) -> go.Figure:
    """P-mass of the privacy loss on its grid (log scale), mass at +∞ noted in the legend. A grid
    finer than ``max_bars`` cells is merged for display (``rebin``: each bar holds the summed mass
    of its cells; the hover and the axis title say so)."""
    s = style("pld")
    left, right, mass, mean, cells = rebin(losses, masses, max_bars=max_bars)
    keep = mass > 0
    left, right, mass, mean = left[keep], right[keep], mass[keep], mean[keep]
    merged = cells > 1
    name = f"P(L = ℓ); P(L = +∞) = {p_inf:.3g}"
    if merged:
        name = f"P(L in bar), {cells} cells per bar (display); P(L = +∞) = {p_inf:.3g}"
        tip = hover("ℓ in [%{customdata[0]:.5g}, %{customdata[1]:.5g}] (centre %{x:.5g}), "
                    "mean %{customdata[2]:.5g}",
                    f"P-mass = %{{y:.3g}} (sum of {cells} grid cells, merged for display)")
    else:
        tip = hover("ℓ = %{x:.5g}", "P-mass = %{y:.3g}")  # one cell per bar: its centre is its loss
    # hover-only numbers in single precision (7 digits; 5 shown): a smaller figure to send
    bars = {"type": "bar", "x": 0.5 * (left + right), "y": mass, "width": (right - left).astype(np.float32),
            "name": wrap(name, LABEL_WRAP),
            "customdata": np.column_stack([left, right, mean]).astype(np.float32),
            "marker": {"color": s.color, "line": {"width": 0}}, "hovertemplate": tip}
    y_title = "P-mass per bar" if merged else "P-mass"  # short: a long one ran over the title (the
    # legend and the hover say the cells are merged)
    layout = layout_of(title=title, x_title="privacy loss ℓ = ln P(x)/Q(x)", y_title=y_title)
    layout["yaxis"].update(type="log", exponentformat="power")
    return figure_of([bars], {**layout, "height": 420, "bargap": 0, "showlegend": True})


def _band_traces(x: np.ndarray, lower: np.ndarray, upper: np.ndarray, lines: Mapping[str, np.ndarray], *,
                 mode: str, hover_x: str, hover_y: str,
                 lines_style: Mapping[str, str]) -> list[dict[str, Any]]:
    """The certified PLD band [lower, upper] (filled) and reference curves, one trace each.
    Hover is on the points only (``hoveron="points"``): the fill never answers for a curve."""
    s = style("pld")
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": x, "y": upper, "mode": mode, "name": "PLD upper (sound)",
         "line": {"color": s.color, "width": s.width},
         "hovertemplate": hover(hover_x, f"{hover_y} ≤ %{{y:.6g}}")},
        {"type": "scatter", "x": x, "y": lower, "mode": mode, "name": "PLD lower",
         "line": {"color": s.color, "width": 1, "dash": "dot"}, "fill": "tonexty",
         "fillcolor": rgba(s.color, 0.25), "hoveron": "points",
         "hovertemplate": hover(hover_x, f"{hover_y} ≥ %{{y:.6g}}")}]
    for key, y in lines.items():
        st_ = style(lines_style.get(key, key))
        data.append({"type": "scatter", "x": x, "y": y, "mode": mode,
                     "name": wrap(LABELS.get(key, st_.label), LABEL_WRAP),
                     "line": {"color": st_.color, "dash": st_.dash, "width": st_.width},
                     "hovertemplate": hover(hover_x, f"{hover_y} = %{{y:.6g}}")})
    return data


def delta_band_figure(eps: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                      lines: Mapping[str, np.ndarray], *, k: int, target_delta: float | None = None,
                      answer: tuple[float | None, float | None] | None = None,
                      of: str = "") -> go.Figure:
    """δ(ε) of ``of`` (the mechanism's name, in the title) as the certified band [lower, upper]
    plus reference curves (NaN = no value); with ``target_delta``, the target δ line and the
    certified answer ``answer`` = (ε lower, ε upper)."""
    marks: tuple[list[dict[str, Any]], dict[str, Any]] = ([], {})
    if target_delta is not None:
        lo, up = answer or (None, None)
        marks = target_marks(target_delta=target_delta, answers={"pld_lower": lo, "pld": up},
                             labels={"pld_lower": "PLD: ε ≥", "pld": "PLD: ε ≤"},
                             answer_name="certified ε at the target δ")
    fig = figure_of(_band_traces(eps, np.maximum(lower, 1e-300), upper, lines, mode="lines",
                                 hover_x="ε = %{x:.4g}", hover_y="δ", lines_style={}) + marks[0],
                    {**layout_of(title=f"δ(ε) of {of or 'the composed mechanism'}, k = {k:,}",
                                 x_title="total ε", y_title="total δ"), **marks[1]})
    finite = upper[np.isfinite(upper) & (upper > 0)]
    floor = max(float(finite.min()) if finite.size else 1e-12, 1e-16)  # show down to the band's end
    if target_delta is not None:
        floor = min(floor, target_delta / 10)  # the target δ line stays in view
    fig.update_yaxes(type="log", exponentformat="power", range=[np.log10(floor) - 0.5, 0.05])
    fig.update_layout(height=480)
    return fig


def epsilon_vs_k_figure(ks: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                        lines: Mapping[str, np.ndarray], *, delta: float, of: str = "") -> go.Figure:
    """ε against k: PLD band and the other routes; ``of`` names the mechanism (in the title)."""
    what = f" of {of}" if of else ""
    layout = layout_of(title=f"Total ε against k{what} at total δ = {delta:.3g}", x_title="k",
                       y_title="total ε")
    layout["xaxis"].update(type="log", **log_axis(ks))
    layout["yaxis"].update(type="log", exponentformat="power")  # the generic curve is often 100× higher
    return figure_of(_band_traces(ks, lower, upper, lines, mode="lines+markers", hover_x="k = %{x:,.0f}",
                                  hover_y="ε", lines_style={"generic": "optimal"}), {**layout, "height": 480})


GENERIC_MEANING = ("the worst case over every mechanism with this mechanism's per-step (ε0, δ0) at "
                   "δ0 = δ/(2k): it ignores the shape of this mechanism's privacy loss, so for a "
                   "subsampled or Gaussian mechanism it can be far above the routes that use it")
"""What the generic row means (issue 21: an ε of 278,058 beside 13 read as an error)."""


def route_table(solve: str = "epsilon") -> tuple[Column[Any], ...]:
    """The routes' table (``dpviz.figures.tables.table_rows``): route, lower, upper (of ε, or of δ
    when ``solve`` is "delta"), width, kind, time, note (source, then why there is no value, then
    technical detail); lower bounds rounded down and upper bounds up. Its CSV (``table_csv``): the
    route's key, the ends, ε and δ as stated, kind and status codes, source, reason, detail, seconds."""
    q = "ε" if solve == "epsilon" else "δ"
    return (key_column("route"), label_column("method", ROUTE_LABELS),
            end_column(f"{q} lower", "lower", "lower"), end_column(f"{q} upper", "upper", "upper"),
            raw_column("epsilon", "epsilon"), raw_column("delta", "delta"), width_column(), kind_column(),
            raw_column("kind", "kind"), raw_column("status", "status"), raw_column("source", "source"),
            raw_column("reason", "reason"), raw_column("detail", "detail"), time_column(csv="seconds"),
            note_column(meaning={"generic": GENERIC_MEANING}))


INTERVAL_TABLE: tuple[Column[Any], ...] = (
    label_column("method", LABELS), end_column("ε lower", None, "lower"),
    end_column("ε upper", None, "upper"), width_column(), time_column(), note_column(why=False, note=False))
"""The heterogeneous table: method, ε lower, ε upper, width, time, note (the source, or why there is
no value, and the grid)."""
