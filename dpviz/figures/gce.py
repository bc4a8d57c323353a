"""Figures and table rows for the "Database priors" page (data in, plotly out; no bounds computed)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.curves import series_figure
from dpviz.figures.regions import region_figure
from dpviz.figures.tables import format_number, kind_word
from dpviz.guarantee import DIRECTION_TEXT, Guarantee
from dpviz.regions.boundary import Boundary

SERIES_LABELS = {"optimal": "Classic: compose all k (no prior)", "exact": "Exact worst case with the prior"}
"""Classic composition is drawn in the optimal-composition style, as in the region figure."""


def bound_rows(bounds: Mapping[str, Guarantee], labels: Mapping[str, str]) -> list[dict[str, str]]:
    """One row per bound: ε, δ, kind, the direction(s) of HBW Def. 3 proved, source or reason."""
    rows = []
    for key, b in bounds.items():
        ok = b.feasible
        note = b.source if ok else f"{b.source}: {b.reason}"
        if ok and b.note:
            note = f"{note} — {b.note}"
        rows.append({"bound": labels.get(key, key),
                     "ε": format_number(b.epsilon) if ok else "—",
                     "δ": format_number(b.delta, 4) if ok else "—",
                     "kind": kind_word(b),
                     "proved for": DIRECTION_TEXT[b.directions] if ok else "—",
                     "source / note": note})
    return rows


def bound_columns(bounds: Mapping[str, Guarantee], labels: Mapping[str, str]) -> dict[str, list]:
    """The bounds table for CSV: ε and δ at full precision (never rounded: an upper bound read
    from a download must not come out below the computed one), None where there is no value."""
    rows = bound_rows(bounds, labels)
    return {"bound": [r["bound"] for r in rows],
            "epsilon": [b.epsilon if b.feasible else None for b in bounds.values()],
            "delta": [b.delta if b.feasible else None for b in bounds.values()],
            "kind": [r["kind"] for r in rows],
            "proved for": [r["proved for"] for r in rows],
            "source / note": [r["source / note"] for r in rows]}


def epsilon_vs_k_figure(ks: np.ndarray, series: Mapping[str, np.ndarray], *, delta: float,
                        what: str) -> go.Figure:
    """ε at δ against k: classic composition against the exact answer under ``what``."""
    styled = {("optimal" if key == "classic" else key): y for key, y in series.items()}
    return series_figure(ks, styled, title=f"Total ε against k at δ = {delta:.3g}: {what}",
                         x_title="k (number of databases)", y_title="total ε", log_x=bool(ks.size > 1),
                         labels=SERIES_LABELS, hover_x="k = %{x:,.0f}", hover_y="ε = %{y:.6g}")


def epsilon_vs_eps0_figure(eps0s: np.ndarray, series: Mapping[str, np.ndarray], *, delta: float, k: int,
                           what: str) -> go.Figure:
    """ε at δ against the per-database ε0 (k fixed by a typed prior or allowed set): classic
    composition of all k against the exact answer under ``what``."""
    styled = {("optimal" if key == "classic" else key): y for key, y in series.items()}
    labels = {**SERIES_LABELS, "optimal": f"Classic: compose all {k:,} (no prior)"}
    return series_figure(eps0s, styled, title=f"Total ε against ε0 at δ = {delta:.3g}, k = {k:,}: {what}",
                         x_title="ε0 (each database's mechanism)", y_title="total ε", log_x=True,
                         labels=labels, hover_x="ε0 = %{x:.4g}", hover_y="ε = %{y:.6g}")


def prior_region_figure(regions: Mapping[str, Boundary], *, k: int, what: str) -> go.Figure:
    """The exact region under the prior/constraint beside the classic k-fold region."""
    labels = {"optimal": f"Classic: all {k:,} composed (KOV Thm 3.3)", "exact": f"Exact: {what}"}
    return region_figure(regions, title=f"Privacy regions, k = {k:,}", labels=labels)
