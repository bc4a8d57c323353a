"""Extreme but valid inputs on every page: no exception reaches the user, and the page says
something (a table or a notice) instead of failing silently."""

from __future__ import annotations

import pytest

from tests.app.helpers import assert_clean, run_page, tables

EXTREMES = [
    ("pages/1_Privacy_regions.py", {"eps0": "0", "delta0": "0", "k": "1"}),
    ("pages/1_Privacy_regions.py", {"eps0": "50", "delta0": "1e-300", "k": "10000"}),
    ("pages/1_Privacy_regions.py", {"eps0": "100", "delta0": "0.999", "k": "2"}),
    ("pages/2_Composition_curves.py", {"eps0": "0", "delta0": "0", "delta": "0"}),
    ("pages/2_Composition_curves.py", {"eps0": "50", "delta0": "1e-300", "delta": "1e-300", "k": "1000000"}),
    ("pages/2_Composition_curves.py", {"eps0": "0.001", "k_max": "1000000", "delta": "0.999"}),
    ("pages/2_Composition_curves.py", {"levels": "0:0.5:3,100:0:2", "hdelta": "0.9"}),
    ("pages/3_Database_priors.py", {"preset": "In at least one database", "eps0": "50", "k": "100000"}),
    ("pages/3_Database_priors.py", {"preset": "In at least k' databases", "k": "5000", "delta0": "0.01"}),
    ("pages/3_Database_priors.py", {"preset": "365 hospital nights", "k": "10", "cap": "100000"}),
    ("pages/3_Database_priors.py", {"preset": "Subsidiaries", "eps0": "0", "delta": "0"}),
    ("pages/4_Mechanisms.py", {"mechanism": "Gaussian", "sigma": "1000000", "mech_k": "100000"}),
    ("pages/4_Mechanisms.py", {"mechanism": "Laplace", "scale": "0.01", "rate": "1", "mech_k": "3"}),
    ("pages/4_Mechanisms.py", {"mechanism": "Randomized response", "mech_eps0": "100", "mech_k": "1"}),
]


@pytest.mark.parametrize("path,params", EXTREMES, ids=[f"{p.split('/')[-1][:-3]}-{i}" for i, (p, _) in
                                                        enumerate(EXTREMES)])
def test_extreme_inputs_reach_the_user_as_numbers_or_notices(path, params):
    at = run_page(path, **params)
    assert_clean(at)
    shown = tables(at) or at.get("plotly_chart") or at.error or at.warning
    assert shown, "the page shows a result or says why not"
