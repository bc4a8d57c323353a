"""The figure builders skip Plotly's validation (``dpviz.figures.style.figure_of``: most of a
figure's build time). Each figure they make must be one validation leaves as it is: rebuilt from
its own dictionary with validation on, it gives the same JSON (a property Plotly would rename,
coerce or reject, such as a bare string for an axis title, shows up as a difference)."""

from __future__ import annotations

import json
from typing import Any

import plotly.graph_objects as go
import plotly.io as pio
import pytest

from dpviz.views.catalog import registry

CASES: list[tuple[str, dict[str, Any]]] = [
    ("regions", {}),
    ("regions", {"eps0": 3.0, "k": 100}),  # basic and advanced vacuous: the note on the figure
    ("curves", {"k_max": 200}),
    ("priors", {"k": 200}),
    ("priors", {"preset": "custom", "kind": "uniform-nonzero", "k": 50}),
    ("mechanisms", {"k": 100}),
    ("mechanisms", {"k": 100, "solve": "delta"}),  # the target line and the answers marked
    ("mechanisms", {"mechanism": "randomized-response", "eps0": 1.0, "k": 20}),
    ("planner", {"k_max": 50}),
    ("attack", {"trials": 2000}),
]


def _json(fig: go.Figure) -> Any:
    return json.loads(pio.to_json(fig, validate=False))


@pytest.mark.parametrize(("view", "change"), CASES)
def test_every_figure_is_as_validation_would_make_it(view: str, change: dict[str, Any]) -> None:
    spec = registry()[view]
    built = spec.build(**{**spec.defaults(), **change})
    assert built.figures
    for name, fig in built.figures.items():
        assert _json(go.Figure(fig.to_dict())) == _json(fig), name
