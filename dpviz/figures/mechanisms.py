"""Figures and tables for the mechanisms view: data in, plotly Figure out, no bounds computed here."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.curves import mark_target
from dpviz.figures.style import base_layout, hover, rgba, style
from dpviz.figures.tables import format_number
from dpviz.pld.accountant import Interval

LABELS = {
    "pld": "PLD (certified interval)",
    "analytic": "Analytic (Steinke Cor. 8/10)",
    "rdp": "Rényi DP (Steinke Thm 34)",
    "buckets": "Privacy buckets (Meiser-Mohammadi)",
    "generic": "Generic optimal (KOV Thm 3.3, same per-step ε0, δ0)",
    "optimal": "Generic optimal (KOV Thm 3.3, same per-step ε0, δ0)",
    "exact": "Exact optimum (KOV Thm 3.3, product of canonical pairs)",
    "kov": "KOV Thm 3.5",
}


def pld_histogram_figure(losses: np.ndarray, masses: np.ndarray, *, p_inf: float, title: str) -> go.Figure:
    """P-mass of the privacy loss on its grid (log scale), mass at +∞ noted in the legend."""
    s = style("pld")
    keep = masses > 0
    fig = go.Figure(go.Bar(x=losses[keep], y=masses[keep], name=f"P(L = ℓ); P(L = +∞) = {p_inf:.3g}",
                           marker={"color": s.color, "line": {"width": 0}},
                           hovertemplate=hover("ℓ = %{x:.5g}", "P-mass = %{y:.3g}")))
    base_layout(fig, title=title, x_title="privacy loss ℓ = ln P(x)/Q(x)", y_title="P-mass")
    fig.update_yaxes(type="log", exponentformat="power")
    fig.update_layout(height=420, bargap=0, showlegend=True)
    return fig


def _band_with_lines(x: np.ndarray, lower: np.ndarray, upper: np.ndarray, lines: Mapping[str, np.ndarray],
                     *, mode: str, hover_x: str, hover_y: str, lines_style: Mapping[str, str]) -> go.Figure:
    """The certified PLD band [lower, upper] (filled) and reference curves, one trace each.
    Hover is on the points only (``hoveron="points"``): the fill never answers for a curve."""
    s = style("pld")
    fig = go.Figure()
    fig.add_trace(go.Scatter(x=x, y=upper, mode=mode, name="PLD upper (sound)",
                             line={"color": s.color, "width": s.width},
                             hovertemplate=hover(hover_x, f"{hover_y} ≤ %{{y:.6g}}")))
    fig.add_trace(go.Scatter(x=x, y=lower, mode=mode, name="PLD lower",
                             line={"color": s.color, "width": 1, "dash": "dot"}, fill="tonexty",
                             fillcolor=rgba(s.color, 0.25), hoveron="points",
                             hovertemplate=hover(hover_x, f"{hover_y} ≥ %{{y:.6g}}")))
    for key, y in lines.items():
        st_ = style(lines_style.get(key, key))
        fig.add_trace(go.Scatter(x=x, y=y, mode=mode, name=LABELS.get(key, st_.label),
                                 line={"color": st_.color, "dash": st_.dash, "width": st_.width},
                                 hovertemplate=hover(hover_x, f"{hover_y} = %{{y:.6g}}")))
    return fig


def delta_band_figure(eps: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                      lines: Mapping[str, np.ndarray], *, k: int, target_delta: float | None = None,
                      answer: tuple[float | None, float | None] | None = None) -> go.Figure:
    """δ(ε) as the certified band [lower, upper] plus reference curves (NaN = no value); with
    ``target_delta``, the target δ line and the certified answer ``answer`` = (ε lower, ε upper)."""
    fig = _band_with_lines(eps, np.maximum(lower, 1e-300), upper, lines, mode="lines",
                           hover_x="ε = %{x:.4g}", hover_y="δ", lines_style={})
    if target_delta is not None:
        lo, up = answer or (None, None)
        mark_target(fig, target_delta=target_delta, answers={"pld_lower": lo, "pld": up},
                    labels={"pld_lower": "PLD: ε ≥", "pld": "PLD: ε ≤"},
                    answer_name="certified ε at the target δ")
    base_layout(fig, title=f"δ(ε) of the composed mechanism, k = {k:,}", x_title="total ε",
                y_title="total δ")
    finite = upper[np.isfinite(upper) & (upper > 0)]
    floor = max(float(finite.min()) if finite.size else 1e-12, 1e-16)  # show down to the band's end
    if target_delta is not None:
        floor = min(floor, target_delta / 10)  # the target δ line stays in view
    fig.update_yaxes(type="log", exponentformat="power", range=[np.log10(floor) - 0.5, 0.05])
    fig.update_layout(height=480)
    return fig


def epsilon_vs_k_figure(ks: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                        lines: Mapping[str, np.ndarray], *, delta: float) -> go.Figure:
    """ε against k: PLD band and the other routes."""
    fig = _band_with_lines(ks, lower, upper, lines, mode="lines+markers", hover_x="k = %{x:,.0f}",
                           hover_y="ε", lines_style={"generic": "optimal"})
    base_layout(fig, title=f"Total ε against k at total δ = {delta:.3g}", x_title="k", y_title="total ε")
    fig.update_xaxes(type="log")
    fig.update_yaxes(type="log", exponentformat="power")  # the generic curve is often 100× higher
    fig.update_layout(height=480)
    return fig


def interval_rows(results: Mapping[str, Interval]) -> list[dict[str, str]]:
    """Rows: method, ε lower, ε upper, width, time, note."""
    rows = []
    for key, iv in results.items():
        rows.append({"method": LABELS.get(key, key),
                     "ε lower": format_number(iv.lower, 8, down=True) if iv.lower is not None else "—",
                     "ε upper": format_number(iv.upper, 8),
                     "width": format_number(iv.width, 3),
                     "time (ms)": f"{iv.seconds * 1e3:.1f}",
                     "note": iv.detail})
    return rows
