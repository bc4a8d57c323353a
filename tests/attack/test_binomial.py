"""``dpviz.attack.binomial`` draws numpy's own binomial numbers (issue 20): the independent route is
numpy's ``Generator.binomial`` itself, called from a generator in the same state. The draws must be
equal bit for bit and the generator must end in numpy's state (the next draw is the same), over the
inversion branch it replaces, both sides of p = ½, the edge of the branch (n·p = 30) and the cases
left to numpy (BTPE, p = 0, n = 0)."""

from __future__ import annotations

import numpy as np
import pytest

from dpviz.attack import binomial as B
from dpviz.attack.sampling import multinomial_counts

PS = [1e-12, 1e-4, 0.01, 0.1, 0.3, 0.37754067, 0.5, 0.5000000000000001, 0.62245933, 0.9, 0.999, 1.0, 0.0]


def same_as_numpy(n: int, p: float, size: int, seed: int) -> None:
    ours, numpys = np.random.default_rng(seed), np.random.default_rng(seed)
    got = B.binomial(ours, n, p, size)
    want = numpys.binomial(n, p, size=size)
    assert np.array_equal(got, want), (n, p, seed, np.flatnonzero(got != want)[:5])
    assert got.dtype == want.dtype
    assert ours.bit_generator.state == numpys.bit_generator.state  # the stream goes on the same


@pytest.mark.parametrize("n", [1, 2, 5, 10, 31, 60, 100, 300, 3000])
@pytest.mark.parametrize("p", PS)
def test_the_draws_are_numpys(n, p):
    for seed in range(3):
        same_as_numpy(n, p, 20_000, seed)


@pytest.mark.parametrize("n,p", [(60, 0.5), (300, 0.1), (3000, 0.01), (30, 1.0 - 1e-16), (61, 0.5),
                                 (301, 0.1)])
def test_the_edge_of_numpys_inversion_branch(n, p):
    # n·p = 30 is still inversion in numpy, just above it is BTPE (left to numpy)
    for seed in range(3):
        same_as_numpy(n, p, 50_000, seed)


def test_sizes_and_an_empty_draw():
    for size in (0, 1, 2, 4095, 4097):
        same_as_numpy(10, 0.3, size, 5)


def test_thresholds_are_where_numpys_walk_stops():
    # brute force: numpy's walk from every uniform of a fine grid and near each threshold
    for n, p in [(10, 0.37754067), (50, 0.2), (7, 0.5)]:
        px, bound = B.inversion_steps(n, p)
        t, _ = B._thresholds(n, p)
        grid = np.floor(np.linspace(0, 1, 2001) * 2 ** 53).clip(0, 2 ** 53 - 1) * B.GRID
        for u in [*grid, *t, *(t + B.GRID)]:  # uniforms are whole multiples of 2^-53
            if u < 0 or u > B.TOP:
                continue
            x, w = 0, float(u)
            while x <= bound and w > px[x]:  # numpy's loop
                w -= px[x]
                x += 1
            if x > bound:  # past the bound: numpy would draw again, and so does the table say
                assert u > t[-1]
            else:
                assert int(np.sum(u > t)) == x


def test_a_walk_past_its_bound_is_left_to_numpy(monkeypatch):
    # thresholds cut short: some uniforms fall past the last, as if numpy's walk restarted; the
    # draw is then numpy's own from the same state (the check that sends it there can fail)
    real = B._thresholds.__wrapped__

    def short(n: int, p: float) -> tuple[np.ndarray, B.Lookup]:
        t = real(n, p)[0][:3]
        return t, B.Lookup(t, 1.0, "left")

    monkeypatch.setattr(B, "_thresholds", short)
    same_as_numpy(10, 0.3, 10_000, 1)


def test_a_wrong_threshold_is_caught():
    # the comparison above can fail: one threshold moved by one grid point changes some draws
    t, count_below = B._thresholds(10, 0.3)
    u = np.random.default_rng(2).random(200_000)
    moved = t.copy()
    u[0] = moved[2]  # a uniform exactly on a threshold
    moved[2] -= B.GRID
    assert not np.array_equal(B.Lookup(moved, 1.0, "left")(u), count_below(u))


@pytest.mark.parametrize("p", [np.array([0.62, 0.38]), np.array([0.6, 0.3, 0.1]),
                               np.array([0.0, 0.999, 0.001])])
def test_multinomial_counts_are_numpys_chain_of_binomials(p):
    # the counts as the plain chain rule with numpy's binomial gave them before (same seed)
    k, n = 10, 30_000
    got = multinomial_counts(np.random.default_rng(9), k, p, n)
    rng = np.random.default_rng(9)
    want = np.zeros((n, p.size), dtype=np.int64)
    drawn = np.flatnonzero(p > 0)
    tail = np.cumsum(p[::-1])[::-1]
    left = np.full(n, k, dtype=np.int64)
    for j in drawn[:-1]:
        c = rng.binomial(left, min(1.0, p[j] / tail[j]))
        want[:, j] = c
        left -= c
    want[:, drawn[-1]] = left
    assert np.array_equal(got, want)
