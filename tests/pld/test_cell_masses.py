"""``ContinuousPart.cell_masses`` (each tail once per grid edge) gives exactly the masses and tails of
``mass_and_tail`` on the cells between consecutive edges, which evaluated every shared edge twice."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms.subsampling import subsample_remove

LAWS = [gaussian.loss_law(sigma=0.8), subsample_remove(gaussian.loss_law(sigma=2.683), rate=0.00087),
        subsample_remove(laplace.loss_law(scale=2.0), rate=0.1)]


@pytest.mark.parametrize("law", LAWS + [law.reversed() for law in LAWS])
@pytest.mark.parametrize("side", ["p", "q"])
def test_cell_masses_equal_mass_and_tail(law, side):
    c = law.continuous
    assert c is not None
    lo, hi = law.support(1e-18)
    edges = np.linspace(lo - 0.1, hi + 0.1, 3001)
    mass, tail = c.cell_masses(edges, side=side)
    ref_mass, ref_tail = c.mass_and_tail(edges[:-1], edges[1:], side=side)
    assert np.array_equal(mass, ref_mass) and np.array_equal(tail, ref_tail)


@pytest.mark.parametrize("law", LAWS)
def test_reversed_tails_invert_once_and_give_the_same_values(law, monkeypatch):
    """A reversed law's four tails at one array negate it once (``law._Negated``), so a subsampled
    law inverts its loss once per array, not once per tail; the values are those of the base tails at
    −x, also after the array is changed in place (then negated again)."""
    from dpviz.mechanisms import subsampling

    calls = []
    inverse = subsampling._g_inv
    monkeypatch.setattr(subsampling, "_g_inv", lambda y, q: calls.append(y) or inverse(y, q))
    fresh = law.reversed()  # built after the patch: its tails use the counting inverse
    r, c = fresh.continuous, law.continuous
    assert r is not None and c is not None
    x = np.linspace(-0.3, 0.3, 101)
    for _ in range(2):
        got = [r.sf_p(x), r.cdf_p(x), r.sf_q(x), r.cdf_q(x)]
        ref = [c.cdf_q(-x), c.sf_q(-x), c.cdf_p(-x), c.sf_p(-x)]
        assert all(np.array_equal(a, b) for a, b in zip(got, ref, strict=True))
        x *= 0.5  # in place: the next pass must not reuse the old negation
    if "Poisson" in law.name:
        # 2 passes: one inversion each for the reversed tails, four (fresh −x each) for the references
        assert len(calls) == 2 * (1 + 4)


@pytest.mark.parametrize("law", LAWS + [law.reversed() for law in LAWS])
@pytest.mark.parametrize("side", ["p", "q"])
def test_cell_masses_ends_are_the_tails_at_the_ends(law, side):
    """The mass below and above a grid (``discretize``, ``postprocess``) is read off the tails already
    evaluated for its cells: the same floats as asking each tail at the one point."""
    c = law.continuous
    lo, hi = law.support(1e-18)
    edges = np.linspace(lo - 0.01, hi + 0.01, 2001)
    mass, tail, cdf_first, sf_last = c.cell_masses_ends(edges, side=side)
    ref_mass, ref_tail = c.cell_masses(edges, side=side)
    sf, cdf = (c.sf_p, c.cdf_p) if side == "p" else (c.sf_q, c.cdf_q)
    assert np.array_equal(mass, ref_mass) and np.array_equal(tail, ref_tail)
    assert cdf_first == float(cdf(np.array([edges[0]]))[0])
    assert sf_last == float(sf(np.array([edges[-1]]))[0])
