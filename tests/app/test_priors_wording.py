"""Database priors for a newcomer (issue 21): switching the scenario logs no stack trace, a row
without a value says "impossible" or "not computed" (the README's words) and shows its reason
outside any collapsed section."""

from __future__ import annotations

import logging

from streamlit.elements.lib import policies

from dpviz import ui
from dpviz.figures.tables import KIND_WORDS
from dpviz.views.database_priors import PRESETS, SPEC
from tests.app.helpers import assert_clean, run_page, tables

PAGE = "pages/3_Database_priors.py"


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def test_switching_to_custom_logs_no_session_state_warning(monkeypatch):
    monkeypatch.setattr(policies, "_shown_default_value_warning", False)  # logged once per process
    records = _Records()
    policies._LOGGER.addHandler(records)  # Streamlit's loggers do not propagate to pytest's
    try:
        at = run_page(PAGE)
        for key in ("custom", "hospitals", "custom"):
            at.radio(key="preset").set_value(PRESETS[key].title).run()
            assert_clean(at)
    finally:
        policies._LOGGER.removeHandler(records)
    assert not [m for m in records.messages if "Session State API" in m]


def _no_value_page():
    """Hospitals at total δ = 0: advanced composition and zCDP prove no finite ε (impossible)."""
    return run_page(PAGE, delta="0")


def test_every_kind_is_one_of_the_readme_words():
    readme_words = {"exact", "upper", "lower", "impossible", "not computed"}
    assert set(KIND_WORDS) <= readme_words
    at = _no_value_page()
    assert_clean(at)
    kinds = set(tables(at)[0]["kind"])
    assert "infeasible" not in kinds and kinds <= readme_words, kinds


def test_a_row_without_a_value_shows_its_reason_in_view():
    at = _no_value_page()
    frame = tables(at)[0]
    missing = frame[frame["ε"].isna()]
    assert len(missing) == 2
    shown = " ".join(m.value for m in at.markdown)  # not inside the collapsed expander
    for name in missing["bound"]:
        assert f"**{ui.plain(name)}** — impossible: " in shown, name


def test_the_view_itself_uses_the_words():
    view = SPEC.build(**{**SPEC.defaults(), "delta": 0.0})
    assert all(r["kind"] in KIND_WORDS for r in view.tables["bounds"])
