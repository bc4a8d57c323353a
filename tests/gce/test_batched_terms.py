"""The priors page's batched routes (issue 20) against one at a time, bit for bit.

- ``optimal.loss_atoms_many`` (every binomial of many compositions in one pass per ε) against
  ``optimal.loss_atoms`` of each composition alone;
- HBW Thm 3's and Cor. 6's term atom sets built together (``paper_bounds._term_atoms``) against
  each term's own;
- the best split's curves (``delta_split.advanced_curves``, every term in one array) and its
  allocation (``delta_split.allocate``, the curves as columns of one array) against the
  one-term-at-a-time code they replaced, kept here as the oracle;
- the ε-against-k series with its exact pairs searched side by side (``questions._search_pairs``)
  against the series without that step.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import advanced, optimal
from dpviz.composition.atoms import LossAtoms
from dpviz.composition.levels import Level, Levels, sum_delta, sum_epsilon_sq
from dpviz.gce import delta_split, paper_bounds, questions, summary
from dpviz.gce.delta_split import EPS_CAP, SPLIT_SAMPLES, Curve


def _same_atoms(a: LossAtoms, b: LossAtoms) -> bool:
    return (a.loss.tobytes() == b.loss.tobytes() and a.log_p.tobytes() == b.log_p.tobytes()
            and repr(a.p_inf) == repr(b.p_inf) and a.terms == b.terms)


def _alone(levels: Levels) -> LossAtoms:
    """``loss_atoms`` of one composition, built now (a small homogeneous set through its own cache
    is the same numbers: ``LossAtoms.binomials``)."""
    if len(levels) == 1:
        lv = levels[0]
        return LossAtoms.binomial(k=lv.count, eps0=lv.epsilon, delta0=lv.delta)
    return optimal.loss_atoms.__wrapped__(levels)


EPS = st.sampled_from([0.0, 1e-3, 0.05, 0.1, 0.3, 1.0, 2.5])
DELTA = st.sampled_from([0.0, 1e-9, 1e-6, 1e-3])
COMPOSITION = st.one_of(st.builds(lambda e, d, n: (Level(epsilon=e, delta=d, count=n),), EPS, DELTA,
                                  st.integers(1, 3000)),
                        st.lists(st.builds(Level, epsilon=EPS, delta=DELTA, count=st.integers(1, 60)),
                                 min_size=2, max_size=3).map(tuple))


@settings(max_examples=60, deadline=None)
@given(st.lists(COMPOSITION, min_size=1, max_size=8))
def test_loss_atoms_many_is_each_composition_alone(many: list[Levels]) -> None:
    got = optimal.loss_atoms_many(many)
    assert len(got) == len(many)
    for levels, atoms in zip(many, got, strict=True):
        assert _same_atoms(atoms, _alone(levels)), levels


def test_loss_atoms_many_refuses_what_loss_atoms_refuses() -> None:
    big = tuple(Level(epsilon=0.1 * (j + 1), delta=0.0, count=2000) for j in range(3))
    with pytest.raises(Exception) as alone:
        optimal.loss_atoms.__wrapped__(big)
    with pytest.raises(type(alone.value)):
        optimal.loss_atoms_many([(Level(epsilon=0.1, delta=0.0, count=3),), big])


@pytest.mark.parametrize(("k", "eps0", "delta0"), [(1, 0.3, 0.0), (2, 0.5, 1e-6), (39, 0.1, 0.0),
                                                   (41, 0.0, 1e-4), (300, 0.05, 1e-7), (1000, 0.1, 0.0),
                                                   (5000, 2.0, 1e-3)])
def test_theorem3_and_cor6_term_atoms_are_each_terms_own(k: int, eps0: float, delta0: float) -> None:
    paper_bounds._term_atoms.cache_clear()
    n = min(k, paper_bounds.TERMS)
    thm3, cor6 = paper_bounds._term_atoms(k, n, eps0, delta0)
    own3 = [_alone(paper_bounds._term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=True))
            for i in range(1, n + 1)]
    own6 = [_alone(lv) for i in range(1, n + 1)
            if (lv := paper_bounds._term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=False))]
    assert len(thm3) == len(own3) and len(cor6) == len(own6)
    assert all(_same_atoms(a, b) for a, b in zip(thm3 + cor6, own3 + own6, strict=True))


# ---------------------------------------------------------------- the split, against the code it replaced

def _advanced_curve(levels: Levels, top: float, around: float | None = None) -> Curve | None:
    """One term's advanced samples (dpviz before the terms were batched)."""
    var, shift, floor = sum_epsilon_sq(levels), advanced.drift(levels), sum_delta(levels)
    convex = math.exp(-(math.sqrt(var * var + 4.0 * var) - var) ** 2 / (8.0 * var)) if var > 0 else 1.0
    smax = min(1.0, top - floor, convex)
    if not smax > 0:
        return None
    tiny = min(smax, float(np.finfo(float).tiny))
    if around is None:
        slack = np.geomspace(smax, max(smax * 1e-30, tiny), SPLIT_SAMPLES)
    else:
        mid = max(around - floor, smax * 1e-300, tiny)
        slack = np.geomspace(min(smax, mid * math.exp(0.3)), max(mid * math.exp(-0.3), tiny),
                             SPLIT_SAMPLES // 2)
    eps = np.sqrt(2.0 * var * -np.log(slack)) + shift
    keep = eps <= EPS_CAP
    t, d = np.exp(eps[keep]), floor + slack[keep]
    if t.size == 0:
        return None
    t, first = np.unique(t, return_index=True)
    return t, d[first]


def _allocate(curves: Sequence[Curve], w: np.ndarray, total: float
              ) -> tuple[np.ndarray, np.ndarray, int] | None:
    """The allocation one curve at a time (dpviz before the curves were columns of one array)."""
    verts, slopes, reds, owner = [], [], [], []
    for i, (t, d) in enumerate(curves):
        dt = np.diff(t)
        slope = np.minimum.accumulate(np.maximum(-np.diff(d), 0.0) / np.where(dt > 0, dt, 1.0))
        red = slope * dt
        verts.append(d[0] - np.concatenate([[0.0], np.cumsum(red)]))
        slopes.append(slope)
        reds.append(w[i] * red)
        owner.append(np.full(red.size, i))
    start = np.array([v[0] for v in verts])
    need = math.fsum(w * start) - total
    if need <= 0:
        return start, np.zeros(len(curves), dtype=int), -1
    slope_all, red_all, owner_all = (np.concatenate(x) for x in (slopes, reds, owner))
    order = np.argsort(-slope_all, kind="stable")
    cum = np.cumsum(red_all[order])
    p = int(np.searchsorted(cum, need, side="left"))
    if p >= cum.size:
        return None
    taken = np.bincount(owner_all[order[:p]], minlength=len(curves))
    out = np.array([v[c] for v, c in zip(verts, taken, strict=True)])
    i = int(owner_all[order[p]])
    before = float(cum[p - 1]) if p > 0 else 0.0
    frac = min(max((need - before) / float(red_all[order[p]]), 0.0), 1.0)
    out[i] = verts[i][taken[i]] - frac * float(red_all[order[p]]) / w[i]
    return out, taken, i


def _same_curve(a: Curve | None, b: Curve | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes()


def _same_allocation(a: tuple | None, b: tuple | None) -> bool:
    if a is None or b is None:
        return a is None and b is None
    return a[0].tobytes() == b[0].tobytes() and a[1].tobytes() == b[1].tobytes() and a[2] == b[2]


QUESTIONS = st.tuples(st.integers(1, 3000), st.sampled_from([1e-4, 0.01, 0.1, 0.5, 2.0, 8.0]),
                      st.sampled_from([0.0, 1e-12, 1e-7, 1e-4]),
                      st.sampled_from([1e-300, 1e-12, 1e-6, 1e-3, 0.3]))


@settings(max_examples=60, deadline=None)
@given(QUESTIONS, st.floats(1e-6, 1.0))
def test_advanced_curves_and_allocation_are_one_term_at_a_time(question: tuple, shift: float) -> None:
    """Thm 3's terms' advanced curves, coarse and around a split (the one found, scaled down by
    ``shift``: as the split found, at most the curve's largest δ̂), and the allocations over them."""
    k, eps0, delta0, delta = question
    n = min(k, paper_bounds.TERMS)
    levels = list(paper_bounds._terms_levels(k, n, eps0, delta0, True))
    w = np.exp(paper_bounds._weights(k, n))
    tops = [delta / float(x) for x in w]
    coarse = delta_split.advanced_curves(levels, tops)
    assert all(_same_curve(c, _advanced_curve(lv, top))
               for c, lv, top in zip(coarse, levels, tops, strict=True))
    if any(c is None for c in coarse):
        return
    total = delta * (1.0 - delta_split.SPLIT_MARGIN)
    found = delta_split.allocate(coarse, w, total)  # type: ignore[arg-type]
    assert _same_allocation(found, _allocate(coarse, w, total))  # type: ignore[arg-type]
    if found is None:  # no split: nothing to resample around
        return
    around = [float(s) * shift for s in found[0]]
    fine = delta_split.advanced_curves(levels, tops, arounds=around)
    assert all(_same_curve(c, _advanced_curve(lv, top, a))
               for c, lv, top, a in zip(fine, levels, tops, around, strict=True))
    if all(c is not None for c in fine):
        again = delta_split.allocate(fine, w, total)  # type: ignore[arg-type]
        assert _same_allocation(again, _allocate(fine, w, total))  # type: ignore[arg-type]


@settings(max_examples=30, deadline=None)
@given(QUESTIONS)
def test_optimal_allocation_is_one_term_at_a_time(question: tuple) -> None:
    """Thm 3's optimal curves (each term's own vertex count: the columns are of unequal lengths)."""
    k, eps0, delta0, delta = question
    n = min(k, paper_bounds.TERMS)
    curves = [delta_split.optimal_curve(a) for a in paper_bounds._term_atoms(k, n, eps0, delta0)[0]]
    w = np.exp(paper_bounds._weights(k, n))
    for total in (delta * (1.0 - delta_split.SPLIT_MARGIN), delta * 1e-6, 0.5):
        assert _same_allocation(delta_split.allocate(curves, w, total), _allocate(curves, w, total))


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 30), st.floats(1e-3, 10.0), st.floats(0.0, 1.0)),
                min_size=1, max_size=12), st.floats(0.0, 1.0))
