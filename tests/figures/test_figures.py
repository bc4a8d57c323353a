"""Every figure of every view: one registered template (screen = export), hover that names the
curve and gives both coordinates, target δ and answer ε marked on δ(ε) plots, vacuous regions
said in words (issue 10 items 4-6)."""

from __future__ import annotations

import re

import numpy as np
import plotly.io as pio
import pytest

from dpviz.composition import METHODS
from dpviz.figures.regions import region_figure
from dpviz.figures.style import FONT_FAMILY, TEMPLATE_NAME
from dpviz.regions import intersection_boundary
from dpviz.regions.boundary import Boundary
from dpviz.views.catalog import registry
from tests.export.cases import CASES, case_id, values, view

IDS = [case_id(c) for c in CASES]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_figure_carries_the_dpviz_template(case):
    registered = pio.templates[TEMPLATE_NAME].to_plotly_json()
    for name, fig in view(*case).figures.items():
        assert fig.layout.template.to_plotly_json() == registered, name
        assert fig.layout.template.layout.font.family == FONT_FAMILY
        # what kaleido receives: the template travels inside the figure, not by name
        assert fig.to_dict()["layout"]["template"]["layout"]["font"]["family"] == FONT_FAMILY


def _has_data(trace) -> bool:
    x = np.asarray(trace.x if trace.x is not None else [], dtype=float)
    return x.size > 0


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_hover_names_the_curve_and_gives_its_coordinates(case):
    for name, fig in view(*case).figures.items():
        _check_hover(case, name, fig)


def _check_hover(case, name, fig) -> None:
    assert fig.layout.template.layout.hoverlabel.namelength == -1  # names are never cut to 15 characters
    outlined = {t.legendgroup for t in fig.data if "lines" in (getattr(t, "mode", None) or "")}
    for trace in fig.data:
        if trace.visible is False or not _has_data(trace):
            continue
        label = f"{case_id(case)}:{name}:{trace.name}"
        if getattr(trace, "mode", None) == "none" and trace.fill == "toself":  # a fill: its outline answers
            assert trace.legendgroup in outlined and trace.showlegend is False, label
            continue
        assert trace.hoverinfo != "skip", f"{label}: no hover at all"
        template = trace.hovertemplate or ""
        assert "%{fullData.name}" in template or (trace.name and trace.name in template), label
        assert re.search(r"%\{x[:}]", template) and re.search(r"%\{y[:}]", template), label
        if getattr(trace, "fill", None) not in (None, "none"):
            # a filled region answers on its boundary points, never for the whole fill
            assert trace.hoveron == "points", f"{label}: the fill steals the hover"


def test_curves_delta_plot_marks_the_target_and_the_answers():
    v = registry()["curves"]
    params = v.defaults()
    built = view("curves")
    fig = built.figures["delta_vs_epsilon"]
    target = params["delta"]
    assert any(s.y0 == target and s.y1 == target for s in fig.layout.shapes), "no target δ line"
    labels = [a for a in fig.layout.annotations if f"target δ = {target:.3g}" in (a.text or "")]
    assert len(labels) == 1 and labels[0].y == pytest.approx(np.log10(target))  # on the line (log axis)
    marks = [t for t in fig.data if t.mode == "markers"]
    assert len(marks) == 1
    answers = {row["method"]: float(row["ε"]) for row in built.tables["at_k"] if row["ε"] != "—"}
    assert answers, "the defaults should give at least one answer"
    marked = dict(zip(marks[0].text, marks[0].x, strict=True))
    for method, eps in answers.items():
        assert marked[method] == pytest.approx(eps, rel=1e-5)  # table rows carry 6 digits
    assert set(marks[0].y) == {target}


@pytest.mark.parametrize("kind", ["gaussian", "laplace"])
def test_mechanism_delta_plot_marks_the_target_and_the_certified_answer(kind):
    built = view("mechanisms", (("mechanism", kind),))
    fig = built.figures["delta"]
    target = values("mechanisms", (("mechanism", kind),))["delta"]
    assert any(s.y0 == target for s in fig.layout.shapes)
    marks = [t for t in fig.data if t.mode == "markers"]
    assert len(marks) == 1
    pld = built.payload["results"]["pld"]
    marked = dict(zip(marks[0].text, marks[0].x, strict=True))
    assert marked["PLD: ε ≤"] == pld["upper"]
    assert fig.layout.yaxis.range[0] < np.log10(target)  # the target line is in view


