"""The refinement's bound on each slack interval (``slack.interval_bounds``, docs/MATH.md §13): the
compiled loop (``walks.corner_rises``) gives the numpy steps' floats bit for bit, on the regions'
own boundaries and on degenerate ones (repeated and vertical vertices, flat and infinite slopes)."""

from __future__ import annotations

import bisect
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition.levels import homogeneous
from dpviz.regions import slack, walks
from dpviz.regions.boundary import Boundary, intersection_boundary
from dpviz.regions.methods import method_slack_region
from tests.regions.test_walks import SLACK_METHODS


def _both(eps: np.ndarray, dlt: np.ndarray, drawn: Boundary) -> tuple[np.ndarray, np.ndarray]:
    with walks.LOOPS.forced(True):
        compiled = slack.interval_bounds(eps, dlt, drawn)
    with walks.LOOPS.forced(False), np.errstate(over="ignore"):  # a quotient of subnormal differences
        numpy = slack.interval_bounds(eps, dlt, drawn)
    return compiled, numpy


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("method", SLACK_METHODS)
@pytest.mark.parametrize(("eps0", "delta0", "k"), [(0.2, 1e-5, 20), (1.0, 1e-3, 3), (0.01, 1e-9, 1000),
                                                   (3.0, 0.0, 2), (0.5, 0.3, 50)])
def test_the_bounds_of_a_region_sweep_are_the_numpy_ones(method: str, eps0: float, delta0: float,
                                                         k: int) -> None:
    """At the sweep's end and against a coarser boundary (most intervals far above the budget)."""
    r = method_slack_region(method, homogeneous(k=k, eps0=eps0, delta0=delta0))
    for drawn in (r.refined, r.boundary, intersection_boundary(r.epsilons[1::50], r.deltas[1::50])):
        compiled, numpy = _both(r.epsilons, r.deltas, drawn)
        assert _same(compiled, numpy)
    if (method, k) == ("zcdp", 20):
        assert compiled.max() > 0.0  # the coarse boundary leaves rises to find


finite = st.floats(-1e3, 1e3, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(xs=st.lists(st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0, 0.5]), min_size=1, max_size=40),
       ys=st.lists(st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0, 0.5, math.nan]), min_size=40,
                   max_size=40),
       eps=st.lists(st.floats(0.0, 800.0) | st.sampled_from([math.inf, 0.0, 1e-300]), min_size=2,
                    max_size=60),
       dlt=st.lists(st.floats(0.0, 1.0) | st.sampled_from([0.0, 1.0]), min_size=60, max_size=60))
def test_any_polyline_and_any_lines_give_the_numpy_floats(xs: list[float], ys: list[float], eps: list[float],
                                                          dlt: list[float]) -> None:
    """Vertices sorted by P_FA, repeated ones (vertical or 0/0 slopes), P_MD in any order (slopes of
    both signs, made non-decreasing), NaN heights; ε up to ∞ (capped) and in any order (the searches
    start from the previous interval's answer in either direction)."""
    x = np.sort(np.array(xs))
    y = np.array(ys[: x.size])
    e, d = np.array(eps), np.array(dlt[: len(eps)])
    compiled, numpy = _both(e, d, Boundary(p_fa=x, p_md=y))
    assert _same(compiled, numpy)


@settings(max_examples=300, deadline=None)
@given(values=st.lists(st.floats(-5.0, 5.0) | st.sampled_from([-math.inf, math.inf, 0.0, -0.0, 1.0]),
                       max_size=50),
       v=st.floats(-6.0, 6.0) | st.sampled_from([-math.inf, math.inf, 0.0, 1.0]), hint=st.integers(0, 60))
def test_the_galloping_search_is_bisect_left(values: list[float], v: float, hint: int) -> None:
    a = np.sort(np.array(values, dtype=float))
    gallop = walks.LOOPS.compiled()["_gallop_left"]
    want = bisect.bisect_left(a.tolist(), v)
    assert gallop(a, v, min(hint, a.size)) == want == int(np.searchsorted(a, v))
    assert walks._gallop_left(a.tolist(), v, min(hint, a.size)) == want
