"""Figures and table rows for the "Database priors" page (data in, plotly out; no bounds computed)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.curves import series_figure
from dpviz.figures.regions import region_figure
from dpviz.figures.tables import NO_VALUE, Column, kind_column, label_column, source_column, value_column
from dpviz.guarantee import DIRECTION_TEXT
from dpviz.regions.boundary import Boundary

SERIES_LABELS = {"optimal": "Classic: compose all k (no prior)", "exact": "Exact worst case with the prior"}
"""Classic composition is drawn in the optimal-composition style, as in the region figure."""


def bound_table(labels: Mapping[str, str]) -> tuple[Column[Any], ...]:
    """The bounds table (``dpviz.figures.tables.table_rows``): ε, δ, kind, the direction(s) of HBW
    Def. 3 proved, source or reason. Its CSV (``table_csv``) holds ε and δ at full precision."""
    return (label_column("bound", labels, csv="bound"), value_column("ε", "epsilon", "epsilon"),
            value_column("δ", "delta", "delta", 4), kind_column(csv="kind"),
            Column("proved for", "proved for", lambda key, b: DIRECTION_TEXT[b.directions] if b.feasible
                   else NO_VALUE),
            source_column(csv="source / note", with_note=True))


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
