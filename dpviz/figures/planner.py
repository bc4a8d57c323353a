"""The planner's utility figure: the noise each query may carry against k, one curve per method
(Steinke seed 001 Remark 15: √k for advanced and optimal composition against k for basic)."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import plotly.graph_objects as go

from dpviz.figures.curves import series_figure


def noise_vs_k_figure(ks: np.ndarray, series: Mapping[str, np.ndarray], *, epsilon: float, delta: float,
                      sensitivity: float, labels: Mapping[str, str] | None = None) -> go.Figure:
    """Standard deviation of each query's noise against k at total (ε, δ): log-log, lower is
    better; gaps where a method allows no ε0 > 0."""
    return series_figure(
        np.asarray(ks, dtype=float), series,
        title=f"Noise per query against k at total ε = {epsilon:g}, δ = {delta:.3g} "
              f"(sensitivity {sensitivity:g})",
        x_title="k (number of queries)", y_title="noise s.d. per query", log_x=True, log_y=True,
        labels=labels, hover_x="k = %{x:,.0f}", hover_y="s.d. = %{y:.6g}")