def test_allocation_of_convex_curves_of_any_lengths_is_one_at_a_time(shapes: list, fraction: float) -> None:
    """Convex decreasing curves of 1 to 30 vertices (one vertex: no segment at all)."""
    curves = []
    for size, scale, floor in shapes:
        t = np.cumsum(np.full(size, scale)) + 1.0
        d = floor + 1.0 / t
        curves.append((t, d))
    w = np.linspace(1.0, 0.1, len(curves))
    lo = math.fsum(w * np.array([d[-1] for _, d in curves]))
    hi = math.fsum(w * np.array([d[0] for _, d in curves]))
    total = lo + fraction * (hi - lo) * 1.01 - 1e-3
    assert _same_allocation(delta_split.allocate(curves, w, total), _allocate(curves, w, total))


# ---------------------------------------------------------------- the series' exact pairs searched together

@pytest.mark.parametrize(("kind", "k", "eps0", "delta0", "delta"),
                         [("uniform-nonzero", 500, 0.1, 0.0, 4e-6), ("uniform-nonzero", 60, 0.7, 1e-6, 1e-3),
                          ("at-least", 40, 0.3, 0.0, 1e-5), ("cap", 400, 0.1, 1e-7, 1e-5)])
def test_series_with_pairs_searched_together_is_the_series_one_at_a_time(
        monkeypatch: pytest.MonkeyPatch, kind: str, k: int, eps0: float, delta0: float, delta: float) -> None:
    q = questions.Question(kind=kind, k=k, eps0=eps0, delta0=delta0, delta=delta, cap=365, k2=3)
    xs, together = questions.epsilon_series(q)
    monkeypatch.setattr(questions, "_search_pairs", lambda *a, **kw: None)
    # fresh pairs: nothing searched before
    monkeypatch.setattr(questions.exact, "_CACHE", questions.exact._CACHE.fresh())
    xs2, alone = questions.epsilon_series(q)
    assert xs.tobytes() == xs2.tobytes()
    assert together.keys() == alone.keys()
    assert all(together[key].tobytes() == alone[key].tobytes() for key in together)


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"),
                         [(1, 0.3, 0.0, 1e-5), (45, 0.1, 0.0, 1e-6), (500, 0.1, 0.0, 4e-6),
                          (300, 0.05, 1e-7, 1e-5), (60, 2.0, 1e-3, 1e-3), (20, 0.5, 1e-4, 1e-4)])
def test_terms_searched_together_are_the_bounds_searched_one_method_at_a_time(
        monkeypatch: pytest.MonkeyPatch, k: int, eps0: float, delta0: float, delta: float) -> None:
    """``summary.uniform_nonzero`` with Thm 3's and Cor. 6's searches run together first
    (``paper_bounds.search_terms``) against each bound searching its own terms on fresh atom sets."""
    paper_bounds._term_atoms.cache_clear()
    together = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta)
    paper_bounds._term_atoms.cache_clear()
    monkeypatch.setattr(paper_bounds, "search_terms", lambda **kw: None)
    alone = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta)
    assert together.keys() == alone.keys()
    assert all(repr(together[key]) == repr(alone[key]) for key in together)
