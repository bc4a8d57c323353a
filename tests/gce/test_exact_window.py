"""The exact GCE worst case lists only the count classes whose number of δ-outcomes
r = n_A + n_D lies in a window (issue 12 item 6; docs/MATH.md §12): r is Binomial(k, δ0) under
every prior, the mass outside is bounded (``delta_window``), counted at infinite loss in the
stated values and left out of the lower curves. Checked against brute-force enumeration with a
wide-open window, against the binomial tail itself, and against the full table."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from dpviz import budget as budgets
from dpviz.gce import classes, exact, summary
from dpviz.gce import hypotheses as H
from dpviz.gce.exact import exact_pair
from dpviz.guarantee import Kind
from tests import oracles as brute


@pytest.fixture
def wide_tail(monkeypatch):
    """A window that really cuts at k = 5 (mass 0.02 left out), and a fresh pair cache."""
    monkeypatch.setattr(classes, "WINDOW_TAIL", 0.02)
    monkeypatch.setattr(exact, "_CACHE", exact._CACHE.fresh())


CASES = [pytest.param(H.point_zero(k=5), H.uniform_nonzero(k=5), brute.zero(5), brute.nonzero(5),
                      id="zero-nonzero"),
         pytest.param(H.point_zero(k=5), H.at_least(k=5, k2=2), brute.zero(5), brute.at_least(5, 2),
                      id="zero-atleast2"),
         pytest.param(H.below(k=5, k2=3), H.at_least(k=5, k2=3), brute.below(5, 3), brute.at_least(5, 3),
                      id="below-atleast3")]


@pytest.mark.parametrize(("p0", "p1", "b0", "b1"), CASES)
def test_a_cut_window_brackets_the_brute_force_curve(wide_tail, p0, p1, b0, b1) -> None:
    eps0, delta0 = 0.6, 0.08
    lo, hi, dropped = classes.delta_window(5, delta0, classes.WINDOW_TAIL)
    assert (lo, hi) != (0, 5) and 0 < dropped <= 0.02 * (1 + 1e-12)
    pt, qt = brute.canonical(eps0, delta0)
    m0, m1 = brute.mixture(b0, pt, qt), brute.mixture(b1, pt, qt)
    pair = exact_pair(p0, p1, eps0=eps0, delta0=delta0)
    assert pair.dropped == dropped
    for eps in (0.0, 0.3, 0.6, 1.5, 3.0, 8.0):
        for got_hi, got_lo, want in ((pair.forward.delta(eps), pair.forward_lower.delta(eps),
                                      brute.hockey(m1, m0, eps)),
                                     (pair.reverse.delta(eps), pair.reverse_lower.delta(eps),
                                      brute.hockey(m0, m1, eps))):
            assert got_lo <= want * (1 + 1e-10) + 1e-15  # the listed classes only
            assert want <= got_hi * (1 + 1e-10) + 1e-15  # the rest at infinite loss
            assert got_hi - got_lo <= dropped * (1 + 1e-10)
    for delta in (0.6, 0.45):
        e_hi, e_lo = pair.epsilon(delta), pair.epsilon_lower(delta)
        true = brute.smallest_epsilon(lambda e: max(brute.hockey(m1, m0, e), brute.hockey(m0, m1, e)),
                                      delta, hi=50.0)
        assert e_hi is not None and e_lo is not None and true is not None
        assert e_lo - 1e-9 <= true <= e_hi + 1e-9


@pytest.mark.parametrize(("k", "delta0", "tail"), [(5, 0.08, 0.02), (1000, 0.01, 1e-6), (10_000, 1e-6, 1e-30),
                                                   (10_000, 0.2, 1e-12), (300, 1e-3, classes.WINDOW_TAIL)])
def test_dropped_bounds_the_binomial_mass_outside_the_window(k, delta0, tail) -> None:
    """Against the binomial tails summed at 60 digits."""
    lo, hi, dropped = classes.delta_window(k, delta0, tail)
    assert 0 <= lo <= hi <= k and dropped <= tail * (1 + 1e-12)
    mpmath.mp.dps = 60
    p = mpmath.mpf(delta0)

    def pmf(r: int) -> mpmath.mpf:
        return mpmath.binomial(k, r) * p**r * (1 - p) ** (k - r)

    outside = mpmath.fsum(pmf(r) for r in range(lo)) + \
        mpmath.fsum(pmf(r) for r in range(hi + 1, min(k, hi + 400) + 1))
    if hi + 400 < k:  # the terms beyond decrease geometrically by at least the ratio at hi + 400
        outside *= 1 + mpmath.mpf(10) ** -30
    assert float(outside) <= dropped
    assert hi < k or lo > 0 or dropped == 0.0


UNIFORM_LEVELS = H.exchangeable(k=250, level_weights=np.full(251, 1 / 251))


@pytest.mark.parametrize(("p1", "delta0"), [(H.uniform_nonzero(k=900), 1e-6),
                                            (H.uniform_nonzero(k=900), 2e-3), (UNIFORM_LEVELS, 1e-4)])
def test_the_window_changes_nothing_a_double_can_show(monkeypatch, p1, delta0) -> None:
    """The full (n_B, n_C) table (the code before the window) against the windowed one."""
    p0 = H.point_zero(k=p1.k)
    windowed = exact_pair(p0, p1, eps0=0.1, delta0=delta0)
    assert windowed.dropped > 0
    monkeypatch.setattr(exact, "_CACHE", exact._CACHE.fresh())
    monkeypatch.setattr(classes, "delta_window", lambda k, d, tail=0.0: (0, k, 0.0))
    full = exact_pair(p0, p1, eps0=0.1, delta0=delta0)
    assert full.dropped == 0.0 and full.table.log_m0.size > windowed.table.log_m0.size
    for delta in (0.3, 1e-1, 3e-2):
        want = full.epsilon(delta)
        got, low = windowed.epsilon(delta), windowed.epsilon_lower(delta)
        assert (want is None) == (got is None)
        if want is not None:
            # the same curve to the atoms' own δ error (~1e-12 relative), seen through ε near 0
            assert low == got == pytest.approx(want, rel=1e-12, abs=1e-12)


def test_ten_thousand_databases_within_the_page_budget() -> None:
    """issue 12 item 6: 0⃗ against U(B∖{0⃗}) with δ0 > 0 at k = 10^4 (it stopped near 2,800)."""
    k, eps0, delta0, delta = 10_000, 0.1, 1e-6, 1e-2
    assert budgets.PAGE.admits(exact.family_cost(k, ("zero", "uniform-nonzero"), delta0=delta0))
    res = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budgets.PAGE)
    ex = res["exact"]
    assert ex.kind is Kind.EXACT and ex.source == exact.SOURCE and "left out" in ex.detail
    assert ex.delta <= delta and math.isfinite(ex.epsilon)
    assert ex.epsilon < res["theorem3_optimal"].epsilon and ex.epsilon < res["classic"].epsilon
