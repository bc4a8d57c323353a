"""What a page hands out: figures (exported as PNG and SVG by the browser) and CSV/JSON downloads
(made only when clicked)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st

from dpviz import export
from dpviz.figures.style import export_config


def show_figure(fig: go.Figure, *, filename: str, key: str) -> None:
    """Render the figure in its own template (``theme=None``: Streamlit's theme would restyle the
    screen but not the exports, so the screen, the modebar's PNG (3×) and SVG exports and
    ``python -m dpviz figure`` all look alike; the figure is a white card in dark mode too).
    Both exports are made by plotly.js in the browser (``dpviz.ui.layout.SVG_EXPORT_JS``): an
    export costs the server nothing."""
    st.plotly_chart(fig, width="stretch", theme=None, config=export_config(filename), key=key)


def columns_csv(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> bytes:
    """CSV of equal-length columns (written by ``dpviz.export.columns_csv``)."""
    return export.columns_csv(columns)


def download_csv(columns: Mapping[str, Sequence[Any] | np.ndarray], *, filename: str, key: str,
                 label: str = "Download data (CSV)") -> None:
    """The bytes ``python -m dpviz figure … --out x.csv`` writes for the same table, written when
    the button is clicked (not on every rerun), and a click does not rerun the page."""
    st.download_button(label, lambda: export.columns_csv(columns), file_name=filename, mime="text/csv",
                       key=key, on_click="ignore")


def download_json(payload: Mapping[str, Any], *, filename: str, key: str,
                  label: str = "Download parameters and results (JSON)") -> None:
    """The bytes ``python -m dpviz figure … --out x.json`` writes for the same view (when clicked)."""
    st.download_button(label, lambda: export.payload_json(payload).encode("utf-8"), file_name=filename,
                       mime="application/json", key=key, on_click="ignore")
