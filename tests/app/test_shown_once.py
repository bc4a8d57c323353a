"""What a rerun shows is made once (issue 20, cost per interaction): a figure's dictionary, a
table's frame and column widths, the report tables' text. Each must be exactly what the page would
have made anew: the same JSON, the same frame, the same bytes."""

from __future__ import annotations

import gc
import json
from typing import Any

import plotly.io as pio
import plotly.tools
import pytest

from dpviz import export
from dpviz.ui import output, tables
from dpviz.views import planner as pv
from dpviz.views import regions
from dpviz.views.catalog import registry
from tests.app.helpers import figures, run_page
from tests.figures.test_unvalidated import CASES


def _spec(fig: object) -> str:
    """The JSON ``st.plotly_chart`` writes for a figure (its own two steps)."""
    return pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True),
                       validate=False)


def test_a_shown_figure_is_serialised_as_streamlit_would_and_only_once() -> None:
    view = regions.SPEC.build(**regions.SPEC.defaults())
    for fig in view.figures.values():
        twin = output._serialised(fig)
        assert _spec(twin) == _spec(fig)
        assert output._serialised(fig) is twin  # the second rerun reuses it


@pytest.mark.parametrize(("view", "change"), CASES)
def test_a_figure_dictionary_is_plotlys_own_for_every_view(view: str, change: dict[str, Any]) -> None:
    """``figure_dict`` (no deep copy) gives what ``to_dict`` gives, key order and encoding included."""
    spec = registry()[view]
    for fig in spec.build(**{**spec.defaults(), **change}).figures.values():
        assert pio.to_json(output._Serialised(output.figure_dict(fig)), validate=False) == pio.to_json(
            fig, validate=False)


def test_a_dropped_figure_takes_its_serialised_twin_with_it() -> None:
    fig = regions.SPEC.build(**regions.SPEC.defaults()).figures["single"]
    key = id(fig)
    output._serialised(fig)
    assert key in output._SHOWN
    del fig
    gc.collect()
    assert key not in output._SHOWN


def test_the_page_shows_the_figures_its_view_builds() -> None:
    """Privacy regions at its defaults, run twice: both runs send the view's own figures."""
    at = run_page("pages/1_Privacy_regions.py")
    view = regions.SPEC.build(**regions.SPEC.defaults())
    want = [json.loads(_spec(view.figures[name])) for name in ("single", "methods", "nested")]
    assert figures(at) == want
    at.run()
    assert figures(at) == want


def test_a_table_grid_is_made_once_per_content_and_equals_a_fresh_one() -> None:
    rows = [{"method": "Basic (KOV Thm 3.1)", "largest ε0": "0.01", "kind": "exact", "note": ""},
            {"method": "Optimal (KOV Thm 3.3)", "largest ε0": "—", "kind": "impossible", "note": "why"}]
    frame, config, layout = tables._grid(rows)
    fresh_frame, fresh_config, fresh_layout = tables._grid_made(rows)
    assert frame.equals(fresh_frame) and frame.schema == fresh_frame.schema
    assert config == fresh_config and layout == fresh_layout
    assert tables._grid([dict(r) for r in rows])[0] is frame  # equal rows: the same grid
    assert tables._grid([{**rows[0], "note": "other"}, rows[1]])[0] is not frame


def test_a_table_with_an_unhashable_cell_is_still_shown() -> None:
    rows = [{"method": "x", "value": ["1", "2"]}]  # type: ignore[dict-item]
    frame, _, _ = tables._grid(rows)  # type: ignore[arg-type]
    assert frame.column_names == ["method", "value"]


@pytest.mark.parametrize("name", ["eps0", "k", "noise", "gce"])
def test_report_tables_are_written_when_clicked_with_the_same_bytes(name: str) -> None:
    view = pv.build(**{**pv.SPEC.defaults(), "k_max": 50})
    rows = view.tables[name]
    caption = export.table_caption(pv.SPEC.title, name, pv.SPEC.defaults())
    assert output._table_latex(rows, caption, f"planner_{name}")() == export.table_latex(
        rows, caption=caption, label=f"planner_{name}")
    assert output._table_markdown(rows, caption)() == export.table_markdown(rows, caption=caption)


def test_the_planner_figure_is_the_utility_series_of_its_inputs() -> None:
    """The page joins the ε0 and σ searches cached apart: the same series as ``utility_series``."""
    values = {**pv.SPEC.defaults(), "k_max": 50, "sensitivity": 2.0}
    ks, series = pv.utility_series(epsilon=values["epsilon"], delta=values["delta"], delta0=values["delta0"],
                                   sensitivity=2.0, k_max=50)
    at = run_page("pages/5_Plan_a_budget.py", k_max="50", sensitivity="2.0")
    (fig,) = figures(at)
    want = json.loads(_spec(pv.utility_figure(ks, series, epsilon=values["epsilon"], delta=values["delta"],
                                              sensitivity=2.0)))
    assert fig == want
