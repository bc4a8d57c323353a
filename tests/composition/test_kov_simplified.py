"""KOV Thm 3.4's simplified form (kε0² for the drift; docs/MATH.md §18) against a 50-digit mpmath
evaluation of the paper's formula, the paper's Thm 3.4 (never above it) and the exact optimum
(KOV Thm 3.3, never above either); its row in `compose`, the curves table and the regions."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import METHODS, homogeneous, kov, kov_simplified, optimal, parse_levels
from dpviz.guarantee import Status
from dpviz.regions.methods import region_methods


def mp_simplified(*, k: int, eps0: float, delta0: float, delta: float) -> mpmath.mpf:
    """KOV's simplified ε̃ at total δ, from the paper's text at 50 digits."""
    with mpmath.workdps(50):
        e, kk = mpmath.mpf(eps0), mpmath.mpf(k)
        slack = 1 - (1 - mpmath.mpf(delta)) / (1 - mpmath.mpf(delta0)) ** k
        drift = kk * e**2
        second = drift + e * mpmath.sqrt(2 * kk * mpmath.log(mpmath.e + mpmath.sqrt(kk * e**2) / slack))
        third = drift + e * mpmath.sqrt(2 * kk * mpmath.log(1 / slack))
        return min(kk * e, second, third)


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), [
    (2000, 0.1, 1e-6, 1e-2), (10, 0.9, 0.0, 1e-5), (10**6, 0.001, 0.0, 1e-10), (50, 0.3, 1e-8, 1e-3),
    (3, 0.05, 0.0, 0.5)])
def test_matches_the_paper_formula_in_mpmath(k, eps0, delta0, delta):
    g = kov_simplified.epsilon_for_delta(homogeneous(k=k, eps0=eps0, delta0=delta0), delta=delta)
    oracle = mp_simplified(k=k, eps0=eps0, delta0=delta0, delta=delta)
    assert g.epsilon >= float(oracle) * (1 - 1e-13)
    assert g.epsilon == pytest.approx(float(oracle), rel=1e-11)
    assert g.source == "KOV Thm 3.4, simplified form"


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 5000), eps0=st.floats(1e-4, 3.0), delta=st.floats(1e-12, 0.5))
def test_never_below_thm34_nor_the_optimum(k, eps0, delta):
    levels = homogeneous(k=k, eps0=eps0, delta0=0.0)
    simple = kov_simplified.epsilon_for_delta(levels, delta=delta).epsilon
    assert simple >= kov.epsilon_for_delta(levels, delta=delta).epsilon
    assert simple >= optimal.epsilon_for_delta(levels, delta=delta).epsilon * (1 - 1e-12)


def test_delta_inverts_epsilon():
    levels = homogeneous(k=2000, eps0=0.1, delta0=1e-6)
    g = kov_simplified.epsilon_for_delta(levels, delta=1e-2)
    back = kov_simplified.delta_for_epsilon(levels, epsilon=g.epsilon)
    assert back.delta == pytest.approx(1e-2, rel=1e-9)
    below_drift = kov_simplified.delta_for_epsilon(levels, epsilon=2000 * 0.01)  # ε ≤ kε0² = 20
    assert below_drift.status is Status.IMPOSSIBLE


def test_outside_the_papers_range_says_why_it_still_holds():
    inside = kov_simplified.epsilon_for_delta(homogeneous(k=10, eps0=0.9, delta0=0.0), delta=1e-5)
    outside = kov_simplified.epsilon_for_delta(homogeneous(k=10, eps0=1.5, delta0=0.0), delta=1e-5)
    assert inside.detail == ""
    assert "ε0 ≤ 0.9" in outside.detail and "never below Thm 3.4" in outside.detail


def test_levels_use_the_sum_of_squares():
    levels = parse_levels("0.1:1e-6:30,0.5:0:10")
    g = kov_simplified.epsilon_for_delta(levels, delta=1e-4)
    with mpmath.workdps(50):
        var = 30 * mpmath.mpf(0.1) ** 2 + 10 * mpmath.mpf(0.5) ** 2
        slack = 1 - (1 - mpmath.mpf(1e-4)) / (1 - mpmath.mpf(1e-6)) ** 30
        oracle = min(30 * mpmath.mpf(0.1) + 10 * mpmath.mpf(0.5),
                     var + mpmath.sqrt(2 * var * mpmath.log(mpmath.e + mpmath.sqrt(var) / slack)),
                     var + mpmath.sqrt(2 * var * mpmath.log(1 / slack)))
    assert g.epsilon == pytest.approx(float(oracle), rel=1e-11)
    assert g.source == "KOV Thm 3.5, simplified as Thm 3.4"


def test_listed_as_a_method_with_a_region_and_in_compose():
    assert list(METHODS).index("kov_simplified") == list(METHODS).index("kov") + 1
    assert "kov_simplified" in region_methods()
    out = subprocess.run([sys.executable, "-m", "dpviz", "compose", "--eps0", "0.1", "--delta0", "1e-6",
                          "--k", "2000", "--delta", "1e-2"], capture_output=True, text=True, check=True)
    row = json.loads(out.stdout)["kov_simplified"]
    oracle = mp_simplified(k=2000, eps0=0.1, delta0=1e-6, delta=1e-2)
    assert row["epsilon"] == pytest.approx(float(oracle), rel=1e-11)
    assert row["source"] == "KOV Thm 3.4, simplified form"
    assert math.isclose(round(row["epsilon"], 2), 33.89)
