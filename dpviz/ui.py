"""Streamlit helpers shared by the pages: validated, URL-bound inputs, bounded caches,
downloads. The only module under ``dpviz`` that imports Streamlit."""

from __future__ import annotations

import contextlib
import math
import os
import re
import shutil
import zlib
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd
import plotly.graph_objects as go
import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from dpviz import export, references
from dpviz.composition.levels import Levels
from dpviz.figures.style import export_config
from dpviz.figures.tables import NO_VALUE, format_number, guarantee_rows, table_number
from dpviz.params import LEVEL_COLUMNS, Param, Row, row_levels, rows_text, text_rows
from dpviz.validation import ParameterError

T = TypeVar("T")

__all__ = [
    "cached",
    "choice_input",
    "cite_box",
    "code",
    "download_csv",
    "download_json",
    "download_tables",
    "format_number",
    "guarantee_rows",
    "levels_editor",
    "notice",
    "page_link",
    "page_setup",
    "param_input",
    "param_inputs",
    "show_figure",
    "spec_inputs",
    "table",
    "url_aliases",
]

CACHE_ENTRIES = 64
"""Bound on every cache: old entries are evicted, memory stays flat."""


def cached(fn: Callable[..., T]) -> Callable[..., T]:
    """Cache a pure function of its arguments in a bounded cache shared by all sessions.

    The result is returned itself, not a copy (``st.cache_resource``): ``st.cache_data`` would
    pickle a view on every hit, Plotly figures included, which cost more than many reruns' own
    work. Results are treated as immutable: nothing in the app changes a view, a figure or a row
    after it is built (``st.plotly_chart`` and the exports copy a figure before using it).
    """
    wrapper = _CACHED.get(fn)
    if wrapper is None:  # made once per function: Streamlit reads its source to key the cache
        wrapper = _CACHED[fn] = st.cache_resource(max_entries=CACHE_ENTRIES, show_spinner=False)(fn)
    return wrapper


_CACHED: dict[Callable[..., Any], Callable[..., Any]] = {}


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


_FIELD = re.compile(r"(?:[^\W_]|[ .,()/'≤≥+-]|\[\d+\]|(?<=[^\W_])_(?=[^\W_])|:(?=K2\b))+")
"""A field name as this repository writes them (``ε0``, ``spec[2].sigma``, ``count (row 3)``,
``prior at-least:K2``): letters, digits, spaces and brackets, none of which Markdown formats."""


def field_text(field: str) -> str:
    """A field's name as Markdown: as written when it reads as a field name of this repository,
    else (a key from a visitor's JSON, say) as a code span, like any user text."""
    if _FIELD.fullmatch(field) and "www." not in field.lower():
        return field
    return code(field)


def notice_text(exc: Exception, *, default: str | None = None) -> str:
    """The one-line message for a rejected input, as Markdown whose user part is inert.

    A ``ParameterError`` reads ``field must be allowed, got `'value'```: the CLI's sentence, with
    the value in a code span; any other error shows its text in a code span.
    """
    if isinstance(exc, ParameterError):
        text = f"{field_text(exc.field)} must be {exc.allowed}, got {shown_value(exc.value)}."
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
    url_value(p.key, str)
    raw = box.text_input(p.label, value=str(p.default), key=p.key, help=p.help or None,
                         bind="query-params")
    try:
        return p.parse(raw)
    except ParameterError as exc:
        notice(exc, default=f"{p.label} = {p.default}", container=box)
        return p.check(p.default)


TOGGLE_VALUES = ("true", "false")
"""The spellings a URL-bound toggle accepts (Streamlit reads them case-insensitively)."""


def toggle_input(p: Param, container: Any = None) -> bool:
    """A URL-bound switch. Streamlit silently drops a URL value other than true/false; the raw
    value is still readable before the widget is drawn, so say so and name the field."""
    box = container if container is not None else st
    raw = url_value(p.key, _toggle_value)
    value = bool(box.toggle(p.label, value=p.default, key=p.key, help=p.help or None,
                            bind="query-params"))
    if raw is not None and raw.lower() not in TOGGLE_VALUES:
        notice(ParameterError(p.label, raw, " or ".join(TOGGLE_VALUES)),
               default=f"{p.label} = {str(p.default).lower()}", container=box)
    return value


def param_inputs(params: Sequence[Param | None], *, per_row: int = 3) -> dict[str, Any]:
    """One validated input per spec, laid out ``per_row`` to a row; values by key. ``None``
    leaves its slot empty.

    An input must keep its place when other inputs come and go (another mechanism's parameters):
    Streamlit's frontend stopped writing a URL-bound widget into the URL once it had moved to
    another place in the page, so a shared link lost it. Pages give each input a fixed slot."""
    values: dict[str, Any] = {}
    for start in range(0, len(params), per_row):
        row = params[start:start + per_row]
        for p, col in zip(row, st.columns(per_row), strict=False):
            if p is not None:
                values[p.key] = param_input(p, col)
    return values


