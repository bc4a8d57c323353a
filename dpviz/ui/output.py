"""What a page hands out: figures (exported as PNG and SVG by the browser) and CSV/JSON downloads
(made only when clicked)."""

from __future__ import annotations

import base64
import copy
import functools
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
import streamlit as st
from _plotly_utils.basevalidators import is_homogeneous_array
from _plotly_utils.utils import is_skipped_key, to_typed_array_spec

from dpviz import export, references
from dpviz.figures.style import TEMPLATE_SPEC, export_config


def show_figure(fig: go.Figure, *, filename: str, key: str) -> None:
    """Render the figure in its own template (``theme=None``: Streamlit's theme would restyle the
    screen but not the exports, so the screen, the modebar's PNG (3×) and SVG exports and
    ``python -m dpviz figure`` all look alike; the figure is a white card in dark mode too).
    Both exports are made by plotly.js in the browser (``dpviz.ui.layout.SVG_EXPORT_JS``): an
    export costs the server nothing."""
    st.plotly_chart(_serialised(fig), width="stretch", theme=None, config=export_config(filename), key=key)


class _Serialised(go.Figure):
    """A figure that hands out the dictionary made when it was first shown.

    ``st.plotly_chart`` calls ``to_dict`` on every rerun, and Plotly's ``to_dict`` deep-copies the
    figure and re-encodes every array as a base64 typed array: a quarter of a cached rerun's CPU on
    Privacy regions (benchmarks/results/server_cpu.md). The figures a page shows come from bounded
    caches and are never changed after they are built (``dpviz.ui.cached``), so their dictionary
    is made once. Streamlit only reads the dictionary (to write its JSON), so the figure itself is
    never initialised (Plotly's ``__init__`` deep-copies the default template: 3.5 ms)."""

    def __init__(self, spec: dict[str, Any]) -> None:
        object.__setattr__(self, "_dpviz_spec", spec)

    def to_dict(self) -> dict[str, Any]:
        return self._dpviz_spec


_SHOWN: dict[int, _Serialised] = {}
"""Each shown figure's serialised twin, by the figure's id, while the figure lives."""


def _serialised(fig: go.Figure) -> _Serialised:
    """``fig`` with its dictionary made once (see ``_Serialised``); the entry goes with the figure."""
    twin = _SHOWN.get(id(fig))
    if twin is None:
        twin = _SHOWN[id(fig)] = _Serialised(figure_dict(fig))
        weakref.finalize(fig, _SHOWN.pop, id(fig), None)
    return twin


def figure_dict(fig: go.Figure) -> dict[str, Any]:
    """``fig.to_dict()`` without its deep copy of the figure: the same dictionary (each array as
    Plotly's base64 typed array, by Plotly's own rules), built by copying only the dictionaries
    and lists. ``to_dict`` deep-copies every array and list before encoding it, and walks every
    number of a long list: most of a Mechanisms change's CPU went into the PLD histogram's copies
    (benchmarks/results/change_cpu.md)."""
    layout = {key: _template_encoded() if key == "template" and v == TEMPLATE_SPEC else _item(key, v)
              for key, v in fig._layout.items()}
    spec: dict[str, Any] = {"data": [_encoded(trace) for trace in fig._data], "layout": layout}
    frames = [_encoded(frame._props) for frame in fig._frame_objs]
    if frames:
        spec["frames"] = frames
    return spec


_PLAIN = (str, float, int, bool, type(None))
"""Exact types of a figure's values that are never arrays (``is_homogeneous_array`` says no)."""
_CONTAINERS = (dict, list, tuple)
"""Exact types of containers (never arrays themselves), encoded item by item."""


def _encoded(value: Any) -> Any:
    """A copy of ``value`` as ``convert_to_base64`` leaves a deep copy of it: in a dictionary, an
    array under a key that is not skipped becomes a typed array (``_typed``); containers are copied,
    and what a skipped key holds (a range, a layer) is deep-copied as ``to_dict`` copies it."""
    if isinstance(value, dict):
        return {key: _item(key, v) for key, v in value.items()}
    if isinstance(value, list | tuple):
        items = [_encoded(v) for v in value]
        return items if isinstance(value, list) else tuple(items)
    return value


