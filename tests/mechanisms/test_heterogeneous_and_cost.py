"""Heterogeneous levels (exact / PLD / KOV Thm 3.5) and the up-front cost checks."""

from __future__ import annotations

import pytest

from dpviz.composition import parse_levels
from dpviz.mechanisms import gaussian, routes
from dpviz.mechanisms.heterogeneous import compare
from dpviz.mechanisms.registry import make
from dpviz.pld import MAX_BINS, plan
from dpviz.validation import ParameterError


@pytest.mark.parametrize("text", ["0.13:0:40,0.71:1e-6:5", "0.1:1e-7:30,0.5:0:10,0.25:1e-8:12"])
def test_exact_inside_pld_and_below_kov(text):
    r = compare(parse_levels(text), delta=1e-4)
    exact = r["exact"].upper
    assert r["pld"].lower <= exact <= r["pld"].upper
    assert r["pld"].relative_width < 1e-3
    assert r["kov"].upper >= exact  # Thm 3.5 is a (looser) upper bound


def test_many_levels_use_pld_only():
    r = compare(parse_levels("0.1:0:100,0.2:0:50,0.05:1e-7:200,0.3:0:20"), delta=1e-4)
    assert "exact" not in r  # Π(count + 1) ≈ 2e7 atoms exceeds the exact route's budget
    assert r["pld"].lower <= r["pld"].upper <= r["kov"].upper


def test_too_fine_grid_is_refused_before_computing():
    with pytest.raises(ParameterError, match=f"h must be coarse enough for at most {MAX_BINS:,} grid"):
        plan([(gaussian.loss_law(sigma=1.0), 10)], h=1e-7)  # the single step alone is too big
    with pytest.raises(ParameterError, match=f"composed grid stays below {MAX_BINS:,} bins"):
        plan([(gaussian.loss_law(sigma=3.0), 100_000)], h=1e-4)  # the composition is too big


def test_automatic_width_fits_the_grid_limit():
    mech = make("gaussian", sigma=0.5, sampling_rate=0.3)
    g = routes.pld([(mech, 5000)], delta=1e-6)
    h = float(g.detail.split(",")[0].removeprefix("h="))
    assert g.status.value == "ok" and plan([(mech.law, 5000)], h=h) <= MAX_BINS


def test_make_validation_names_field():
    with pytest.raises(ParameterError, match="mechanism must be one of"):
        make("cauchy", sigma=1.0)
    with pytest.raises(ParameterError, match="sigma must be"):
        make("gaussian", sigma=-1.0)
    with pytest.raises(ParameterError, match="categories must be"):
        make("randomized-response", eps0=1.0, categories=1)
