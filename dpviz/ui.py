"""Streamlit helpers shared by the pages: validated, URL-bound inputs, bounded caches,
downloads. The only module under ``dpviz`` that imports Streamlit."""

from __future__ import annotations

import io
import json
import os
import shutil
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dpviz.composition.levels import parse_levels
from dpviz.figures.style import export_config
from dpviz.figures.tables import format_number, guarantee_rows
from dpviz.guarantee import Guarantee, finite_or_none
from dpviz.params import Param
from dpviz.validation import ParameterError

T = TypeVar("T")

__all__ = [
    "cached",
    "choice_input",
    "download_csv",
    "download_json",
    "format_number",
    "guarantee_rows",
    "levels_editor",
    "page_link",
    "page_setup",
    "param_input",
    "param_inputs",
    "show_figure",
    "slider_input",
]

CACHE_ENTRIES = 64
"""Bound on every cache: old entries are evicted, memory stays flat."""


def cached(fn: Callable[..., T]) -> Callable[..., T]:
    """Cache a pure core function with a bounded Streamlit data cache."""
    return st.cache_data(max_entries=CACHE_ENTRIES, show_spinner=False)(fn)


def param_input(p: Param, container: Any = None) -> Any:
    """A text input bound to the URL query string (``?key=value``), validated by the core.

    Bad text (typed, or arriving in a shared URL) shows the validation message that
    names the field and its range, and the page goes on with the default.
    """
    box = container if container is not None else st
    if isinstance(p.default, bool):
        return bool(box.toggle(p.label, value=p.default, key=p.key, help=p.help or None,
                               bind="query-params"))
    raw = box.text_input(p.label, value=str(p.default), key=p.key, help=p.help or None,
                         bind="query-params")
    try:
        return p.check(raw)
    except ParameterError as exc:
        box.error(f"{exc}. Showing the default {p.label} = {p.default} instead.", icon=":material/warning:")
        return p.check(p.default)


def slider_input(p: Param, options: Sequence[Any], container: Any = None) -> Any:
    """A URL-bound slider over ``options``. Streamlit silently drops a URL value that is not
    an option; the raw value is still readable on that run, so say so and name the field."""
    box = container if container is not None else st
    raw = st.query_params.get(p.key)
    value = box.select_slider(p.label, options=list(options), value=p.default, key=p.key,
                              help=p.help or None, bind="query-params")
    if raw is not None and raw not in {str(o) for o in options}:
        allowed = f"one of the slider's values {options[0]}, {options[1]}, …, {options[-1]}"
        box.error(f"{ParameterError(p.key, raw, allowed)}. Showing the default {p.label} = {p.default} "
                  "instead.", icon=":material/warning:")
    return value


def param_inputs(params: Sequence[Param], *, per_row: int = 3) -> dict[str, Any]:
    """One validated input per spec, laid out ``per_row`` to a row; values by key."""
    values: dict[str, Any] = {}
    for start in range(0, len(params), per_row):
        row = params[start:start + per_row]
        for p, col in zip(row, st.columns(per_row), strict=False):
            values[p.key] = param_input(p, col)
    return values


def levels_editor(*, key: str, default: str, container: Any = None) -> list[dict[str, Any]]:
    """An editable table of (ε, δ, count) rows kept in the URL as ``?key=ε:δ:count,…``.

    A data editor cannot be bound to the URL, so the rows are read from the query string
    (a malformed one falls back to the default with a notice) and written back after each
    edit; the core validates the rows when it uses them.
    """
    box = container if container is not None else st
    text = st.query_params.get(key, default)
    try:
        levels = parse_levels(text)
    except ParameterError as exc:
        box.error(f"{exc}. Showing the default rows instead.", icon=":material/warning:")
        levels = parse_levels(default)
    initial = [{"ε": lv.epsilon, "δ": lv.delta, "count": lv.count} for lv in levels]
    rows = box.data_editor(initial, num_rows="dynamic", key=f"{key}_editor")
    edited = ",".join(f"{r.get('ε')}:{r.get('δ')}:{r.get('count')}" for r in rows)
    if edited != ",".join(f"{r['ε']}:{r['δ']}:{r['count']}" for r in initial):
        st.query_params[key] = edited
    return list(rows)


