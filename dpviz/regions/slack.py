"""Regions proved as an intersection over a slack (advanced composition, KOV Thm 3.4-3.5, zCDP).

A theorem that gives an (ε(s), δ(s)) guarantee for every slack s ∈ [0, 1] proves the region
∩_s R(ε(s), δ(s)) (docs/MATH.md §13). Drawn from finitely many slacks the region is a superset
of that intersection: the safe side, it never claims more privacy than proved. How much larger
is bounded here, rigorously, when ε is non-increasing and δ non-decreasing in s:

1. Refinement. For s between two drawn slacks s_i < s_{i+1}, each line of R(ε(s), δ(s)),
   P_MD = 1 − δ − e^ε P_FA and P_MD = e^{−ε}(1 − δ − P_FA), lies below the "corner" line built
   from ε(s_{i+1}) and δ(s_i). So the largest rise of any corner line above the drawn lower
   boundary bounds the error in P_MD at every P_FA. The theorem's region and the drawn one are
   both symmetric about P_FA = P_MD (each R is), so the same number bounds the error in P_FA at
   every P_MD. Intervals whose corner rises more than ``REFINE_SHARE`` of the tolerance are split
   (geometrically) until none does.
2. Thinning. Most drawn lines are needed only for that proof: the boundary is a smooth convex
   curve. Lines are dropped (a lower envelope: still a superset) while the polyline stays within
   the rest of the tolerance of the refined one, checked at every new vertex both in P_MD and in
   P_FA (the largest gaps between two convex polylines are at the vertices of the lower one).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpviz.regions import walks
from dpviz.regions.boundary import EPS_CAP, Boundary, intersection_boundary

TOLERANCE = 1e-4
"""Largest error, in P_FA at every P_MD (equivalently in P_MD at every P_FA), of a drawn region."""
REFINE_SHARE = 0.95
"""Share of the tolerance the refinement may use; thinning uses the rest."""
SMALLEST_SLACK = 1e-300
"""The sweep's first positive slack; the interval [0, SMALLEST_SLACK] is bounded like any other."""
START_SLACKS = 301
"""Log-spaced slacks in [SMALLEST_SLACK, 1] before refinement (one per decade)."""
MAX_SPLIT = 64
"""Most pieces one interval is split into per round (its bound shrinks about in proportion)."""
MAX_SLACKS = 200_000
"""Refinement stops here (the bound then says how far the drawing is from the theorem's region)."""
_ROUNDING = 1.0 - 1e-6
"""Each budget is used up to this fraction: room for rounding in the bounds themselves."""

Family = Callable[[NDArray[np.float64]], NDArray[np.float64]]
"""ε or δ at each slack of an array."""


@dataclass(frozen=True)
class SlackRegion:
    """A drawn intersection-over-slack region and what it is made of."""

    boundary: Boundary
    """The drawn (thinned) lower boundary."""
    slacks: NDArray[np.float64]
    epsilons: NDArray[np.float64]
    deltas: NDArray[np.float64]
    refined: Boundary
    """The envelope of every sampled slack (what the refinement bound is about)."""
    refine_bound: float
    """Proved: the theorem's boundary is at most this above ``refined`` (in P_MD at any P_FA and in
    P_FA at any P_MD)."""
    thin_error: float
    """Largest gap between ``refined`` and ``boundary`` (at any P_FA in P_MD, at any P_MD in P_FA)."""

    @property
    def error_bound(self) -> float:
        """How far the drawn region can be larger than the theorem's, in P_FA at every P_MD."""
        return self.refine_bound + self.thin_error


def _lines(eps: NDArray[np.float64], dlt: NDArray[np.float64]) -> tuple[tuple[NDArray[np.float64],
                                                                              NDArray[np.float64]], ...]:
    """(slope magnitude a, intercept b) of both lines b − a·P_FA of each R(ε, δ)."""
    e = np.minimum(eps, EPS_CAP)
    up, down = np.exp(e), np.exp(-e)
    return (up, 1.0 - dlt), (down, down * (1.0 - dlt))


def interval_bounds(eps: NDArray[np.float64], dlt: NDArray[np.float64],
                    drawn: Boundary) -> NDArray[np.float64]:
    """For consecutive slacks, the largest rise on [0, 1] of their corner lines (ε of the larger
    slack, δ of the smaller; the min of both, should a module not be monotone) above the drawn
    lower boundary (a convex, decreasing polyline, 0 once it reaches P_MD = 0).

    A line minus a convex polyline is concave, so the rise is largest at the polyline's vertex
    where its slope passes the line's: that vertex and its neighbours are evaluated.
    """
    x, y = drawn.p_fa, drawn.p_md
    out = np.zeros(eps.size - 1)
    lines = _lines(np.minimum(eps[:-1], eps[1:]), np.minimum(dlt[:-1], dlt[1:]))
    functions, compiled = walks.LOOPS.pick(out.size)
    if compiled:  # the steps below, element by element: the same floats (tests/regions/test_corner_rises.py)
        (a_up, b_up), (a_down, b_down) = lines
        functions["corner_rises"](x, y, a_up, b_up, a_down, b_down, np.empty(max(x.size - 1, 0)), out)
        return out
    with np.errstate(divide="ignore", invalid="ignore"):
        slopes = np.diff(y) / np.diff(x)
    slopes = np.maximum.accumulate(np.nan_to_num(slopes, nan=-np.inf))  # convex: non-decreasing
    for a, b in lines:
        at = np.searchsorted(slopes, -a)  # vertex where the boundary's slope passes −a
        for shift in (-1, 0, 1):
            v = np.clip(at + shift, 0, x.size - 1)
            out = np.maximum(out, b - a * x[v] - y[v])
    return out


