"""What each page shows, as data and figures.

A view function takes validated page parameters, calls the core and the figure
builders, and returns a :class:`View`. The Streamlit pages and the headless
``python -m dpviz figure`` command both call these, so an exported figure is the
one the page shows. No Streamlit here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from dpviz.params import Param


@dataclass(frozen=True)
class View:
    """Figures, downloadable tables (CSV columns), a JSON payload, display tables and a few
    headline numbers (``summary``), each by name."""

    figures: Mapping[str, go.Figure]
    csv: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    payload: Mapping[str, Any] = field(default_factory=dict)
    tables: Mapping[str, list[dict[str, str]]] = field(default_factory=dict)
    summary: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ViewSpec:
    """A page's parameters and the function that builds its view from them. ``aliases`` maps
    URL keys the page used before (in links already shared) to the parameter keys."""

    name: str
    title: str
    params: tuple[Param, ...]
    build: Callable[..., View]
    aliases: Mapping[str, str] = field(default_factory=dict)

    def defaults(self) -> dict[str, Any]:
        return {p.key: p.check(p.default) for p in self.params}
