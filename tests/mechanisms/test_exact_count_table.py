"""The exact route's count table (issue 20: randomized response on 3 categories at q = 0.0125,
2,000 steps, 2 million count vectors, cost the Mechanisms page a second per change): made once per
call for both directions, in the same order and with the same coefficients as written out."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.special import gammaln

from dpviz.mechanisms import exact_route
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.registry import make


def _written_out(n: int, k: int) -> np.ndarray:
    """Every count vector of n outcomes summing to k, in lexicographic order, by itertools."""
    rows = [(*c, k - sum(c)) for c in itertools.product(range(k + 1), repeat=n - 1) if sum(c) <= k]
    return np.array(rows, dtype=np.int64).reshape(-1, n)


@pytest.mark.parametrize(("n", "k"), [(1, 0), (1, 7), (2, 0), (2, 9), (3, 0), (3, 1), (3, 12), (4, 6),
                                      (6, 3)])
def test_count_vectors_and_coefficients_are_as_written_out(n: int, k: int) -> None:
    counts, coef = exact_route._count_table(n, k)
    expected = _written_out(n, k)
    assert counts.dtype == np.int64 and np.array_equal(counts, expected)
    assert counts.shape[0] == math.comb(k + n - 1, n - 1)
    # ln k!/Π c_i!, the same floats as gammaln of each entry (the table only looks them up)
    assert np.array_equal(coef, gammaln(k + 1.0) - gammaln(expected + 1.0).sum(axis=1))


def test_both_directions_share_one_large_count_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """An asymmetric law (two directions) with more count vectors than are remembered between calls:
    the table is made once, and the answer is the one each direction's own table gives."""
    mech = make("randomized-response", categories=3, eps0=0.1, sampling_rate=0.0125,
                neighbouring="add-remove")
    k = 730
    outcomes = int(np.count_nonzero(mech.law.p > 0))
    assert not mech.law.symmetric and outcomes == 3
    assert math.comb(k + outcomes - 1, outcomes - 1) > exact_route.REMEMBERED_ROWS
    made: list[tuple[int, int]] = []
    plain = exact_route._count_table

    def counted(n: int, kk: int) -> tuple[np.ndarray, np.ndarray]:
        made.append((n, kk))
        return plain(n, kk)

    monkeypatch.setattr(exact_route, "_count_table", counted)
    shared = R.exact([(mech, k)], delta=1e-6)
    assert made == [(3, k)]
    each = max(R.exact_atoms([(mech, k)], reverse=r).epsilon(1e-6) for r in (False, True))  # type: ignore[union-attr]
    assert shared.epsilon == each
