"""Streamlit helpers shared by the pages: validated, URL-bound inputs, bounded caches,
downloads. The only module under ``dpviz`` that imports Streamlit."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dpviz import export
from dpviz.composition.levels import parse_levels
from dpviz.figures.style import export_config
from dpviz.figures.tables import format_number, guarantee_rows
from dpviz.params import Param
from dpviz.validation import ParameterError

T = TypeVar("T")

__all__ = [
    "cached",
    "choice_input",
    "code",
    "download_csv",
    "download_json",
    "format_number",
    "guarantee_rows",
    "levels_editor",
    "notice",
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


# --- Text from a visitor is shown, never formatted ---------------------------------------
# Alert bodies, captions, headers and table cells are Markdown in Streamlit: an image, a link,
# a :red[...] directive, LaTeX or an icon shortcode in a shared URL would be rendered (and an
# image fetched from any host). Every message that echoes user text puts that text in a code
# span (``code``): CommonMark shows a code span's content literally, and Streamlit's directive,
# emoji, math and autolink plugins leave it alone. Backslash escapes are not enough: GFM still
# turns an escaped http\://host into a link. The rest of a message (field names, ranges,
# defaults) is text written in this repository.

SHOWN_CHARS = 200
"""Longest echo of a rejected value; beyond it the message gives the length instead."""

_WARNING = ":material/warning:"  # drawn from the icon font bundled with Streamlit's frontend


def code(text: str) -> str:
    """``text`` as a Markdown code span: shown verbatim, never formatted.

    The fence is one backtick longer than any run of backticks inside; a space pads each side
    when the text starts or ends with a backtick or a space (CommonMark strips exactly that
    padding). Line breaks become spaces (a blank line would end the span). Streamlit's frontend
    rewrites ``:material/`` everywhere, code included, so a zero-width space breaks that one
    sequence; the text still reads the same.
    """
    text = re.sub(r"[\r\n]", " ", text).replace(":material/", ":material\u200b/")
    if not text:
        return "` `"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", text)), default=0) + 1)
    pad = " " if text[0] in "` " or text[-1] in "` " else ""
    if not text.strip(" "):
        pad = ""  # an all-space span keeps its spaces
    return f"{fence}{pad}{text}{pad}{fence}"


def shown_value(value: object) -> str:
    """``repr(value)`` as inert Markdown (cut at ``SHOWN_CHARS``, then its length is given)."""
    text = repr(value)
    if len(text) <= SHOWN_CHARS:
        return code(text)
    return f"{code(text[:SHOWN_CHARS] + '…')} ({len(text):,} characters)"


def notice_text(exc: Exception, *, default: str | None = None) -> str:
    """The one-line message for a rejected input, as Markdown whose user part is inert.

    A ``ParameterError`` reads ``field must be allowed, got `'value'```: the CLI's sentence, with
    the value in a code span; any other error shows its text in a code span.
    """
    if isinstance(exc, ParameterError):
        text = f"{exc.field} must be {exc.allowed}, got {shown_value(exc.value)}."
    else:
        text = f"This input cannot be used: {code(str(exc))}."
    if default is not None:
        text += f" Showing the default {default} instead."
    return text


def notice(exc: Exception, *, default: str | None = None, container: Any = None) -> None:
    """Show a rejected input as one error box (see ``notice_text``)."""
    box = container if container is not None else st
    box.error(notice_text(exc, default=default), icon=_WARNING)


def param_input(p: Param, container: Any = None) -> Any:
    """A text input bound to the URL query string (``?key=value``), validated by the core.

    Bad text (typed, or arriving in a shared URL) shows the validation message that
    names the field and its range, and the page goes on with the default.
    """
    box = container if container is not None else st
    if isinstance(p.default, bool):
        return toggle_input(p, box)
    raw = box.text_input(p.label, value=str(p.default), key=p.key, help=p.help or None,
                         bind="query-params")
    try:
        return p.check(raw)
    except ParameterError as exc:
        notice(exc, default=f"{p.label} = {p.default}", container=box)
        return p.check(p.default)


TOGGLE_VALUES = ("true", "false")
"""The spellings a URL-bound toggle accepts (Streamlit reads them case-insensitively)."""


def toggle_input(p: Param, container: Any = None) -> bool:
    """A URL-bound switch. Streamlit silently drops a URL value other than true/false; the raw
    value is still readable before the widget is drawn, so say so and name the field."""
    box = container if container is not None else st
    raw = st.query_params.get(p.key)
    value = bool(box.toggle(p.label, value=p.default, key=p.key, help=p.help or None,
                            bind="query-params"))
    if raw is not None and raw.lower() not in TOGGLE_VALUES:
        notice(ParameterError(p.label, raw, " or ".join(TOGGLE_VALUES)),
               default=f"{p.label} = {str(p.default).lower()}", container=box)
    return value


def slider_input(p: Param, options: Sequence[Any], container: Any = None) -> Any:
    """A URL-bound slider over ``options``. Streamlit silently drops a URL value that is not
    an option; the raw value is still readable on that run, so say so and name the field."""
    box = container if container is not None else st
    raw = st.query_params.get(p.key)
    value = box.select_slider(p.label, options=list(options), value=p.default, key=p.key,
                              help=p.help or None, bind="query-params")
    if raw is not None and raw not in {str(o) for o in options}:
        allowed = f"one of the slider's values {options[0]}, {options[1]}, …, {options[-1]}"
        notice(ParameterError(p.key, raw, allowed), default=f"{p.label} = {p.default}", container=box)
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
        notice(exc, default="rows", container=box)
        levels = parse_levels(default)
    initial = [{"ε": lv.epsilon, "δ": lv.delta, "count": lv.count} for lv in levels]
    rows = box.data_editor(initial, num_rows="dynamic", key=f"{key}_editor")
    edited = ",".join(f"{r.get('ε')}:{r.get('δ')}:{r.get('count')}" for r in rows)
    if edited != ",".join(f"{r['ε']}:{r['δ']}:{r['count']}" for r in initial):
        st.query_params[key] = edited
    return list(rows)


def choice_input(label: str, options: Sequence[str], *, key: str, default: str,
                 container: Any = None, horizontal: bool = True, help: str | None = None) -> str:
    """A URL-bound radio choice. Streamlit silently drops a URL value that is not an option;
    the raw value is still readable before the widget is drawn, so say so and name the field."""
    box = container if container is not None else st
    raw = st.query_params.get(key)
    value = box.radio(label, list(options), index=list(options).index(default), key=key,
                      horizontal=horizontal, bind="query-params", help=help)
    if raw is not None and raw not in options:
        notice(ParameterError(label, raw, "one of " + ", ".join(options)),
               default=f"{label} = {default}", container=box)
    return value


def show_figure(fig: go.Figure, *, filename: str, key: str) -> None:
    """Render the figure in its own template (``theme=None``: Streamlit's theme would restyle the
    screen but not the exports, so the screen, the modebar's 3× PNG, the SVG button and
    ``python -m dpviz figure`` all look alike; the figure is a white card in dark mode too).
    The SVG is rendered only when clicked, by the server's one export browser, one at a time:
    the button spins while the export waits its turn."""
    st.plotly_chart(fig, width="stretch", theme=None, config=export_config(filename), key=key)
    if svg_export_available():
        st.download_button("SVG", data=lambda: figure_svg(fig), file_name=f"{filename}.svg",
                           mime="image/svg+xml", on_click="ignore", key=f"{key}_svg",
                           icon=":material/download:",
                           help="The figure as a vector image for reports. The server renders one export "
                                "at a time: the button spins while yours waits, and asks you to try again "
                                "if many are queued.")


def svg_export_available() -> bool:
    """kaleido renders through a Chromium; without one, the PNG modebar export remains."""
    return bool(os.environ.get("BROWSER_PATH") or shutil.which("chromium")
                or shutil.which("chromium-browser") or shutil.which("google-chrome"))


def figure_svg(fig: go.Figure) -> bytes:
    """The figure as the page shows it, as SVG, through the process-wide export queue
    (``dpviz.cli.figure.render``: one Chromium, reused; a full queue raises ``RenderBusyError``,
    which the button shows as a failed download instead of starting another browser)."""
    from dpviz.cli.figure import render

    return render(fig, fmt="svg")


def columns_csv(columns: Mapping[str, Sequence[Any] | np.ndarray]) -> bytes:
    """CSV of equal-length columns (written by ``dpviz.export.columns_csv``)."""
    return export.columns_csv(columns)


def download_csv(columns: Mapping[str, Sequence[Any] | np.ndarray], *, filename: str, key: str,
                 label: str = "Download data (CSV)") -> None:
    """The bytes ``python -m dpviz figure … --out x.csv`` writes for the same table."""
    st.download_button(label, export.columns_csv(columns), file_name=filename, mime="text/csv", key=key)


def download_json(payload: Mapping[str, Any], *, filename: str, key: str,
                  label: str = "Download parameters and results (JSON)") -> None:
    """The bytes ``python -m dpviz figure … --out x.json`` writes for the same view."""
    st.download_button(label, export.payload_json(payload).encode("utf-8"), file_name=filename,
                       mime="application/json", key=key)


FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.png"
"""The tab icon, served by this server: a ``:material/…:`` page icon makes every visitor's
browser fetch an SVG from fonts.gstatic.com (the icons inside the page come from a bundled font)."""

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
    st.set_page_config(page_title=f"{title} — dpviz", page_icon=str(FAVICON), layout="wide")
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
