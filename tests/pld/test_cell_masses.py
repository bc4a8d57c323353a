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