def choice_input(label: str, options: Sequence[str], *, key: str, default: str,
                 container: Any = None, horizontal: bool = True, help: str | None = None) -> str:
    """A URL-bound radio choice."""
    box = container if container is not None else st
    return box.radio(label, list(options), index=list(options).index(default), key=key,
                     horizontal=horizontal, bind="query-params", help=help)


def show_figure(fig: go.Figure, *, filename: str, key: str) -> None:
    """Render the figure; the modebar's camera saves a 3× PNG named after the view, and a
    button below saves the same figure as SVG (rendered by kaleido only when clicked)."""
    st.plotly_chart(fig, width="stretch", config=export_config(filename), key=key)
    if svg_export_available():
        st.download_button("SVG", data=lambda: figure_svg(fig), file_name=f"{filename}.svg",
                           mime="image/svg+xml", on_click="ignore", key=f"{key}_svg",
                           icon=":material/download:", help="The figure as a vector image for reports")


def svg_export_available() -> bool:
    """kaleido renders through a Chromium; without one, the PNG modebar export remains."""
    return bool(os.environ.get("BROWSER_PATH") or shutil.which("chromium")
                or shutil.which("chromium-browser") or shutil.which("google-chrome"))


def figure_svg(fig: go.Figure) -> bytes:
    """The figure as the page shows it, as SVG (dpviz.cli.figure sets up the browser path)."""
    from dpviz.cli.figure import render

    return render(fig, fmt="svg")


def columns_csv(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> bytes:
    """CSV of equal-length columns (NaN written as empty: no value)."""
    names = list(columns)
    rows = zip(*(np.asarray(columns[n], dtype=object) for n in names), strict=True)
    buf = io.StringIO()
    buf.write(",".join(names) + "\n")
    for row in rows:
        buf.write(",".join(_csv_cell(v) for v in row) + "\n")
    return buf.getvalue().encode()


def _csv_cell(v: Any) -> str:
    if isinstance(v, float | np.floating):
        return "" if not np.isfinite(v) else repr(float(v))
    return str(v)


def download_csv(columns: Mapping[str, Sequence[Any] | np.ndarray], *, filename: str, key: str,
                 label: str = "Download data (CSV)") -> None:
    st.download_button(label, columns_csv(columns), file_name=filename, mime="text/csv", key=key)


def download_json(payload: Mapping[str, Any], *, filename: str, key: str,
                  label: str = "Download parameters and results (JSON)") -> None:
    st.download_button(label, json.dumps(payload, indent=2, allow_nan=False, default=_json_default),
                       file_name=filename, mime="application/json", key=key)


def _json_default(obj: Any) -> Any:
    if isinstance(obj, Guarantee):
        return obj.to_json()
    if isinstance(obj, np.ndarray):
        return [finite_or_none(float(v)) for v in obj.ravel()]
    if isinstance(obj, np.floating | np.integer):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj).__name__}")


VIEWS: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/home:"),
    ("pages/1_Privacy_regions.py", "Privacy regions", ":material/square:"),
    ("pages/2_Composition_curves.py", "Composition curves", ":material/show_chart:"),
    ("pages/3_Database_priors.py", "Database priors", ":material/database:"),
    ("pages/4_Mechanisms.py", "Mechanisms", ":material/tune:"),
)
"""Every view (file, title, icon), in sidebar order: the one list the navigation is drawn from."""


def page_setup(title: str) -> None:
    """Wide layout, the browser tab's title, and the sidebar navigation (Streamlit's automatic
    list is off in .streamlit/config.toml: it would label the home page after its file, "app")."""
    st.set_page_config(page_title=f"{title} — dpviz", page_icon=":material/shield_lock:", layout="wide")
    with st.sidebar:
        st.markdown("**dpviz**")
        for page, label, icon in VIEWS:
            page_link(page, label=label, icon=icon)


def page_link(page: str, *, label: str, icon: str) -> None:
    """A link to another view; plain text where the page runs on its own (AppTest, no navigation)."""
    try:
        st.page_link(page, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        st.markdown(f"**{label}**")
