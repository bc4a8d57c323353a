"""What each page shows, as data and figures.

A view function takes validated page parameters, calls the core and the figure
builders, and returns a :class:`View`. The Streamlit pages and the headless
``python -m dpviz figure`` command both call these, so an exported figure is the
one the page shows. No Streamlit here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import plotly.graph_objects as go

from dpviz.params import Param


class Deferred(Mapping[str, Any]):
    """A mapping made by ``make`` when it is first read, then kept: a download's columns that cost
    more than a page's rerun and are read only when the button is clicked (the attack lab's
    Clopper–Pearson box at each of 2,000 thresholds took 15–18 ms of a change's CPU, issue 20)."""

    def __init__(self, make: Callable[[], Mapping[str, Any]]) -> None:
        self._make = make
        self._made: Mapping[str, Any] | None = None
        self._lock = threading.Lock()  # a cached view is shared by every session's thread

    def _value(self) -> Mapping[str, Any]:
        with self._lock:
            if self._made is None:
                self._made = self._make()
            return self._made

    def __getitem__(self, key: str) -> Any:
        return self._value()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._value())

    def __len__(self) -> int:
        return len(self._value())


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
