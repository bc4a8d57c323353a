"""HBW Cor. 6 as a row of the uniform prior's table (`gce --prior uniform-nonzero`, the Database priors
page): its ε against the corollary's formula at 50 digits, each term's ε̂_i being the smallest ε at which
the optimal composition (KOV Thm 3.3, mpmath) of the k − i mechanisms subsampled with rate ½
(ln(1 + (e^ε0 − 1)/2), δ0/2) has δ ≤ δ − δ0; and never below the exact worst case, by brute force."""

from __future__ import annotations

import json
import subprocess
import sys

import mpmath
import numpy as np
import pytest

from dpviz.gce import summary
from tests import oracles
from tests.app.helpers import assert_clean, run_page, tables


def mp_cor6(*, k: int, eps0: float, delta0: float, delta: float) -> float:
    """ln[Σ_i 2^{k−i} e^{ε0 + ε̂_i} / (2^k − 1)] with ε̂_i found by bisection on mpmath's δ_opt."""
    with mpmath.workdps(40):
        e_sub = float(mpmath.log(1 + mpmath.expm1(mpmath.mpf(eps0)) / 2))
        total = mpmath.mpf(0)
        for i in range(1, k + 1):
            n = k - i
            if n == 0:
                hat = mpmath.mpf(0)
            else:
                def delta_at(e: float, n: int = n) -> float:
                    return float(oracles.mp_delta_opt(k=n, eps0=e_sub, delta0=delta0 / 2, eps=e))
                hat = mpmath.mpf(oracles.smallest_epsilon(delta_at, delta - delta0, hi=50.0))
            total += mpmath.mpf(2) ** (k - i) * mpmath.exp(mpmath.mpf(eps0) + hat)
        return float(mpmath.log(total / (mpmath.mpf(2) ** k - 1)))


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), [(4, 0.5, 0.0, 1e-3), (6, 0.3, 1e-6, 1e-3),
                                                            (8, 1.0, 0.0, 1e-5)])
def test_cor6_row_against_the_formula_in_mpmath(k, eps0, delta0, delta):
    row = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta)["cor6"]
    want = mp_cor6(k=k, eps0=eps0, delta0=delta0, delta=delta)
    assert row.epsilon >= want - 1e-9
    assert row.epsilon == pytest.approx(want, rel=1e-7)
    assert row.source == "HBW Cor. 6 with Optimal (KOV Thm 3.3)" and row.directions == "both"


@pytest.mark.parametrize(("k", "eps0", "delta0"), [(3, 0.5, 0.0), (4, 1.0, 1e-4)])
def test_cor6_row_is_never_below_the_brute_force_worst_case(k, eps0, delta0):
    p, q = oracles.canonical(eps0, delta0)
    mix = oracles.mixture(oracles.nonzero(k), p, q)
    null = oracles.mixture(oracles.zero(k), p, q)
    delta = 1e-3
    row = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta)["cor6"]
    assert oracles.hockey_stick(np.asarray(mix), np.asarray(null), row.epsilon) <= delta * (1 + 1e-9)


def test_gce_cli_lists_cor6():
    out = subprocess.run([sys.executable, "-m", "dpviz", "gce", "--eps0", "0.1", "--k", "1000", "--prior",
                          "uniform-nonzero", "--delta", "1e-6"], capture_output=True, text=True, check=True)
    row = json.loads(out.stdout)["cor6"]
    assert row["source"] == "HBW Cor. 6 with Optimal (KOV Thm 3.3)"
    assert round(row["epsilon"], 3) == 8.619


def test_priors_page_shows_the_cor6_row():
    at = run_page("pages/3_Database_priors.py", preset="In at least one database", k="30")
    assert_clean(at)
    rows = tables(at)[0].to_dict("records")
    assert any(r["bound"] == "HBW Cor. 6 + optimal composition (one common δ̂)" for r in rows)
