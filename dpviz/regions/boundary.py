"""The privacy region of (ε, δ)-DP and of intersections of such regions (KOV §2).

In the (P_FA, P_MD) square, R(ε, δ) = {P_FA + e^ε P_MD ≥ 1 − δ, e^ε P_FA + P_MD ≥ 1 − δ}
together with the mirror conditions for the complementary test. An intersection of
R(ε_j, δ_j) has lower boundary P_MD = max(0, max_j max(1 − δ_j − e^{ε_j} P_FA,
e^{−ε_j}(1 − δ_j − P_FA))): the upper envelope of lines, computed exactly here
(its vertices), so the drawn region is the mathematical one.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from dpviz.regions import walks


@dataclass(frozen=True)
class Boundary:
    """Vertices (P_FA, P_MD) of a convex, decreasing lower boundary from (0, y0) to (x1, 0)."""

    p_fa: NDArray[np.float64]
    p_md: NDArray[np.float64]

    def __call__(self, p_fa: ArrayLike) -> NDArray[np.float64]:
        """Smallest achievable P_MD at the given P_FA (linear between vertices)."""
        return np.interp(np.asarray(p_fa, dtype=float), self.p_fa, self.p_md)


def intersection_boundary(epsilons: ArrayLike, deltas: ArrayLike) -> Boundary:
    """Lower boundary of ∩_j R(ε_j, δ_j) (KOV §2, eq. 4), exact vertices.

    Each (ε, δ) gives the lines P_MD = 1 − δ − e^ε P_FA and P_MD = e^{−ε}(1 − δ − P_FA), the
    second the mirror image (P_FA ↔ P_MD) of the first; with P_MD ≥ 0 the boundary is the upper
    envelope of all of them on [0, 1]. It is built from the steep lines only and completed by
    its mirror image past the diagonal, so it is symmetric exactly, at every scale: computed
    directly, a flat line of height e^{−700} is lost in the rounding of the steep ones.
    ε above ``EPS_CAP`` is drawn as ``EPS_CAP`` (a difference below P_FA, P_MD ≈ 1e-304).
    """
    eps = np.atleast_1d(np.asarray(epsilons, dtype=float))
    dlt = np.atleast_1d(np.asarray(deltas, dtype=float))
    if eps.shape != dlt.shape:
        raise ValueError("epsilons and deltas must have the same length")
    eps = np.clip(eps, 0.0, EPS_CAP)  # ε < 0 would ask more than ε = 0: drawn as 0, a superset
    steep = _upper_envelope(np.append(-np.exp(eps), 0.0), np.append(1.0 - dlt, 0.0))
    return _mirror_completed(steep)


EPS_CAP = 700.0
"""e^700 is finite; a line that steep is vertical at every P_FA above 1e-304."""


def _mirror_completed(steep: Boundary) -> Boundary:
    """max(f, f⁻¹) for the envelope f of lines with slopes ≤ −1 (and 0): f up to the diagonal,
    where f(x) = x, then the mirror image of that part (f ≥ f⁻¹ left of the diagonal, since f
    falls at least as fast as x rises and f⁻¹ at most as fast)."""
    x, y = steep.p_fa, steep.p_md
    left = np.flatnonzero(y > x)  # a prefix: y − x decreases along the boundary
    if left.size == 0:
        return Boundary(p_fa=np.array([0.0, 1.0]), p_md=np.array([0.0, 0.0]))
    i = left[-1]  # crossing on segment i → i + 1 (y − x ≥ 0 → < 0; the last vertex has y − x < 0)
    d0, d1 = y[i] - x[i], y[i + 1] - x[i + 1]
    t = d0 / (d0 - d1)
    c = x[i] + t * (x[i + 1] - x[i])
    xs = np.concatenate([x[: i + 1], [c], y[i::-1]])
    ys = np.concatenate([y[: i + 1], [c], x[i::-1]])
    if xs[-1] < 1.0:
        xs, ys = np.append(xs, 1.0), np.append(ys, 0.0)
    return Boundary(p_fa=xs, p_md=ys)


def _upper_envelope(slopes: NDArray[np.float64], intercepts: NDArray[np.float64]) -> Boundary:
    """Vertices of x ↦ max_j (a_j + s_j x) on [0, 1] (convex hull trick, O(n log n); the walk over
    the sorted lines is ``dpviz.regions.walks.hull_walk``). Each vertex's height is the smaller of
    its two lines there (rounding on the safe side: the region is never drawn smaller), each end's
    the largest of all lines.
    """
    order = np.lexsort((intercepts, slopes))  # by slope, then intercept
    s_sorted, a_sorted = slopes[order], intercepts[order]
    keep = np.append(s_sorted[1:] != s_sorted[:-1], True)  # largest intercept per slope
    s_kept, a_kept = s_sorted[keep], a_sorted[keep]
    on_hull = walks.hull(s_kept, a_kept)
    s_h, a_h = s_kept[on_hull], a_kept[on_hull]
    cross = (a_h[:-1] - a_h[1:]) / (s_h[1:] - s_h[:-1])
    inside = np.flatnonzero((cross > 0.0) & (cross < 1.0))
    xc = cross[inside]
    yc = np.minimum(a_h[inside] + s_h[inside] * xc, a_h[inside + 1] + s_h[inside + 1] * xc)  # rounding: low
    xs = np.concatenate([[0.0], xc, [1.0]])
    ys = np.concatenate([[np.max(a_h)], yc, [np.max(a_h + s_h)]])
    ys = np.clip(ys, 0.0, 1.0)
    return _trim_flat_tail(xs, ys)


def _trim_flat_tail(xs: NDArray[np.float64], ys: NDArray[np.float64]) -> Boundary:
    """Drop repeated zero vertices after the boundary first reaches P_MD = 0."""
    zero = np.flatnonzero(ys <= 0.0)
    if zero.size and zero[0] + 1 < xs.size:
        xs, ys = np.append(xs[: zero[0] + 1], 1.0), np.append(ys[: zero[0] + 1], 0.0)
    return Boundary(p_fa=xs, p_md=ys)


def region_polygon(boundary: Boundary) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Closed polygon of the full region: the lower boundary and its mirror image
    (1 − P_FA, 1 − P_MD) of the complementary tests (KOV §2)."""
    # lower boundary from (0, y0) to (1, 0), then the mirror of each vertex in the same
    # order, which runs from (1, 1 − y0) back to (0, 1): a simple (non-crossing) polygon
    x = np.concatenate([boundary.p_fa, 1.0 - boundary.p_fa, boundary.p_fa[:1]])
    y = np.concatenate([boundary.p_md, 1.0 - boundary.p_md, boundary.p_md[:1]])
    return x, y
