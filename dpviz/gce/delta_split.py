"""The best split of δ over HBW Thm 3's terms (docs/MATH.md §12): each term's curve of δ̂ against
t = e^{ε̂}, and the allocation minimising Σ w_i t_i subject to Σ w_i δ̂_i ≤ δ.

Every term's curve is built, and the allocation prepared, in one pass over all the terms (rows of
one array, each padded after its end): the steps are elementwise or run along each row in order,
so each term's numbers are the floats of its own pass (tests/gce/test_fast_paths.py compares them
with the one-term-at-a-time code this replaced).
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Sequence

import numpy as np

from dpviz.composition import advanced
from dpviz.composition.atoms import LossAtoms
from dpviz.composition.levels import Levels, sum_delta, sum_epsilon_sq

SPLIT_MARGIN = 1e-9
"""The split is planned for a total of δ(1 − SPLIT_MARGIN), so that the terms' δ̂_i, rounded,
still sum to at most δ (checked with ``math.fsum`` before anything is stated)."""

SPLIT_SAMPLES = 600
"""Advanced composition: slack values sampled per term (log-spaced over 30 decades, ≈ 0.12 in ln δ')."""

EPS_CAP = 600.0
"""Largest per-term ε̂ a split considers (e^ε̂ stays finite)."""

Curve = tuple[np.ndarray, np.ndarray]
"""Vertices (t = e^{ε̂}, δ̂) of one term's curve, t increasing, δ̂ decreasing and convex in t."""


_CURVES: weakref.WeakKeyDictionary[LossAtoms, Curve] = weakref.WeakKeyDictionary()
"""``optimal_curve`` of the atom sets still alive: a term's curve does not depend on δ, and a change of
δ asks for the same 40 terms' (their atom sets are remembered, ``paper_bounds._term_atoms``)."""


def optimal_curve(atoms: LossAtoms) -> Curve:
    """δ̂(ε) = p_∞ + Σ_{L>ε} p (1 − e^{ε−L}) at ε = 0 and at every positive atom: linear in
    t = e^ε between atoms, so these vertices are the whole curve (docs/MATH.md §12). Remembered per
    atom set (``_CURVES``; the arrays are read, never written)."""
    curve = _CURVES.get(atoms)
    if curve is None:
        curve = _CURVES[atoms] = _optimal_curve(atoms)
    return curve


def _optimal_curve(atoms: LossAtoms) -> Curve:
    """``optimal_curve``, computed."""
    loss = atoms.loss  # decreasing
    eps = np.unique(np.concatenate([[0.0], loss[loss > 0]]))
    eps = eps[eps <= EPS_CAP]
    above = np.searchsorted(-loss, -eps, side="left")  # atoms with L > ε
    p = np.exp(atoms.log_p)
    q = np.exp(atoms.log_p - loss)
    a = np.concatenate([[0.0], np.cumsum(p)])
    b = np.concatenate([[0.0], np.cumsum(q)])
    t = np.exp(eps)
    return t, np.maximum(atoms.p_inf + a[above] - t * b[above], atoms.p_inf)


def advanced_curves(levels: Sequence[Levels], tops: Sequence[float],
                    arounds: Sequence[float] | None = None) -> list[Curve | None]:
    """Each term's samples of advanced composition's (e^{ε̂}, Σδ + δ') for δ' up to its ``top`` − Σδ
    (30 decades below it), or within a factor e^{±0.3} of its entry of ``arounds``; ``None`` for a
    term with no slack to offer. With u = ε̂ − drift = √(2V ln(1/δ')), d²δ'/dt² ∝ u² + Vu − V, so the
    curve is convex in t exactly where u ≥ u* = (√(V² + 4V) − V)/2: slacks above
    δ'* = e^{−u*²/(2V)} (≈ 0.6: never a useful split) are not offered. The terms' samples are one
    array (``np.geomspace`` of every term's ends at once: the floats of one call per term)."""
    out: list[Curve | None] = [None] * len(levels)
    rows, starts, stops, var_s, shift_s, floor_s = [], [], [], [], [], []
    for i, lv in enumerate(levels):
        var, shift, floor = sum_epsilon_sq(lv), advanced.drift(lv), sum_delta(lv)
        convex = math.exp(-(math.sqrt(var * var + 4.0 * var) - var) ** 2 / (8.0 * var)) if var > 0 else 1.0
        smax = min(1.0, tops[i] - floor, convex)
        if not smax > 0:
            continue
        # the sampled range is clamped to positive floats (smax * 1e-30 underflows to 0 for δ ≲ 1e-278):
        # any slack > 0 gives a valid point, so a shorter range only offers fewer splits
        tiny = min(smax, float(np.finfo(float).tiny))
        if arounds is None:
            start, stop = smax, max(smax * 1e-30, tiny)
        else:
            mid = max(arounds[i] - floor, smax * 1e-300, tiny)
            start, stop = min(smax, mid * math.exp(0.3)), max(mid * math.exp(-0.3), tiny)
        rows.append(i)
        starts.append(start)
        stops.append(stop)
        var_s.append(var)
        shift_s.append(shift)
        floor_s.append(floor)
    if not rows:
        return out
    num = SPLIT_SAMPLES if arounds is None else SPLIT_SAMPLES // 2
    slack = np.geomspace(np.array(starts), np.array(stops), num, axis=1)
    eps = np.sqrt((2.0 * np.array(var_s))[:, np.newaxis] * -np.log(slack)) + np.array(shift_s)[:, np.newaxis]
    with np.errstate(over="ignore"):  # ε̂ above EPS_CAP (e^ε̂ may overflow) is not kept
        t_all = np.exp(eps)
    d_all = np.array(floor_s)[:, np.newaxis] + slack
    keep = eps <= EPS_CAP
    for r, i in enumerate(rows):
        t = t_all[r][keep[r]]
        if t.size == 0:
            continue
        t, first = np.unique(t, return_index=True)  # increasing t, i.e. decreasing slack
        out[i] = t, d_all[r][keep[r]][first]
    return out


def allocate(curves: Sequence[Curve], w: np.ndarray, total: float
             ) -> tuple[np.ndarray, np.ndarray, int] | None:
    """δ̂_i minimising Σ w_i t_i subject to Σ w_i δ̂_i(t_i) ≤ ``total``, each δ̂_i convex and piecewise
    linear in t_i (``Curve``): a fractional knapsack. Starting from every term's smallest t, the
    segments are taken in order of decreasing −dδ̂/dt (the KKT condition: at the optimum every
    term sits where −dδ̂_i/dt_i is the same), the last one in part. ``None``: even the largest t
    of every term leaves the total above ``total``. Otherwise (δ̂_i, the vertex each term reached,
    the one term inside a segment or −1).

    The curves are the columns of one array, each padded with its last vertex (segments of length 0,
    slope 0, after the curve's own: they change none of its running minima or sums), so that the
    running minima and sums go down the rows, every curve at once."""
    n = len(curves)
    sizes = np.array([t.size for t, _ in curves])
    t2 = np.empty((int(sizes.max()), n))
    d2 = np.empty_like(t2)
    for i, (t, d) in enumerate(curves):
        t2[:t.size, i], t2[t.size:, i] = t, t[-1]
        d2[:d.size, i], d2[d.size:, i] = d, d[-1]
    dt = np.diff(t2, axis=0)
    slope = np.minimum.accumulate(np.maximum(-np.diff(d2, axis=0), 0.0) / np.where(dt > 0, dt, 1.0), axis=0)
    red = slope * dt  # convex by construction: rounding cannot reorder a term's segments
    verts = d2[:1] - np.concatenate([np.zeros((1, n)), np.cumsum(red, axis=0)], axis=0)
    start = verts[0].copy()
    need = math.fsum(w * start) - total
    if need <= 0:
        return start, np.zeros(n, dtype=int), -1
    own = np.arange(red.shape[0]) < (sizes - 1)[:, np.newaxis]  # each curve's own segments, in order
    slope_all, red_all = slope.T[own], (w * red).T[own]
    owner_all = np.repeat(np.arange(n), sizes - 1)
    order = np.argsort(-slope_all, kind="stable")
    cum = np.cumsum(red_all[order])
    p = int(np.searchsorted(cum, need, side="left"))
    if p >= cum.size:
        return None
    taken = np.bincount(owner_all[order[:p]], minlength=n)
    out = verts[taken, np.arange(n)]
    i = int(owner_all[order[p]])
    before = float(cum[p - 1]) if p > 0 else 0.0
    frac = min(max((need - before) / float(red_all[order[p]]), 0.0), 1.0)
    out[i] = verts[taken[i], i] - frac * float(red_all[order[p]]) / w[i]
    return out, taken, i
