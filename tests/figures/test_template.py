"""The dpviz template styles only what its figures use (``dpviz.figures.style.TRACE_TYPES``; the
rest of plotly_white was 6 KB of every figure sent on every change, issue 20): every figure of every
view is made of those trace types only, and the template keeps the app's own look."""

from __future__ import annotations

import json

import plotly.io as pio
import pytest

from dpviz.figures import style
from dpviz.views.catalog import registry
from tests.figures.test_unvalidated import CASES


@pytest.mark.parametrize(("view", "change"), CASES)
def test_every_trace_is_of_a_styled_type(view: str, change: dict) -> None:
    spec = registry()[view]
    built = spec.build(**{**spec.defaults(), **change})
    for name, fig in built.figures.items():
        kinds = {trace.type for trace in fig.data}
        assert kinds <= set(style.TRACE_TYPES), (name, kinds)
        assert fig.layout.template.layout.font.family == style.FONT_FAMILY, name


def test_the_template_keeps_plotly_white_for_the_styled_types() -> None:
    """The trace defaults kept are plotly_white's own, unchanged; the subplots not used are gone."""
    white = pio.templates["plotly_white"].to_plotly_json()
    mine = style.TEMPLATE_SPEC
    assert set(mine["data"]) == set(style.TRACE_TYPES)
    for kind in style.TRACE_TYPES:
        assert mine["data"][kind] == white["data"][kind]
    assert not {"geo", "polar", "scene", "ternary", "colorscale"} & set(mine["layout"])
    assert mine["layout"]["colorway"] == [s.color for s in style.STYLES.values()]
    assert len(json.dumps(mine)) < len(json.dumps(white)) / 2
