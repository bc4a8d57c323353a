"""AppTest for the nested regions on pages/1_Privacy_regions.py (KOV Fig. 2; issue 10 item 6)."""

from __future__ import annotations

from tests.app.helpers import assert_clean, errors, figures, run_page, trace_names


def _nested(at) -> dict:
    return next(f for f in figures(at) if "nested" in f["layout"]["title"]["text"])


def test_default_page_draws_the_nested_regions() -> None:
    at = run_page("pages/1_Privacy_regions.py")
    assert_clean(at)
    assert len(figures(at)) == 3
    assert [n for n in trace_names(_nested(at)) if n.startswith("k = ")] == [
        "k = 100", "k = 30", "k = 10", "k = 3", "k = 1"]


def test_any_k_typed_is_drawn() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="37, 2 ,500")
    assert_clean(at)
    assert [n for n in trace_names(_nested(at)) if n.startswith("k = ")] == ["k = 500", "k = 37", "k = 2"]
    at.text_input(key="ks").set_value("7").run()
    assert [n for n in trace_names(_nested(at)) if n.startswith("k = ")] == ["k = 7"]


def test_bad_overlay_names_the_field_and_falls_back() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="1,2,3,4,5,6,7,8,9")
    assert_clean(at)
    assert any(m.startswith("overlaid k values must be") for m in errors(at)), errors(at)
    assert len([n for n in trace_names(_nested(at)) if n.startswith("k = ")]) == 5