def url_aliases(aliases: Mapping[str, str]) -> None:
    """Links shared before a URL key was renamed keep working: ``?old=v`` opens as ``?new=v``
    (when both are present, the new key wins). Call before the widgets are drawn.

    A URL-bound widget seeds itself from the query string the page was opened with, which the
    page cannot rewrite. The old key's value waits in the session until the input of the new key
    is drawn (``url_value``), which then sets it as the widget's value; the widget writes it to the
    URL under its new key."""
    for old, new in aliases.items():
        if old not in st.query_params:
            continue
        value = st.query_params[old]
        del st.query_params[old]  # the old key is bound to no widget: the page may drop it
        if new not in st.query_params:
            st.session_state.setdefault(_ALIASED, {})[new] = value


_ALIASED = "_dpviz_aliased_url_values"


def url_value(key: str, convert: Callable[[str], Any]) -> str | None:
    """The raw URL text for the input ``key``: from the query string, or from an old key read by
    ``url_aliases`` (then set as the widget's value when ``convert`` accepts it; a value it
    rejects is left to the input's notice, as a bad URL value is)."""
    pending = st.session_state.get(_ALIASED, {})
    if key not in pending:
        return st.query_params.get(key)
    text = pending.pop(key)
    with contextlib.suppress(KeyError, ValueError):  # a bad value: the input's notice names it
        st.session_state[key] = convert(text)
    return text


def _toggle_value(text: str) -> bool:
    return {"true": True, "false": False}[text.lower()]


def spec_inputs(spec: Any, params: Sequence[Param | None] | None = None, *,
                per_row: int = 3) -> dict[str, Any]:
    """A view's inputs (``dpviz.views.ViewSpec``): its old URL keys read as aliases, then one
    validated, URL-bound input per parameter (all of them, or ``params`` in the slots given,
    see ``param_inputs``); values by key, ready for ``spec.build``."""
    url_aliases(spec.aliases)
    return param_inputs(spec.params if params is None else params, per_row=per_row)


ROW_NOTICES = 4
"""At most this many bad cells are named at once (the first ones, in reading order)."""


def levels_editor(p: Param, container: Any = None) -> Levels | None:
    """An editable table of (ε, δ, count) rows kept in the URL as ``?key=ε:δ:count,…`` (the
    cells as typed; ``dpviz.params.rows_text``). Returns the rows as validated levels, or None
    after one notice per bad cell naming its row and column.

    A data editor cannot be bound to the URL. Its identity includes its data, so the table it
    starts from (the seed) must stay the same while a person edits: a table rebuilt from the URL
    after each edit would be a new widget, and the next edit would be lost. The seed is kept in
    the session and taken from the URL again only when the URL holds other rows than this session
    last wrote (a new visit, or a link opened in this tab). Cells are text, so ``1e-6`` is
    accepted as typed and checked by the core (``dpviz.params.row_levels``).
    """
    box = container if container is not None else st
    text = st.query_params.get(p.key, str(p.default))
    seed_key = f"_{p.key}_seed"
    seed = st.session_state.get(seed_key)
    if seed is None or seed["url"] != text:
        problem = None
        try:
            rows = text_rows(text)
        except ParameterError as exc:
            problem, rows = exc, text_rows(str(p.default))
        seed = {"url": text, "rows": rows, "shown": rows_text(rows), "problem": problem,
                "generation": 0 if seed is None else seed["generation"] + 1}
        st.session_state[seed_key] = seed
    frame = pd.DataFrame(seed["rows"], columns=list(LEVEL_COLUMNS), dtype=object)
    edited = box.data_editor(
        frame, num_rows="dynamic", hide_index=True, key=f"{p.key}_editor_{seed['generation']}",
        column_config={
            "ε": st.column_config.TextColumn("ε", help="ε of each of these mechanisms, in [0, 100]"),
            "δ": st.column_config.TextColumn("δ", help="δ of each, in [0, 1); e.g. 1e-6"),
            "count": st.column_config.TextColumn("count", help="how many mechanisms of this kind"),
        })
    typed: list[Row] = [(_cell_text(eps), _cell_text(delta), _cell_text(count))
                        for eps, delta, count in edited.itertuples(index=False)]
    new_text = rows_text(typed)
    if new_text != text and (seed["problem"] is None or new_text != seed["shown"]):
        st.query_params[p.key] = new_text  # this session's own rows: not a new seed
        seed.update(url=new_text, problem=None)
    if seed["problem"] is not None:  # below the table: the table keeps its place in the page
        notice(seed["problem"], default="rows", container=box)
    levels, problems = row_levels(typed)
    for bad in problems[:ROW_NOTICES]:
        notice(bad, container=box)
    return levels


