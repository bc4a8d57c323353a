"""Every input of every page is restored from the URL query string (shareable views)."""

from __future__ import annotations

import pytest

from tests.app.helpers import assert_clean, errors, run_page

CASES = {
    "pages/1_Privacy_regions.py": {"eps0": "0.4", "delta0": "1e-05", "k": "12"},
    "pages/2_Composition_curves.py": {"eps0": "0.2", "delta0": "1e-08", "delta": "1e-06", "k_max": "300",
                                      "k": "40", "levels": "0.2:0:5,1.0:1e-07:2", "hdelta": "0.001"},
    "pages/3_Database_priors.py": {"preset": "Subsidiaries", "eps0": "0.3", "delta0": "0.0", "delta": "1e-06",
                                   "k": "50", "cap": "2", "nb": "bounded"},
    "pages/4_Mechanisms.py": {"mechanism": "Laplace", "scale": "3.0", "sensitivity": "1.0", "mech_k": "20",
                              "rate": "0.0", "mech_delta": "1e-06", "het_delta": "0.001"},
}


def widget_value(at, key: str) -> str:
    for kind in ("text_input", "radio", "select_slider"):
        try:
            return str(getattr(at, kind)(key=key).value)
        except KeyError:
            continue
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
    table = at.table[-1].value
    exact = table["ε upper"][0]
    # 3 mechanisms 0.2-DP and 2 that are (0.5, 1e-6)-DP: the exact optimum is below basic's 1.6
    assert 0 < float(exact) < 1.6
    bad = run_page("pages/4_Mechanisms.py", het_rows="0.2:0")
    assert any(m.startswith("levels must be") for m in errors(bad))