def _notes(fig) -> list[str]:
    return [a.text.replace("<br>", " ") for a in fig.layout.annotations if "Vacuous" in (a.text or "")]


@pytest.mark.parametrize("params", [{"eps0": 0.1, "delta0": 1e-3, "k": 10_000},
                                    {"eps0": 5.0, "delta0": 1e-3, "k": 30}])
def test_a_vacuous_region_is_said_on_the_figure(params):
    fig = registry()["regions"].build(**params).figures["methods"]
    notes = _notes(fig)
    assert len(notes) == 1 and "every test is possible" in notes[0]
    assert "Optimal (KOV Thm 3.3)" in notes[0]


def test_the_vacuous_note_lists_names_as_in_the_legend():
    """Issue 10: the note read "… for Any mechanism with the same per-step (ε0, δ0)"."""
    full = Boundary(p_fa=np.array([0.0, 1.0]), p_md=np.array([0.0, 0.0]))
    fig = region_figure({"optimal": full}, title="t", labels={"optimal": "Any mechanism with (ε0, δ0)"})
    (note,) = [a.text for a in fig.layout.annotations if "Vacuous" in (a.text or "")]
    assert "for Any" not in note.replace("<br>", " ")
    assert "• Any mechanism with (ε0, δ0)" in note.split("<br>")


def test_overlapping_regions_each_show_their_own_tint_and_every_outline():
    """Issue 10: translucent fills of four nested regions stacked into one muddy colour and hid the
    outlines beneath. Fills are now opaque light tints, drawn before every outline."""
    fig = view("regions").figures["methods"]
    methods = set(METHODS)  # every composition method, zCDP too (Thm 22's intersection over δ′)
    kinds = ["fill" if t.mode == "none" else "line" for t in fig.data if t.legendgroup in methods]
    assert kinds == ["fill"] * len(methods) + ["line"] * len(methods)
    for t in fig.data:
        if t.fill == "toself":
            assert t.fillcolor.startswith("rgb(") and not t.fillcolor.startswith("rgba("), t.fillcolor
    tints = {t.legendgroup: t.fillcolor for t in fig.data if t.fill == "toself"}
    assert set(tints) == methods and len(set(tints.values())) == len(methods)  # one tint per method


def test_an_informative_region_has_no_vacuous_note():
    for name, fig in view("regions").figures.items():
        assert _notes(fig) == [], name


def test_region_figure_notes_a_full_square_anywhere_it_is_used():
    full = Boundary(p_fa=np.array([0.0, 1.0]), p_md=np.array([0.0, 0.0]))
    fig = region_figure({"optimal": full, "single": intersection_boundary([0.1], [0.0])}, title="t",
                        labels={"optimal": "Everything", "single": "One"})
    notes = _notes(fig)
    assert len(notes) == 1 and "Everything" in notes[0] and "One" not in notes[0]


def test_a_region_left_out_is_said_in_a_note_not_the_title():
    """A title that also said why a region is not drawn wrapped to four lines and ran under the
    modebar (Mechanisms page); the reason is a note at the foot of the square instead."""
    one = intersection_boundary([0.1], [0.0])
    fig = region_figure({"single": one}, title="t", left_out="Generic region not drawn")
    assert fig.layout.title.text == "t"
    (note,) = [a for a in fig.layout.annotations if "not drawn" in (a.text or "")]
    assert (note.yanchor, note.y) == ("bottom", 0.02)
    assert not region_figure({"single": one}, title="t").layout.annotations


def test_interval_rows_never_show_a_lower_bound_above_or_an_upper_bound_below_its_value() -> None:
    """Display rounding goes the safe way on both ends of a certified interval."""
    from dpviz.figures.mechanisms import INTERVAL_TABLE, route_table
    from dpviz.figures.tables import table_rows
    from dpviz.guarantee import Guarantee, Kind

    lo, up = 1.234567891234, 1.234567899876  # 8 digits: nearest rounding would move each the wrong way
    g = Guarantee(epsilon=up, delta=1e-5, kind=Kind.UPPER, source="PLD", lower=lo, upper=up)
    for row in (table_rows({"pld": g}, INTERVAL_TABLE)[0], table_rows({"pld": g}, route_table())[0]):
        assert float(row["ε lower"]) <= lo
        assert float(row["ε upper"]) >= up
