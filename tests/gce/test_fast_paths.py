"""The priors page's fast paths (issue 20) against the routes they replaced, bit for bit.

- the class recursion computed on its band of possibly positive columns (``class_loops.layer_walk``)
  against the full recursion over every column (the code it replaced, kept here as the oracle);
- the multinomials' ln n! looked up in one table against ``gammaln`` per class;
- the exact region's points deduplicated with numpy (``exact._distinct``) against
  ``sorted(set(zip(…)))``, and the region's hull against the walk over those points and against
  scipy's convex hull (an independent route);
- the exact-pair cache keyed by the priors' weights (two typed priors are never confused) and
  bounded by the bytes it holds;
- HBW Thm 3 and Cor. 6 with their optimal terms searched side by side against one term at a time.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.spatial import ConvexHull
from scipy.special import gammaln

from dpviz.bounded_cache import BoundedStore
from dpviz.composition import optimal
from dpviz.composition.atoms import LossAtoms
from dpviz.gce import class_loops, classes, exact, paper_bounds
from dpviz.gce import hypotheses as H
from dpviz.numerics import lower_hull


def _full_recursion(p: H.Exchangeable, eps0: float) -> Iterator[NDArray[np.float64]]:
    """The recursion over every column r (dpviz before issue 20's band)."""
    g = p.log_v[np.newaxis, :]
    yield g
    for _ in range(p.k):
        new = np.empty((g.shape[0] + 1, g.shape[1] - 1))
        new[1:] = np.logaddexp(g[:, :-1], eps0 + g[:, 1:])
        new[0] = np.logaddexp(g[0, :-1], -eps0 + g[0, 1:])
        g = new
        yield g


def _same(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


@st.composite
def priors(draw: st.DrawFn) -> H.Exchangeable:
    """A distribution over |b| with some sizes left out (holes, a narrow band, or all sizes)."""
    k = draw(st.integers(1, 24))
    kind = draw(st.sampled_from(["band", "holes", "full", "threshold"]))
    if kind == "threshold":
        k2 = draw(st.integers(1, k))
        return draw(st.sampled_from([H.at_least(k=k, k2=k2), H.below(k=k, k2=k2) if k2 > 0 else
                                     H.at_least(k=k, k2=k2)]))
    w = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=k + 1, max_size=k + 1)))
    if kind == "band":
        lo = draw(st.integers(0, k))
        hi = draw(st.integers(lo, k))
        w[:lo], w[hi + 1:] = 0.0, 0.0
    elif kind == "holes":
        w[np.array(draw(st.lists(st.booleans(), min_size=k + 1, max_size=k + 1)))] = 0.0
        if not w.any():
            w[draw(st.integers(0, k))] = 1.0
    return H.exchangeable(k=k, level_weights=w / w.sum())


@given(priors(), st.sampled_from([0.0, 1e-3, 0.1, 0.7, 3.0, 40.0]))
def test_band_recursion_gives_every_layer_of_the_full_recursion(p: H.Exchangeable, eps0: float) -> None:
    """The layer walk on its band (and one column for U{|b| ≥ k'}'s r ≥ k') against every column."""
    got = class_loops.log_g_layers(p.log_v, p.k, eps0, (0, p.k), all_r=True)
    assert _same(got, np.concatenate([g.ravel() for g in _full_recursion(p, eps0)]))


