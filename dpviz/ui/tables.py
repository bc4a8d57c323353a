"""Tables and text for display: ``st.dataframe`` with number columns kept numbers, and text written
in this repository shown as written."""

from __future__ import annotations

import functools
import re
import zlib
from collections.abc import Mapping, Sequence
from typing import Any, Literal

import pandas as pd
import pyarrow as pa
import streamlit as st

from dpviz.figures.tables import NO_VALUE, table_number

NUMBER_FORMAT = "%.8g"
"""Display of a number column: every digit of the table's numbers (at most 8 significant, already
rounded by ``format_number``, upwards for bounds), no trailing zeros, exponents only when tiny."""


Column = tuple[list[float | None] | None, list[str | None]]
"""A table column as (its numbers, or None for text; its cells as text)."""


def _columns(rows: Sequence[Mapping[str, str]]) -> dict[str, Column]:
    """Each column (in order of first appearance) as (its numbers, None where the row shows '—' or
    has no cell, or None for a text column; its cells as text, None where a row has none)."""
    names = list(dict.fromkeys(c for r in rows for c in r))
    out: dict[str, Column] = {}
    for c in names:
        cells = [str(r[c]) if c in r else None for r in rows]
        try:
            numbers: list[float | None] | None = [None if v is None else table_number(v) for v in cells]
        except ValueError:
            numbers = None
        out[c] = (numbers, cells)
    return out


def table_frame(rows: Sequence[Mapping[str, str]]) -> pd.DataFrame:
    """Display rows (strings from ``dpviz.figures.tables``) as a frame whose number columns hold
    numbers (None where the row shows '—'): sortable, and copied as numbers."""
    return pd.DataFrame({c: pd.array(numbers, dtype="Float64") if numbers is not None else cells
                         for c, (numbers, cells) in _columns(rows).items()})


def table_arrow(rows: Sequence[Mapping[str, str]]) -> pa.Table:
    """:func:`table_frame`'s columns as an Arrow table (float64 with nulls where the frame holds NA,
    text as text), which ``st.dataframe`` sends as it is: given a pandas frame it inspects it and
    converts it to Arrow on every run, and building the frame cost as much again (on the server,
    about a fifth of a changed page's script run outside its numbers, issue 20)."""
    return pa.table({c: pa.array([x if x is None or x == x else None for x in numbers], type=pa.float64())
                     if numbers is not None else pa.array(cells, type=pa.string())
                     for c, (numbers, cells) in _columns(rows).items()})


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
    frame, config, layout = _grid(rows)
    if key is not None:  # a grid keeps the column widths it first drew: a new layout, a new grid, so
        # the sender's screen and a shared link's show the same columns (not the widths of an earlier run)
        key = f"{key}_{zlib.crc32(layout.encode()):08x}"
    box.dataframe(frame, hide_index=True, column_config=config, key=key, width="stretch",
                  placeholder=NO_VALUE)
    name = frame.column_names[0]
    for r in rows:  # a row without a value says why in view, not only in the collapsed list
        if r.get("kind") in NO_VALUE_KINDS:
            box.markdown(f"**{plain(str(r[name]))}** — {r['kind']}: "
                         + "; ".join(plain(str(r[c])) for c in NOTE_COLUMNS if r.get(c)))
    notes = [(str(r[name]), str(r[c])) for r in rows for c in NOTE_COLUMNS if r.get(c)]
    if notes:
        with box.expander("Sources and notes in full"):
            st.markdown("\n".join(f"- {plain(name)}: {plain(note)}" for name, note in notes))


GRIDS = 256
"""Tables whose frame and column widths are kept (``_grid``): a few per page and input setting."""


def _grid(rows: Sequence[Mapping[str, str]]) -> tuple[pa.Table, dict[str, Any], str]:
    """The frame, column configuration and layout key of ``rows``, made once per table content:
    a rerun shows the same tables, and building the frame was a quarter of a cached rerun of Plan
    a budget (benchmarks/results/server_cpu.md). Streamlit neither changes the frame nor the
    configuration it is given (it copies the configuration)."""
    try:
        return _grid_of(tuple(tuple(r.items()) for r in rows))
    except TypeError:  # a cell that is not hashable: made for this run only
        return _grid_made(rows)


@functools.lru_cache(maxsize=GRIDS)
def _grid_of(rows: tuple[tuple[tuple[str, Any], ...], ...]) -> tuple[pa.Table, dict[str, Any], str]:
    return _grid_made([dict(r) for r in rows])


def _grid_made(rows: Sequence[Mapping[str, str]]) -> tuple[pa.Table, dict[str, Any], str]:
    frame = table_arrow(rows)
    config: dict[str, Any] = {}
    for c in frame.column_names:
        # every width fixed from this run's longest cell: a grid keeps the widths it first drew, and a
        # width the browser measures depends on whether the web font has loaded yet (a shared link
        # then showed other columns than the sender's screen)
        longest = max([len(str(c)), *(len(str(r.get(c, ""))) for r in rows)])
        if frame.schema.field(c).type == pa.float64():
            config[c] = st.column_config.NumberColumn(c, format=NUMBER_FORMAT,
                                                      width=min(140, max(64, 8 * longest + 24)))
        else:
            first = c == frame.column_names[0]  # the row's name: kept in view on scrolling, and narrow
            # enough that a 390 px phone still shows a number beside it (its full text is listed below)
            width: Literal["large"] | int = ("large" if c in NOTE_COLUMNS
                                             else min(NAME_WIDTH if first else 360,
                                                      max(64, 7 * longest + 30)))
            config[c] = st.column_config.TextColumn(c, width=width, pinned=first)
    layout = repr([(str(c), config[c].get("width")) for c in frame.column_names])
    return frame, config, layout


def unbroken(x: float) -> str:
    """A number for a heading, ``1e-05`` with a non-breaking hyphen: a narrow screen broke it after
    "1e-" (the heading's other words still wrap)."""
    return f"{x:g}".replace("-", "\u2011")


def plain(text: str) -> str:
    """Text written in this repository (a method's name, a source, a reason) as Markdown that
    shows it as written: ``P_FA`` and ``e^ε`` stay as they are, ``*`` is no emphasis."""
    return re.sub(r"([\\`*_{}\[\]<>()#+!|~$:^-])", r"\\\1", text)
