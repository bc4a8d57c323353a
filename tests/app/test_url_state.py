"""Every input of every page is restored from the URL query string (shareable views)."""

from __future__ import annotations

import pytest

from dpviz.params import rows_text, text_rows
from tests.app.helpers import assert_clean, editors, errors, run_page, tables

CASES = {
    "pages/1_Privacy_regions.py": {"eps0": "0.4", "delta0": "1e-05", "k": "12"},
    "pages/2_Composition_curves.py": {"eps0": "0.2", "delta0": "1e-08", "delta": "1e-06", "k_max": "300",
                                      "k": "40", "levels": "0.2:0:5,1.0:1e-07:2", "hdelta": "0.001"},
    "pages/3_Database_priors.py": {"preset": "Subsidiaries", "eps0": "0.3", "delta0": "0.0", "delta": "1e-06",
                                   "k": "50", "cap": "2", "neighbouring": "bounded"},
    "pages/4_Mechanisms.py": {"mechanism": "laplace", "scale": "3.0", "sensitivity": "1.0", "k": "20",
                              "sampling_rate": "1.0", "delta": "1e-06", "het_delta": "0.001"},
}


def widget_value(at, key: str) -> str:
    for kind in ("text_input", "radio", "select_slider"):
        try:
            return str(getattr(at, kind)(key=key).value)
        except KeyError:
            continue
    for editor in at.dataframe:  # a levels editor keeps its rows in the URL as ε:δ:count,…
        if editor.proto.editing_mode and editor.key.startswith(f"{key}_editor"):
            return rows_text([tuple(r) for r in editor.value.values.tolist()])
    raise AssertionError(f"no widget with key {key!r}")


@pytest.mark.parametrize("path", list(CASES))
def test_url_restores_every_input(path):
    params = CASES[path]
    at = run_page(path, **params)
    assert_clean(at)
    assert not errors(at), errors(at)
    for key, value in params.items():
        assert widget_value(at, key) == value, key


def test_mechanism_rows_live_in_the_url():
    at = run_page("pages/4_Mechanisms.py", het_rows="0.2:0:3,0.5:1e-06:2")
    assert_clean(at)
    table = tables(at)[-1]
    exact = table["ε upper"][0]
    # 3 mechanisms 0.2-DP and 2 that are (0.5, 1e-6)-DP: the exact optimum is below basic's 1.6
    assert 0 < float(exact) < 1.6
    bad = run_page("pages/4_Mechanisms.py", het_rows="0.2:0")
    assert any(m.startswith("levels must be") for m in errors(bad))
    assert editors(bad)[-1].values.tolist() == [["0.13", "0", "40"], ["0.71", "1e-6", "5"]]  # the default


def test_rows_keep_any_cell_text_through_the_url():
    """A cell may hold ',' or ':' (a typo such as 1,5): the URL escapes it, the same text comes
    back, and the notice names the cell."""
    rows = [("1,5", "0", "3"), ("0.5", "a:b", "2"), ("", "", "")]
    text = rows_text(rows)
    assert text_rows(text) == rows
    at = run_page("pages/4_Mechanisms.py", het_rows=text)
    assert_clean(at)
    assert [tuple(r) for r in editors(at)[-1].values.tolist()] == rows  # the (ε, δ, count) editor, last
    messages = errors(at)
    assert any(m.startswith("ε (row 1) must be") and "'1,5'" in m for m in messages), messages
    assert any(m.startswith("δ (row 2) must be") and "'a:b'" in m for m in messages), messages


def test_switching_the_scenario_sets_its_values():
    """Regression (issue 10 item 2): 365 hospital nights → Subsidiaries kept C = 365 on screen
    while ?preset=Subsidiaries opens with C = 1. A scenario sets its own C (and k')."""
    at = run_page("pages/3_Database_priors.py")
    assert at.text_input(key="cap").value == "365"
    at.text_input(key="eps0").set_value("0.2")
    at.radio(key="preset").set_value("Subsidiaries").run()
    assert_clean(at)
    assert at.text_input(key="cap").value == "1"
    shared = run_page("pages/3_Database_priors.py", preset="Subsidiaries", eps0="0.2")
    assert tables(shared)[0].equals(tables(at)[0])
    at.radio(key="preset").set_value("In at least k' databases").run()
    assert at.text_input(key="k2").value == "3"
    at.radio(key="preset").set_value("365 hospital nights").run()
    assert at.text_input(key="cap").value == "365"


# --- URL keys renamed to the CLI's flag names: links shared before still open the same view ------

OLD_LINKS = [  # (page, old query, the same query with today's keys)
    ("pages/3_Database_priors.py",
     {"preset": "Subsidiaries", "k": "50", "cap": "2", "nb": "bounded"},
     {"preset": "Subsidiaries", "k": "50", "cap": "2", "neighbouring": "bounded"}),
    ("pages/3_Database_priors.py",
     {"preset": "Custom", "kind": "free vs paid feature columns", "common": "2", "nb": "bounded"},
     {"preset": "Custom", "kind": "free vs paid feature columns", "common": "2", "neighbouring": "bounded"}),
]


@pytest.mark.parametrize(("path", "old", "new"), OLD_LINKS)
def test_old_url_keys_open_the_same_view(path, old, new):
    """An alias (``ViewSpec.aliases``) is read as its new key: same widgets, same numbers."""
    before, after = run_page(path, **old), run_page(path, **new)
    assert_clean(before)
    assert not errors(before), errors(before)
    for key, value in new.items():
        assert widget_value(before, key) == value, key
    shown = [t.to_csv() for t in tables(before)]
    assert shown == [t.to_csv() for t in tables(after)]
    unbounded = run_page(path, **{k: v for k, v in new.items() if k != "neighbouring"})
    assert shown != [t.to_csv() for t in tables(unbounded)]  # the alias was read, not dropped
