"""AppTest for pages/3_Database_priors.py: every preset renders with numbers, and bad input
shows a message naming the field."""

from __future__ import annotations

import pytest

from dpviz.gce.questions import PRESETS
from dpviz.views.database_priors import KIND_LABELS
from tests.app.helpers import assert_clean, errors, figures, run_page, tables, trace_names

PAGE = "pages/3_Database_priors.py"


def _table(at) -> list[dict]:
    df = tables(at)[0]
    return df.to_dict("records")


def _row(rows: list[dict], prefix: str) -> dict:
    return next(r for r in rows if r["bound"].startswith(prefix))


@pytest.mark.parametrize("key", list(PRESETS))
def test_every_preset_renders_numbers_and_figures(key: str) -> None:
    k = "1000" if key == "hospitals" else "200"  # the 365-night cap only bites for k > 365
    at = run_page(PAGE, preset=PRESETS[key].title, k=k, delta0="0")
    assert_clean(at)
    assert not errors(at)
    rows = _table(at)
    classic, exact = _row(rows, "Classic"), _row(rows, "Exact")
    assert float(exact["ε"]) < float(classic["ε"]), "the prior or constraint must help here"
    assert exact["proved for"].startswith("both")
    figs = figures(at)
    assert len(figs) == 2
    assert any("Exact" in n for n in trace_names(figs[1]))


def test_uniform_prior_shows_every_paper_bound_with_directions() -> None:
    at = run_page(PAGE, preset=PRESETS["nonzero"].title, k="50", delta0="1e-8", delta="1e-4")
    assert_clean(at)
    rows = _table(at)
    labels = " ".join(r["bound"] for r in rows)
    for name in ("Cor. 7", "Thm 3 + basic", "Thm 3 + advanced", "Thm 3 + optimal"):
        assert name in labels
    exact = float(_row(rows, "Exact")["ε"])
    for r in rows:
        if r["ε"] != "—":
            assert float(r["ε"]) >= exact * (1 - 1e-6), r["bound"]


def test_cap_above_k_is_no_constraint() -> None:
    at = run_page(PAGE, preset=PRESETS["hospitals"].title, k="200")
    assert_clean(at)
    rows = _table(at)
    assert _row(rows, "Exact")["ε"] == _row(rows, "Classic")["ε"]


def test_hospital_constraint_counts_the_mechanisms() -> None:
    at = run_page(PAGE, preset=PRESETS["hospitals"].title, k="1000", nb="bounded")
    assert_clean(at)
    text = " ".join(m.value for m in at.markdown)
    assert "**730**" in text  # bounded: 2 × 365 mechanisms differ


def test_custom_kind_switches_inputs() -> None:
    at = run_page(PAGE, preset=PRESETS["custom"].title, kind="in at least k' databases", k="40", k2="10")
    assert_clean(at)
    assert not errors(at)
    assert at.text_input(key="k2").value == "10"


@pytest.mark.parametrize(("params", "field"), [
    ({"eps0": "-1"}, "ε0"), ({"delta0": "2"}, "δ0"), ({"delta": "abc"}, "target total δ"), ({"k": "0"}, "k"),
    ({"cap": "0"}, "C"), ({"k": "1e9"}, "k"),
])
def test_bad_input_names_the_field(params: dict, field: str) -> None:
    at = run_page(PAGE, preset=PRESETS["hospitals"].title, **params)
    assert_clean(at)
    msgs = errors(at)
    assert msgs and any(field in m for m in msgs), msgs


def test_too_large_exact_is_a_message_not_a_hang() -> None:
    """Over the page's budget the exact row shows the best bound (classic here) as an upper bound
    and says why; the region says it was not computed."""
    at = run_page(PAGE, preset=PRESETS["atleast"].title, k="2000", delta0="1e-9", delta="1e-3")
    assert_clean(at)
    rows = _table(at)
    exact = _row(rows, "Exact")
    assert "not computed" in exact["source / note"] and exact["kind"] == "upper"
    assert exact["ε"] == _row(rows, "Classic")["ε"] != "—"
    assert any("not computed" in w.value for w in at.warning)


def test_the_short_names_the_help_lists_open_the_page() -> None:
    """``kind=typed`` and ``preset=custom`` (the CLI's values, which the help lists) open the page as
    the menu's names do (issue 19: the short name was refused and the page fell back to the cap)."""
    short = run_page(PAGE, preset="custom", kind="typed", k="8", prior="1:0.5, 2:0.3, 3:0.2")
    assert_clean(short)
    assert not errors(short), errors(short)
    assert short.radio(key="kind").value == KIND_LABELS["typed"]
    named = run_page(PAGE, preset=PRESETS["custom"].title, kind=KIND_LABELS["typed"], k="8",
                     prior="1:0.5, 2:0.3, 3:0.2")
    assert [t.to_csv() for t in tables(short)] == [t.to_csv() for t in tables(named)]


def _fragments(sent: list, kind: str, text: str = "") -> set[str]:
    """The fragment ids (``""``: the page itself) of the elements of ``kind`` a run drew (whose
    Markdown body starts with ``text``, when given)."""
    ids = set()
    for m in sent:
        if m.WhichOneof("type") != "delta" or m.delta.WhichOneof("type") != "new_element":
            continue
        element = m.delta.new_element
        if element.WhichOneof("type") == kind and (not text or element.markdown.body.startswith(text)):
            ids.add(m.delta.fragment_id)
    return ids


def test_an_input_change_reruns_the_question_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20: the inputs and everything drawn from them are one fragment, so a change reruns it
    alone; the title and the explanations, which no input changes, are drawn by the page around it
    (not sent again on every change)."""
    from streamlit.testing.v1.local_script_runner import LocalScriptRunner

    sent: list = []
    recorded = LocalScriptRunner.forward_msgs

    def record(self: LocalScriptRunner) -> list:
        sent[:] = recorded(self)
        return sent

    monkeypatch.setattr(LocalScriptRunner, "forward_msgs", record)
    at = run_page(PAGE, preset=PRESETS["hospitals"].title)  # a cap: the heterogeneous section too
    assert_clean(at)
    drawn = set().union(*(_fragments(sent, kind) for kind in ("text_input", "radio", "plotly_chart",
                                                              "arrow_data_frame")))
    assert len(drawn) == 1 and "" not in drawn, drawn
    # the bounds, the levels editor and the heterogeneous releases' table
    assert len(at.text_input) >= 4 and len(figures(at)) == 2 and len(at.dataframe) == 3
    assert _fragments(sent, "markdown", "Classic composition assumes the worst") == {""}
    assert _fragments(sent, "heading") >= {""}