def _cell_text(value: object) -> str:
    """An edited cell as text: a new row's empty cells arrive as None (or NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    return str(value)


def choice_input(label: str, options: Sequence[str], *, key: str, default: str,
                 container: Any = None, horizontal: bool = True, help: str | None = None,
                 on_change: Callable[[], None] | None = None) -> str:
    """A URL-bound radio choice. Streamlit silently drops a URL value that is not an option;
    the raw value is still readable before the widget is drawn, so say so and name the field.
    ``on_change`` runs before the rerun a person's choice starts (not for a URL value): it may
    set other widgets' values in ``st.session_state``, which their URL parameters follow."""
    box = container if container is not None else st
    raw = url_value(key, lambda text: {o: o for o in options}[text])
    value = box.radio(label, list(options), index=list(options).index(default), key=key,
                      horizontal=horizontal, bind="query-params", help=help, on_change=on_change)
    if raw is not None and raw not in options:
        notice(ParameterError(label, raw, "one of " + ", ".join(options)),
               default=f"{label} = {default}", container=box)
    return value


NUMBER_FORMAT = "%.8g"
"""Display of a number column: every digit of the table's numbers (at most 8 significant, already
rounded by ``format_number``, upwards for bounds), no trailing zeros, exponents only when tiny."""


def table_frame(rows: Sequence[Mapping[str, str]]) -> pd.DataFrame:
    """Display rows (strings from ``dpviz.figures.tables``) as a frame whose number columns hold
    numbers (None where the row shows '—'): sortable, and copied as numbers."""
    frame = pd.DataFrame(list(rows), dtype=object)
    for column in frame.columns:
        try:
            numbers = [table_number(str(v)) for v in frame[column]]
        except ValueError:
            frame[column] = frame[column].astype(str)
            continue
        frame[column] = pd.array(numbers, dtype="Float64")
    return frame


NAME_WIDTH = 230
"""Widest first (name) column, in px: a 390 px phone's table is about 358 px wide, and a wider
pinned name left room for nothing else (issue 21); long names are listed in full below the table."""

NO_VALUE_KINDS = ("impossible", "not computed")
"""The *kind* of a row without a value (``dpviz.figures.tables.KIND_WORDS``): its reason is shown."""

NOTE_COLUMNS = ("source / note", "note")
"""Text columns too long for a grid cell: shown in full below the table as well."""


def table(rows: Sequence[Mapping[str, str]], *, key: str | None = None, container: Any = None) -> None:
    """A table as ``st.dataframe``: number columns stay numbers (sortable, never broken over two
    lines), text columns (method, kind, source, notes) are text; '—' where a row has no value
    (its note says why). A grid cell does not wrap, so sources and notes are also listed in full
    below the table."""
    box = container if container is not None else st
    frame = table_frame(rows)
    config: dict[str, Any] = {}
    for c in frame.columns:
        # every width fixed from this run's longest cell: a grid keeps the widths it first drew, and a
        # width the browser measures depends on whether the web font has loaded yet (a shared link
        # then showed other columns than the sender's screen)
        longest = max([len(str(c)), *(len(str(r.get(c, ""))) for r in rows)])
        if str(frame[c].dtype) == "Float64":
            config[c] = st.column_config.NumberColumn(c, format=NUMBER_FORMAT,
                                                      width=min(140, max(64, 8 * longest + 24)))
        else:
            first = c == frame.columns[0]  # the row's name: kept in view on scrolling, and narrow
            # enough that a 390 px phone still shows a number beside it (its full text is listed below)
            width: Literal["large"] | int = ("large" if c in NOTE_COLUMNS
                                             else min(NAME_WIDTH if first else 360,
                                                      max(64, 7 * longest + 30)))
            config[c] = st.column_config.TextColumn(c, width=width, pinned=first)
    if key is not None:  # a grid keeps the column widths it first drew: a new layout, a new grid, so
        # the sender's screen and a shared link's show the same columns (not the widths of an earlier run)
        layout = repr([(str(c), config[c].get("width")) for c in frame.columns])
        key = f"{key}_{zlib.crc32(layout.encode()):08x}"
    box.dataframe(frame, hide_index=True, column_config=config, key=key, width="stretch",
                  placeholder=NO_VALUE)
    name = frame.columns[0]
    for r in rows:  # a row without a value says why in view, not only in the collapsed list
        if r.get("kind") in NO_VALUE_KINDS:
            box.markdown(f"**{plain(str(r[name]))}** — {r['kind']}: "
                         + "; ".join(plain(str(r[c])) for c in NOTE_COLUMNS if r.get(c)))
    notes = [(str(r[name]), str(r[c])) for r in rows for c in NOTE_COLUMNS if r.get(c)]
    if notes:
        with box.expander("Sources and notes in full"):
            st.markdown("\n".join(f"- {plain(name)}: {plain(note)}" for name, note in notes))


