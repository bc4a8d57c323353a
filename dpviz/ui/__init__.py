"""Streamlit helpers shared by the pages: validated, URL-bound inputs and bounded caches here;
tables (``dpviz.ui.tables``), figures and downloads (``dpviz.ui.output``) and the page frame
(``dpviz.ui.layout``) in their own modules, all reachable as ``ui.…``. The only package under
``dpviz`` that imports Streamlit."""

from __future__ import annotations

import contextlib
import gc
import math
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

import pandas as pd
import streamlit as st

from dpviz import export, jit
from dpviz.composition.levels import Levels
from dpviz.figures.tables import format_number
from dpviz.params import LEVEL_COLUMNS, Param, Row, row_levels, rows_text, text_rows
from dpviz.ui.feedback import CACHE_ENTRIES, pending, remember
from dpviz.ui.layout import VIEWS, page_link, page_setup
from dpviz.ui.output import cite_box, columns_csv, download_csv, download_json, download_tables, show_figure
from dpviz.ui.preload import import_every_module
from dpviz.ui.tables import plain, table, table_frame, unbroken
from dpviz.validation import ParameterError

import_every_module()  # before any page's own imports: one thread's work (see dpviz.ui.preload)
jit.compile_all()  # the compiled loops (0.3 s; once per install, compiled) before any query (dpviz.jit)
# Everything imported so far (numpy, scipy, pandas, plotly, Streamlit, dpviz: several hundred
# thousand objects that live as long as the server) leaves the collector's generations, so a full
# collection walks only what pages made since: one fell into an attack-lab change every thirty or
# so and took 140 ms of its CPU (issue 20; Python's gc.freeze, meant for exactly this).
gc.freeze()

T = TypeVar("T")

__all__ = [
    "VIEWS",
    "cached",
    "choice_input",
    "cite_box",
    "code",
    "columns_csv",
    "download_csv",
    "download_json",
    "download_tables",
    "export",
    "format_number",
    "levels_editor",
    "notice",
    "page_link",
    "page_setup",
    "param_input",
    "param_inputs",
    "pending",
    "plain",
    "show_figure",
    "spec_inputs",
    "table",
    "table_frame",
    "unbroken",
    "url_aliases",
]

def cached(fn: Callable[..., T], *, hash_funcs: Mapping[str | type[Any], Callable[[Any], Any]] | None = None
           ) -> Callable[..., T]:
    """Cache a pure function of its arguments in a bounded cache shared by all sessions.

    The result is returned itself, not a copy (``st.cache_resource``): ``st.cache_data`` would
    pickle a view on every hit, Plotly figures included, which cost more than many reruns' own
    work. Results are treated as immutable: nothing in the app changes a view, a figure or a row
    after it is built (``st.plotly_chart`` and the exports copy a figure before using it).
    Each answered call is remembered (``dpviz.ui.feedback``), so a page says nothing of a wait
    that will not come. ``hash_funcs`` (Streamlit's) keys an argument of a type by what determines
    it, rather than by hashing all it holds; the first call's ``hash_funcs`` stay with ``fn``.
    """
    wrapper = _CACHED.get(fn)
    if wrapper is None:  # made once per function: Streamlit reads its source to key the cache
        resource = st.cache_resource(max_entries=CACHE_ENTRIES, show_spinner=False,
                                     hash_funcs=dict(hash_funcs or {}))(fn)

        def call(*args: Any, **kwargs: Any) -> T:
            value = resource(*args, **kwargs)
            remember(fn, args, kwargs)
            return value

        wrapper = _CACHED[fn] = call
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


def param_input(p: Param, container: Any = None, on_change: Callable[[], None] | None = None) -> Any:
    """A text input bound to the URL query string (``?key=value``), validated by the core.

    Bad text (typed, or arriving in a shared URL) shows the validation message that
    names the field and its range, and the page goes on with the default. ``on_change`` runs
    before the rerun a person's edit starts (a text input's only).
    """
    box = container if container is not None else st
    if isinstance(p.default, bool):
        return toggle_input(p, box)
    url_value(p.key, str)
    raw = box.text_input(p.label, value=str(p.default), key=p.key, help=p.help or None,
                         bind="query-params", on_change=on_change)
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


def param_inputs(params: Sequence[Param | None], *, per_row: int = 3,
                 on_change: Mapping[str, Callable[[], None]] | None = None) -> dict[str, Any]:
    """One validated input per spec, laid out ``per_row`` to a row; values by key. ``None``
    leaves its slot empty; ``on_change`` maps a key to its input's callback (``param_input``).

    An input must keep its place when other inputs come and go (another mechanism's parameters):
    Streamlit's frontend stopped writing a URL-bound widget into the URL once it had moved to
    another place in the page, so a shared link lost it. Pages give each input a fixed slot."""
    values: dict[str, Any] = {}
    for start in range(0, len(params), per_row):
        row = params[start:start + per_row]
        for p, col in zip(row, st.columns(per_row), strict=False):
            if p is not None:
                values[p.key] = param_input(p, col, (on_change or {}).get(p.key))
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


def migrate_url(page: str, rewrite: Callable[[dict[str, str]], dict[str, str]]) -> None:
    """An old shared link's query in today's keys and values (``rewrite``), then a rerun: once per
    session and ``page``, as the link opens. Afterwards the query holds what this session's inputs
    wrote, and a value a person types is theirs to be told about: the Mechanisms page's sampling rate
    typed as 0 (an old link's "no subsampling") was rewritten on every run, and once its input had
    been hidden and drawn again (fixed-size, then Poisson) Streamlit refused to set the widget-bound
    key: an exception box."""
    done = st.session_state.setdefault(_MIGRATED, set())
    if page in done:
        return
    done.add(page)
    query = st.query_params.to_dict()
    new = rewrite(query)
    if new != query:
        st.query_params.from_dict(new)
        st.rerun()


_MIGRATED = "_dpviz_migrated_pages"


def url_value(key: str, convert: Callable[[str], Any]) -> str | None:
    """The raw URL text for the input ``key``: from the query string, or from an old key read by
    ``url_aliases`` (then set as the widget's value when ``convert`` accepts it; a value it
    rejects is left to the input's notice, as a bad URL value is)."""
    aliased = st.session_state.get(_ALIASED, {})
    if key not in aliased:
        return st.query_params.get(key)
    text = aliased.pop(key)
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
