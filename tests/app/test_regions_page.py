"""AppTest for the nested regions on pages/1_Privacy_regions.py (KOV Fig. 2; issue 10 item 6)."""

from __future__ import annotations

from tests.app.helpers import assert_clean, errors, figures, run_page


def _nested(at) -> dict:
    return next(f for f in figures(at) if "nested" in f["layout"]["title"]["text"])


def _ks(fig: dict) -> list[str]:
    """The nested regions' names, one per outline (a region's fill is a trace of its own)."""
    return [t["name"] for t in fig["data"]
            if t.get("name", "").startswith("k = ") and t.get("mode") == "lines"]


def test_default_page_draws_the_nested_regions() -> None:
    at = run_page("pages/1_Privacy_regions.py")
    assert_clean(at)
    assert len(figures(at)) == 3
    assert _ks(_nested(at)) == [
        "k = 100", "k = 30", "k = 10", "k = 3", "k = 1"]


def test_any_k_typed_is_drawn() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="37, 2 ,500")
    assert_clean(at)
    assert _ks(_nested(at)) == ["k = 500", "k = 37", "k = 2"]
    at.text_input(key="ks").set_value("7").run()
    assert _ks(_nested(at)) == ["k = 7"]


def test_bad_overlay_names_the_field_and_falls_back() -> None:
    at = run_page("pages/1_Privacy_regions.py", ks="1,2,3,4,5,6,7,8,9")
    assert_clean(at)
    assert any(m.startswith("overlaid k values must be") for m in errors(at)), errors(at)
    assert len(_ks(_nested(at))) == 5
