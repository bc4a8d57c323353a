"""The region walks (dpviz.regions.walks): compiled and interpreted, the same vertices bit for bit."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import METHODS
from dpviz.composition.levels import Level, as_levels, homogeneous
from dpviz.regions import walks
from dpviz.regions.boundary import intersection_boundary
from dpviz.regions.methods import method_slack_region, slack_module

SLACK_METHODS = [m for m in METHODS if slack_module(m) is not None]


def _walks(compiled: bool):
    """Every walk in the block runs compiled (``compiled``) or in the interpreter."""
    return walks.LOOPS.forced(compiled)


def _both(fn):
    with _walks(True):
        compiled = fn()
    with _walks(False):
        interpreted = fn()
    return compiled, interpreted


def _same_boundary(a, b) -> bool:
    return np.array_equal(a.p_fa, b.p_fa) and np.array_equal(a.p_md, b.p_md)


def test_the_walks_are_compiled():
    functions = walks.LOOPS.compiled()
    assert functions["thin_walk"] is not walks.thin_walk and functions["hull_walk"] is not walks.hull_walk


@pytest.mark.parametrize("method", SLACK_METHODS)
@pytest.mark.parametrize(("eps0", "delta0", "k"), [(0.1, 1e-3, 30), (0.2, 0.0016, 10), (0.05, 1e-4, 100),
                                                   (1.0, 1e-6, 5), (0.01, 1e-9, 1000), (3.0, 0.0, 2)])
def test_slack_regions_are_the_same_compiled_and_interpreted(method, eps0, delta0, k):
    """Both walks at once: every refinement round's envelope and the thinning of the last one."""
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    compiled, interpreted = _both(lambda: method_slack_region(method, levels))
    assert _same_boundary(compiled.boundary, interpreted.boundary)
    assert _same_boundary(compiled.refined, interpreted.refined)
    assert compiled.thin_error == interpreted.thin_error and compiled.refine_bound == interpreted.refine_bound
    assert compiled.boundary.p_fa.size > 2


def test_a_thinning_that_drops_lines_is_tested():
    """The slack cases above do thin (the walk's galloping and bisection run), and keep some vertices
    of the original (the ``lo == i + 1`` branch)."""
    region = method_slack_region("zcdp", homogeneous(k=10, eps0=0.2, delta0=0.0016))
    assert region.boundary.p_fa.size < region.refined.p_fa.size / 5
    assert np.isin(region.boundary.p_fa[1:-1], region.refined.p_fa).any()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.floats(0.0, 30.0), st.floats(0.0, 0.999) | st.sampled_from([0.0, 1e-300])),
                min_size=1, max_size=300))
def test_intersections_are_the_same_compiled_and_interpreted(pairs):
    """Random (ε, δ) sets, duplicates, zero δ and tiny differences included."""
    eps, dlt = (np.array(v) for v in zip(*pairs, strict=True))
    compiled, interpreted = _both(lambda: intersection_boundary(eps, dlt))
    assert _same_boundary(compiled, interpreted)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1e6, 0.0), min_size=4, max_size=400, unique=True),
       st.floats(1e-9, 1e-2))
def test_thinning_random_convex_polylines_is_the_same_compiled_and_interpreted(slopes, tolerance):
    """A convex decreasing polyline from random slopes (sorted: convex), thinned at random tolerances."""
    s = np.sort(np.array(slopes))
    widths = np.full(s.size, 1.0 / s.size)
    x = np.concatenate([[0.0], np.cumsum(widths)])
    y = np.concatenate([[0.0], np.cumsum(s * widths)])
    y -= y[-1]
    compiled, interpreted = _both(lambda: walks.thinned(x, y, tolerance))
    assert np.array_equal(compiled[0], interpreted[0]) and np.array_equal(compiled[1], interpreted[1])
    assert compiled[2] == interpreted[2] and compiled[2] <= tolerance


@pytest.mark.parametrize("method", SLACK_METHODS)
def test_heterogeneous_slack_regions_are_the_same_compiled_and_interpreted(method):
    levels = as_levels([Level(epsilon=0.1, delta=1e-5, count=20), Level(epsilon=0.5, delta=1e-4, count=7),
                        Level(epsilon=0.02, delta=0.0, count=300)])
    compiled, interpreted = _both(lambda: method_slack_region(method, levels))
    assert _same_boundary(compiled.boundary, interpreted.boundary)
    assert compiled.thin_error == interpreted.thin_error