def unbroken(x: float) -> str:
    """A number for a heading, ``1e-05`` with a non-breaking hyphen: a narrow screen broke it after
    "1e-" (the heading's other words still wrap)."""
    return f"{x:g}".replace("-", "\u2011")


def plain(text: str) -> str:
    """Text written in this repository (a method's name, a source, a reason) as Markdown that
    shows it as written: ``P_FA`` and ``e^ε`` stay as they are, ``*`` is no emphasis."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~$:^-])", r"\\\1", text)


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


def download_tables(tables: Mapping[str, Sequence[Mapping[str, str]]], *, title: str,
                    values: Mapping[str, Any], stem: str, key: str) -> None:
    """Each display table for a report, as LaTeX (booktabs) and Markdown: the bytes ``python -m dpviz
    figure … --out x.tex|x.md --table NAME`` writes (``dpviz.export``), captioned with the view and
    every input. Numbers as the table shows them, rounded in their sound direction."""
    shown = {name: rows for name, rows in tables.items() if rows}
    for column, (name, rows) in zip(st.columns(max(1, len(shown))), shown.items(), strict=False):
        caption = export.table_caption(title, name, values)
        label = f"{name.replace('_', ' ')}: " if len(shown) > 1 else "Table: "
        latex = export.table_latex(rows, caption=caption, label=f"{stem}_{name}")
        column.download_button(f"{label}LaTeX", latex,
                               file_name=f"{stem}_{name}.tex", mime="text/x-tex", key=f"{key}_{name}_tex",
                               icon=":material/download:")
        column.download_button(f"{label}Markdown", export.table_markdown(rows, caption=caption),
                               file_name=f"{stem}_{name}.md", mime="text/markdown", key=f"{key}_{name}_md",
                               icon=":material/download:")


def cite_box(view: str) -> None:
    """"Cite": the BibTeX of the sources this view's rows cite (``dpviz.references``)."""
    text = references.bibtex(view)
    with st.expander("Cite", icon=":material/format_quote:"):
        st.markdown("The papers behind this view's numbers (each row names its theorem; versions in "
                    "docs/REFERENCES.md):")
        st.code(text, language="bibtex")
        st.download_button("BibTeX", text, file_name=f"dpviz_{view}.bib", mime="application/x-bibtex",
                           key=f"cite_{view}", icon=":material/download:")


FAVICON = Path(__file__).resolve().parents[1] / "static" / "favicon.png"
"""The tab icon, served by this server: a ``:material/…:`` page icon makes every visitor's
browser fetch an SVG from fonts.gstatic.com (the icons inside the page come from a bundled font)."""

VIEWS: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/home:"),
    ("pages/1_Privacy_regions.py", "Privacy regions", ":material/square:"),
    ("pages/2_Composition_curves.py", "Composition curves", ":material/show_chart:"),
    ("pages/3_Database_priors.py", "Database priors", ":material/database:"),
    ("pages/4_Mechanisms.py", "Mechanisms", ":material/tune:"),
    ("pages/5_Plan_a_budget.py", "Plan a budget", ":material/calculate:"),
    ("pages/6_Attack_lab.py", "Attack lab", ":material/target:"),
)
"""Every view (file, title, icon), in sidebar order: the one list the navigation is drawn from."""


def page_setup(title: str) -> None:
    """Wide layout, the browser tab's title, and the sidebar navigation (Streamlit's automatic
    list is off in .streamlit/config.toml: it would label the home page after its file, "app")."""
    st.set_page_config(page_title=f"{title} — dpviz", page_icon=str(FAVICON), layout="wide")
    st.html(NARROW_SCREEN_CSS)
    with st.sidebar:
        st.markdown("**dpviz**")
        for page, label, icon in VIEWS:
            page_link(page, label=label, icon=icon)


NARROW_SCREEN_CSS = """<style>
@media (max-width: 640px) {
  /* A touch screen always shows Plotly's modebar, over the figure's title; the SVG button below
     each figure saves it. A title wrapped for a 1000 px figure is set smaller to fit a phone. */
  [data-testid="stPlotlyChart"] .modebar-container { display: none; }
  [data-testid="stPlotlyChart"] .gtitle { font-size: 13px !important; }
}
</style>"""
"""Screen-only rules for phones (exports never see page CSS: they render the figure itself)."""


def page_link(page: str, *, label: str, icon: str) -> None:
    """A link to another view; plain text where the page runs on its own (AppTest, no navigation)."""
    try:
        st.page_link(page, label=label, icon=icon)
    except StreamlitPageNotFoundError:
        st.markdown(f"**{label}**")