@given(priors(), st.sampled_from([0.05, 0.5, 2.0]), st.sampled_from([1e-9, 1e-3, 0.05]))
def test_table_classes_match_the_full_recursion_and_gammaln(p: H.Exchangeable, eps0: float,
                                                            delta0: float) -> None:
    """Every class mass of a pair (the full (n_A, n_B, n_C) table) as the full recursion and
    gammaln per class give it."""
    k = p.k
    p0 = H.below(k=k, k2=min(k, max(2, k // 2)))
    assume(not p.is_zero and not p0.is_zero)  # 0⃗ on one side: the n_A = 0 classes only (below)
    table = classes.exchangeable_table(p0, p, eps0, delta0)
    lo, hi, _ = classes.delta_window(k, delta0)
    m_lo, m_hi = k - hi, k - lo
    n_a, n_b, n_c = classes._triples(k, (m_lo, m_hi))
    logs = [np.concatenate([g.ravel() for m, g in enumerate(_full_recursion(q, eps0)) if m_lo <= m <= m_hi])
            for q in (p0, p)]
    n_d = k - n_a - n_b - n_c
    log_mult = gammaln(k + 1.0) - gammaln(n_a + 1) - gammaln(n_b + 1) - gammaln(n_c + 1) - gammaln(n_d + 1)
    base = log_mult + (n_b + n_c) * (math.log1p(-delta0) - float(np.logaddexp(0.0, eps0))) + n_c * eps0
    base = base + (n_a + n_d) * math.log(delta0)
    assert _same(table.log_m0, base + logs[0]) and _same(table.log_m1, base + logs[1])


@given(priors(), st.sampled_from([0.05, 0.5, 2.0]))
def test_anchored_and_top_modes_match_the_full_recursion(p: H.Exchangeable, eps0: float) -> None:
    """p0 = 0⃗: the n_A = 0 column of each layer (δ0 > 0) and the top layer (δ0 = 0)."""
    k = p.k
    got = classes._log_g_levels(p, eps0, (0, k), all_r=False)
    want = np.concatenate([g[:, 0] for g in _full_recursion(p, eps0)])
    if p.family not in ("custom",):
        return  # the named families have closed forms of their own (tests/gce/test_exact_precision.py)
    assert _same(got, want)
    top = classes._log_g_top(p, eps0)
    *_, last = _full_recursion(p, eps0)
    assert _same(top, last[:, 0])


@given(st.lists(st.sampled_from([-np.inf, np.inf, 0.0, -0.0, 1.5, -2.0, 1e-300, 7.25]), max_size=60))
def test_stable_order_is_the_stable_argsort(values: list[float]) -> None:
    """The region's order of classes by loss: ±∞ set apart, the finite ones sorted, as one stable sort."""
    loss = np.array(values, dtype=float)
    assert np.array_equal(exact._stable_order(loss), np.argsort(loss, kind="stable"))


def _old_hull(x: NDArray[np.float64], y: NDArray[np.float64]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The region's hull as dpviz computed it before issue 20: a Python set of rounded points."""
    pts = sorted(set(zip(np.round(x, 15).tolist(), np.round(y, 15).tolist(), strict=True)) | {(1.0, 0.0)})
    px, py = np.array([q[0] for q in pts]), np.array([q[1] for q in pts])
    keep = lower_hull(px, py)
    return px[keep], np.minimum.accumulate(py[keep])


@given(st.lists(st.tuples(st.sampled_from([0.0, 0.25, 0.5, 1.0, 1 / 3, 0.1 + 0.2]), st.floats(0, 1)),
                min_size=1, max_size=60))
def test_distinct_points_are_the_sorted_set(points: list[tuple[float, float]]) -> None:
    x = np.array([p[0] for p in points])
    y = np.array([p[1] for p in points])
    px, py = exact._distinct(x, y)
    want = sorted(set(points))
    assert px.tolist() == [p[0] for p in want] and py.tolist() == [p[1] for p in want]


def _pairs() -> list[tuple[str, exact.ExactPair]]:
    out = []
    for k, d0 in ((6, 0.0), (12, 1e-3), (30, 1e-6), (60, 0.01)):
        for name, p0, p1 in (("threshold", H.below(k=k, k2=2), H.at_least(k=k, k2=2)),
                             ("nonzero", H.point_zero(k=k), H.uniform_nonzero(k=k)),
                             ("typed", H.point_zero(k=k),
                              H.exchangeable(k=k, level_weights=[0, 0.5, 0.3, 0.2] + [0] * (k - 3)))):
            out.append((f"{name}-k{k}-d{d0}", exact.exact_pair(p0, p1, eps0=0.3, delta0=d0, budget=None)))
    return out


@pytest.mark.parametrize(("name", "pair"), _pairs())
def test_region_is_the_old_hull_and_scipys(name: str, pair: exact.ExactPair) -> None:
    x, y = exact._tradeoff(pair.table.log_m1, pair.table.log_m0, only_q=pair.table.only0)
    region = pair.region()
    want_x, want_y = _old_hull(np.concatenate([x, y]), np.concatenate([y, x]))
    assert _same(region.p_fa, want_x) and _same(region.p_md, want_y), name
    # scipy (Qhull): every point on or above the boundary drawn, and every vertex of the boundary a
    # point of the lower hull Qhull finds (up to its rounding). The points are those the hull is
    # taken of: rounded to 15 decimals (a P_FA moved by ≤ 5e-16 can move P_MD by much more where the
    # boundary is nearly vertical, at P_FA ≈ 1e-14)
    x, y = np.round(x, 15), np.round(y, 15)
    pts = np.unique(np.column_stack([np.concatenate([x, y, [1.0]]), np.concatenate([y, x, [0.0]])]), axis=0)
    assert np.all(pts[:, 1] >= region(pts[:, 0]) - 1e-12)
    if len(pts) >= 3 and np.ptp(pts[:, 0]) > 0 and np.ptp(pts[:, 1]) > 0:
        hull = ConvexHull(pts)
        for vx, vy in zip(region.p_fa, region.p_md, strict=True):
            facets_ok = hull.equations[:, :2] @ [vx, vy] + hull.equations[:, 2] <= 1e-9
            assert facets_ok.all(), (name, vx, vy)


def test_typed_priors_with_other_weights_are_other_pairs(monkeypatch) -> None:
    monkeypatch.setattr(exact, "_CACHE", exact._CACHE.fresh())
    k = 20
    a = H.exchangeable(k=k, level_weights=[0, 0.5, 0.5] + [0] * (k - 2))
    b = H.exchangeable(k=k, level_weights=[0, 0.4, 0.6] + [0] * (k - 2))
    a2 = H.exchangeable(k=k, level_weights=[0, 0.5, 0.5] + [0] * (k - 2))
    zero = H.point_zero(k=k)
    pa = exact.exact_pair(zero, a, eps0=0.5, delta0=1e-4)
    pb = exact.exact_pair(zero, b, eps0=0.5, delta0=1e-4)
    assert pb is not pa and not np.array_equal(pb.table.log_m1, pa.table.log_m1)
    assert exact.exact_pair(zero, a2, eps0=0.5, delta0=1e-4) is pa  # the same weights: the same pair
    assert exact.exact_pair(zero, a, eps0=0.5, delta0=2e-4) is not pa


def test_the_cache_holds_at_most_its_bytes(monkeypatch) -> None:
    monkeypatch.setattr(exact, "CACHE_BYTES", 400_000.0)
    small = BoundedStore(entries=exact.CACHE_ENTRIES, max_bytes=exact.CACHE_BYTES, held=exact._held)
    monkeypatch.setattr(exact, "_CACHE", small)
    for k in range(40, 70, 3):
        exact.exact_pair(H.below(k=k, k2=2), H.at_least(k=k, k2=2), eps0=0.2, delta0=1e-6, budget=None)
        assert sum(exact._held(p) for p in exact._CACHE.values()) <= exact.CACHE_BYTES
    assert 0 < len(exact._CACHE) < 10


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"),
                         [(1, 0.3, 0.0, 1e-5), (7, 0.5, 1e-6, 1e-3), (45, 0.1, 0.0, 1e-6),
                          (300, 0.05, 1e-7, 1e-5), (1000, 0.1, 0.0, 1e-5), (60, 2.0, 1e-3, 1e-3)])
def test_theorem3_and_cor6_side_by_side_are_one_term_at_a_time(k: int, eps0: float, delta0: float,
                                                               delta: float) -> None:
    """Thm 3 with one common δ̂ (``theorem3``, each term's atoms built and searched alone) and Cor. 6
    summed from ``_term`` one at a time: the same floats as the batched searches."""
    paper_bounds._term_atoms.cache_clear()
    _, common = paper_bounds.theorem3_pair(k=k, eps0=eps0, delta0=delta0, method="optimal", delta=delta)
    assert repr(common) == repr(paper_bounds.theorem3(k=k, eps0=eps0, delta0=delta0, method="optimal",
                                                      delta=delta))
    n = min(k, paper_bounds.TERMS)
    eps = []
    for i in range(1, n + 1):
        lv = paper_bounds._term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=False)
        if not lv or delta == delta0:
            t = paper_bounds._term(lv, "optimal", delta - delta0)
            eps.append(eps0 + t.epsilon if t.feasible and t.epsilon is not None else float("nan"))
            continue
        shared = optimal.loss_atoms.__wrapped__(lv)
        fresh = LossAtoms(loss=shared.loss, log_p=shared.log_p, p_inf=shared.p_inf, terms=shared.terms)
        e = fresh.epsilon(delta - delta0)  # searched alone, nothing remembered
        eps.append(float("nan") if e is None else eps0 + e)
    got = paper_bounds.corollary6(k=k, eps0=eps0, delta0=delta0, method="optimal", delta=delta)
    if np.isnan(eps).any():  # a term has no value at δ̂: neither has the bound
        assert not got.feasible
        return
    want = paper_bounds._directed(*paper_bounds.combine(paper_bounds._weights(k, n), np.array(eps),
                                                        np.full(n, delta)),
                                  source=f"{paper_bounds.SOURCE_COR6} with optimal composition (KOV Thm 3.3)",
                                  note="common δ̂ for every term")
    assert (got.epsilon, got.delta, got.directions) == (want.epsilon, want.delta, want.directions)



@given(k=st.integers(0, 400), lo=st.floats(0.0, 1.0), width=st.floats(0.0, 1.0))
def test_pairs_are_every_split_of_each_level_in_order(k: int, lo: float, width: float) -> None:
    """``classes._pairs`` (by index arithmetic, issue 20) lists the pairs a loop over the levels lists."""
    from dpviz.gce.classes import _pairs

    m_lo = int(lo * k)
    m_hi = min(k, m_lo + int(width * (k - m_lo)))
    want = [(b, m - b) for m in range(m_lo, m_hi + 1) for b in range(m + 1)]
    n_b, n_c = _pairs(k, (m_lo, m_hi))
    assert list(zip(n_b.tolist(), n_c.tolist(), strict=True)) == want
