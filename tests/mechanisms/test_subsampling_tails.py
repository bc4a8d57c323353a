"""The subsampled law's tails keep the inverse of the last array they were asked at
(``subsampling.subsample_remove``): the same floats as a fresh law's, whichever arrays come between."""

from __future__ import annotations

import numpy as np

from dpviz.mechanisms import gaussian, laplace
from dpviz.mechanisms.subsampling import subsample_remove


def _tails(law):
    c = law.continuous
    return (c.sf_p, c.cdf_p, c.sf_q, c.cdf_q)


def test_kept_inverse_gives_a_fresh_laws_floats() -> None:
    rng = np.random.default_rng(3)
    for base, q in ((gaussian.loss_law(sigma=1.3), 0.003), (laplace.loss_law(scale=2.0), 0.1)):
        law = subsample_remove(base, rate=q)
        arrays = [np.sort(rng.uniform(-0.05, 3.0, 400)) for _ in range(4)]
        order = [0, 0, 1, 0, 2, 2, 3, 1, 1, 0]  # repeats and returns, as cell edges and probes ask
        for i in order:
            for f, g in zip(_tails(law), _tails(subsample_remove(base, rate=q)), strict=True):
                assert np.array_equal(f(arrays[i]), g(arrays[i].copy()))