def _item(key: str, v: Any) -> Any:
    """The value under ``key`` of a dictionary, encoded (``_encoded``)."""
    return (copy.deepcopy(v) if is_skipped_key(key) else
            v if type(v) in _PLAIN else
            _encoded(v) if type(v) in _CONTAINERS else
            _typed(v) if is_homogeneous_array(v) else _encoded(v))


@functools.cache
def _template_encoded() -> dict[str, Any]:
    """The dpviz template (``figures.style.TEMPLATE_SPEC``, in the layout of every figure made by
    ``figure_of``) encoded once: 0.3 ms a figure. Shared by the dictionaries of every shown figure,
    which are only read (as each figure's own dictionary is read again at every rerun)."""
    return _encoded(TEMPLATE_SPEC)


def _typed(v: Any) -> Any:
    """Plotly's typed array of an array (``to_typed_array_spec``): a non-empty float64 numpy array is
    encoded here as Plotly encodes it (its C-ordered bytes in base64, the shape of a 2-D one),
    without the dataframe checks Plotly makes on every array (about 0.1 ms each: a region figure has
    26 arrays); any other array by Plotly itself."""
    if type(v) is np.ndarray and v.dtype == _FLOAT64 and v.size:
        spec = {"dtype": "f8", "bdata": base64.b64encode(np.ascontiguousarray(v).data).decode("ascii")}
        if v.ndim > 1:
            spec["shape"] = str(v.shape)[1:-1]
        return spec
    return to_typed_array_spec(v)


_FLOAT64 = np.dtype(np.float64)


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


def download_tables(tables: Mapping[str, Sequence[Mapping[str, str]]], *, title: str,
                    values: Mapping[str, Any], stem: str, key: str) -> None:
    """Each display table for a report, as LaTeX (booktabs) and Markdown: the bytes ``python -m dpviz
    figure … --out x.tex|x.md --table NAME`` writes (``dpviz.export``), captioned with the view and
    every input. Numbers as the table shows them, rounded in their sound direction. Written when
    clicked (not on every rerun), and a click does not rerun the page."""
    shown = {name: rows for name, rows in tables.items() if rows}
    for column, (name, rows) in zip(st.columns(max(1, len(shown))), shown.items(), strict=False):
        caption = export.table_caption(title, name, values)
        label = f"{name.replace('_', ' ')}: " if len(shown) > 1 else "Table: "
        column.download_button(f"{label}LaTeX", _table_latex(rows, caption, f"{stem}_{name}"),
                               file_name=f"{stem}_{name}.tex", mime="text/x-tex", key=f"{key}_{name}_tex",
                               icon=":material/download:", on_click="ignore")
        column.download_button(f"{label}Markdown", _table_markdown(rows, caption),
                               file_name=f"{stem}_{name}.md", mime="text/markdown", key=f"{key}_{name}_md",
                               icon=":material/download:", on_click="ignore")


def _table_latex(rows: Sequence[Mapping[str, str]], caption: str, label: str) -> Callable[[], str]:
    return lambda: export.table_latex(rows, caption=caption, label=label)


def _table_markdown(rows: Sequence[Mapping[str, str]], caption: str) -> Callable[[], str]:
    return lambda: export.table_markdown(rows, caption=caption)


@st.fragment
def cite_box(view: str) -> None:
    """"Cite": the BibTeX of the sources this view's rows cite (``dpviz.references``). The BibTeX is
    drawn when the box is opened (a rerun of this fragment alone): highlighting it in a closed box
    cost every page load 0.26 s of the browser's script time."""
    text = references.bibtex(view)
    with st.expander("Cite", icon=":material/format_quote:", key=f"cite_{view}_open",
                     on_change="rerun") as box:
        st.markdown("The papers behind this view's numbers (each row names its theorem; versions in "
                    "docs/REFERENCES.md):")
        if box.open:
            st.code(text, language="bibtex")
        st.download_button("BibTeX", text, file_name=f"dpviz_{view}.bib", mime="application/x-bibtex",
                           key=f"cite_{view}", icon=":material/download:")