def _split(lo: NDArray[np.float64], hi: NDArray[np.float64],
           pieces: NDArray[np.int64]) -> NDArray[np.float64]:
    """Interior points cutting each [lo, hi] into ``pieces`` geometrically equal parts; below the
    first positive slack (lo = 0), one point at 1e-10 of it."""
    zero = lo <= 0.0
    n = np.where(zero, 2, pieces)
    inner = n - 1  # points per interval
    owner = np.repeat(np.arange(lo.size), inner)
    j = np.arange(owner.size) - np.repeat(np.cumsum(inner) - inner, inner) + 1  # 1 … n − 1
    la = np.log(np.where(zero, 1.0, lo))[owner]
    lb = np.log(hi)[owner]
    points = np.exp(la + (lb - la) * j / n[owner])
    return np.where(zero[owner], hi[owner] * 1e-10, points)


def _new(points: NDArray[np.float64], s: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.setdiff1d(points, s)`` (the sorted distinct points not in s) for s sorted, without NaN:
    searched in s rather than both sorted together."""
    u = np.unique(points)
    at = np.minimum(np.searchsorted(s, u), s.size - 1)
    return u[s[at] != u]


def _drawn(s: NDArray[np.float64], eps: NDArray[np.float64], dlt: NDArray[np.float64]) -> Boundary:
    """The region of the sampled slacks (vacuous ones, δ ≥ 1, left out; the square if none is left)."""
    keep = (dlt < 1.0) & (s > 0.0)
    return intersection_boundary(eps[keep], dlt[keep]) if keep.any() else intersection_boundary([0.0], [1.0])


def pointwise(f: Callable[[float], float]) -> Family:
    """A scalar function of the slack applied to each slack of an array."""
    def apply(s: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.array([f(x) for x in s.tolist()], dtype=float)
    return apply


def slack_region(epsilons: Family, deltas: Family, *, tolerance: float = TOLERANCE) -> SlackRegion:
    """∩_{s ∈ [0, 1]} R(ε(s), δ(s)) drawn within ``tolerance`` (module docstring).

    ``epsilons`` and ``deltas`` map an array of slacks to ε and δ at each: ``epsilons`` is called
    with s ∈ (0, 1], ``deltas`` with s ∈ [0, 1]; ε must be non-increasing in s and δ
    non-decreasing.
    """
    budget = REFINE_SHARE * tolerance * _ROUNDING
    s = np.concatenate([[0.0], np.logspace(math.log10(SMALLEST_SLACK), 0.0, START_SLACKS)])
    eps = np.concatenate([[math.inf], epsilons(s[1:])])
    dlt = deltas(s)
    refined = _drawn(s, eps, dlt)
    while True:
        bounds = interval_bounds(eps, dlt, refined)
        bad = np.flatnonzero(bounds > budget)
        if bad.size == 0 or s.size >= MAX_SLACKS:
            break
        pieces = np.minimum(np.ceil(1.02 * bounds[bad] / budget), MAX_SPLIT).astype(np.int64)
        mid = _split(s[bad], s[bad + 1], np.maximum(pieces, 2))
        mid = _new(mid, s)[: MAX_SLACKS - s.size]  # float resolution reached: nothing new
        if mid.size == 0:
            break
        s = np.concatenate([s, mid])
        eps = np.concatenate([eps, epsilons(mid)])
        dlt = np.concatenate([dlt, deltas(mid)])
        order = np.argsort(s, kind="stable")
        s, eps, dlt = s[order], eps[order], dlt[order]
        refined = _drawn(s, eps, dlt)
    boundary, thin_error = thin(refined, (1.0 - REFINE_SHARE) * tolerance * _ROUNDING)
    return SlackRegion(boundary=boundary, slacks=s, epsilons=eps, deltas=dlt, refined=refined,
                       refine_bound=float(bounds.max(initial=0.0)), thin_error=thin_error)


def thin(boundary: Boundary, tolerance: float) -> tuple[Boundary, float]:
    """Drop lines of a convex lower boundary while it stays within ``tolerance`` of the original
    both in P_MD at every P_FA and in P_FA at every P_MD; returns the thinned boundary and its
    largest gap. Greedy from P_FA = 0: from each kept segment's line, the farthest later one whose
    crossing with it is within the tolerance (galloping, then bisection: ``walks.thin_walk``)."""
    # strictly increasing P_FA: a vertex at or right of a later one (rounding) is dropped, which
    # only lowers the polyline
    later_min = np.minimum.accumulate(boundary.p_fa[::-1])[::-1]
    last = np.append(boundary.p_fa[:-1] < later_min[1:], True)
    px, py = boundary.p_fa[last], boundary.p_md[last]
    if px.size <= 3:
        return Boundary(p_fa=px, p_md=py), 0.0
    xs, ys, worst = walks.thinned(px, py, tolerance)
    return Boundary(p_fa=xs, p_md=ys), worst
