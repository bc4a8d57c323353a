"""The class tables' loops (``dpviz.gce.class_loops``, issue 20): interpreted and compiled, the floats
of the numpy steps they replaced (kept here as oracles), bit for bit."""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.special import gammaln

from dpviz.gce import class_loops, classes
from dpviz.gce import hypotheses as H
from dpviz.numerics import softplus


def _same(a: NDArray[np.float64], b: NDArray[np.float64]) -> bool:
    return a.shape == b.shape and a.tobytes() == b.tobytes()


def _full_recursion(log_v: NDArray[np.float64], eps0: float) -> Iterator[NDArray[np.float64]]:
    """The recursion over every column r, as numpy arrays (dpviz before issue 20)."""
    g = log_v[np.newaxis, :]
    yield g
    for _ in range(log_v.size - 1):
        new = np.empty((g.shape[0] + 1, g.shape[1] - 1))
        new[1:] = np.logaddexp(g[:, :-1], eps0 + g[:, 1:])
        new[0] = np.logaddexp(g[0, :-1], -eps0 + g[0, 1:])
        g = new
        yield g


@st.composite
def level_logs(draw: st.DrawFn) -> NDArray[np.float64]:
    """ln v_j, j = 0 … k: random with holes (−∞), a run of one float up to k (U{|b| ≥ k'}'s shape,
    from any j, 0 included), a band, or no positive weight at all."""
    k = draw(st.integers(1, 30))
    v = np.array(draw(st.lists(st.floats(-60.0, 0.0), min_size=k + 1, max_size=k + 1)))
    kind = draw(st.sampled_from(["holes", "tail", "tail", "band", "none"]))
    if kind == "holes":
        v[np.array(draw(st.lists(st.booleans(), min_size=k + 1, max_size=k + 1)))] = -np.inf
    elif kind == "tail":
        start = draw(st.integers(0, k))
        v[start:] = v[k]
        holes = draw(st.lists(st.booleans(), min_size=start, max_size=start))
        v[:start][np.array(holes, dtype=bool)] = -np.inf
    elif kind == "band":
        lo = draw(st.integers(0, k))
        hi = draw(st.integers(lo, k))
        v[:lo], v[hi + 1:] = -np.inf, -np.inf
    else:
        v[:] = -np.inf
    return v


@st.composite
def levels(draw: st.DrawFn, k: int) -> tuple[int, int]:
    m_lo = draw(st.integers(0, k))
    return m_lo, draw(st.integers(m_lo, k))


@settings(max_examples=150)
@given(data=st.data(), log_v=level_logs(), eps0=st.sampled_from([0.0, 1e-3, 0.1, 0.7, 3.0, 40.0]),
       all_r=st.booleans())
def test_walk_interpreted_and_compiled_give_the_full_recursion(data: st.DataObject,
                                                               log_v: NDArray[np.float64], eps0: float,
                                                               all_r: bool) -> None:
    k = log_v.size - 1
    m_lo, m_hi = data.draw(levels(k))
    layers = list(_full_recursion(log_v, eps0))[m_lo:m_hi + 1]
    want = np.concatenate([g.ravel() if all_r else g[:, 0] for g in layers])
    for compiled in (False, True):
        with class_loops.LOOPS.forced(compiled):
            got = class_loops.log_g_layers(log_v, k, eps0, (m_lo, m_hi), all_r=all_r)
        assert _same(got, want), compiled


def test_the_tail_of_at_least_is_one_column() -> None:
    """U{|b| ≥ k'}: the run starts at k', the walk computes ~(k' + 1)k²/2 cells, and the walk
    over every column (no run) gives the same floats."""
    k, k2, eps0 = 60, 3, 0.3
    log_v = H.at_least(k=k, k2=k2).log_v
    assert class_loops.constant_tail(log_v, k) == k2
    assert class_loops.constant_tail(H.below(k=k, k2=k2).log_v, k2 - 1) == k + 1
    assert class_loops.band_cells(k, k2, k, k2, k)[0] < (k2 + 1) * (k + 1) * (k + 2) // 2
    size = class_loops.level_classes(k, 0, k, True)
    outs = []
    for tail in (k2, k + 1):
        prev, cur, out = np.empty((k + 2) ** 2), np.empty((k + 2) ** 2), np.empty(size)
        with class_loops.LOOPS.forced(True):
            fns, _ = class_loops.LOOPS.pick(0)
            fns["layer_walk"](log_v, k2, k, tail, k, eps0, 0, k, True, prev, cur, out)
        outs.append(out)
    assert _same(outs[0], outs[1])


@settings(max_examples=60)
@given(k=st.integers(1, 40), data=st.data(), eps0=st.sampled_from([0.0, 0.05, 0.5, 2.0]),
       delta0=st.sampled_from([0.0, 1e-9, 1e-3, 0.05]), all_r=st.booleans())
def test_assemble_matches_the_arrays(k: int, data: st.DataObject, eps0: float, delta0: float,
                                     all_r: bool) -> None:
    """Each class's ln multinomial × prefactor as the (n_A, n_B, n_C) arrays gave it."""
    m_lo, m_hi = data.draw(levels(k))
    if all_r:
        n_a, n_b, n_c = classes._triples(k, (m_lo, m_hi))
    else:
        n_b, n_c = classes._pairs(k, (m_lo, m_hi))
        n_a = np.zeros_like(n_b)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    logs = [rng.normal(size=n_b.size) * 50.0 for _ in range(2)]
    logs[1][rng.random(n_b.size) < 0.3] = -np.inf
    n_d = k - n_a - n_b - n_c
    log_fact = gammaln(np.arange(k + 1) + 1.0)
    log_mult = (gammaln(k + 1.0) - log_fact[n_a.astype(np.intp)] - log_fact[n_b.astype(np.intp)]
                - log_fact[n_c.astype(np.intp)] - log_fact[n_d.astype(np.intp)])
    base = log_mult + (n_b + n_c) * (math.log1p(-delta0) - float(softplus(eps0))) + n_c * eps0
    if delta0 > 0:
        base = base + (n_a + n_d) * math.log(delta0)
    for compiled in (False, True):
        with class_loops.LOOPS.forced(compiled):
            got = classes._assembled(k, eps0, delta0, (m_lo, m_hi), all_r, [g.copy() for g in logs])
        assert _same(got.log_m0, base + logs[0]) and _same(got.log_m1, base + logs[1]), compiled


@given(st.lists(st.tuples(*[st.sampled_from([-np.inf, np.inf, np.nan, 0.0, -0.0, -3.5, 1e-300, -700.0])] * 2),
                max_size=40))
def test_split_matches_the_masks(pairs: list[tuple[float, float]]) -> None:
    log_p = np.array([p for p, _ in pairs], dtype=float)
    log_q = np.array([q for _, q in pairs], dtype=float)
    has_p = np.isfinite(log_p)
    finite = has_p & np.isfinite(log_q)
    want = (log_p[finite] - log_q[finite], log_p[finite], log_p[has_p & ~finite])
    for compiled in (False, True):
        with class_loops.LOOPS.forced(compiled):
            got = class_loops.split_finite(log_p, log_q)
        assert all(_same(a, b) for a, b in zip(got, want, strict=True)), compiled


def test_logaddexp_is_numpys() -> None:
    values = [-np.inf, np.inf, np.nan, 0.0, -0.0, 1.0, 1.0 + 2**-52, -745.0, 37.0, 40.0, -1e300, 1e300,
              5e-324, -0.5, 0.7, -36.7]
    x, y = (np.array(v) for v in zip(*[(a, b) for a in values for b in values], strict=True))
    with np.errstate(invalid="ignore"):  # NaN in, NaN out
        want = np.logaddexp(x, y)
    from dpviz.composition import atom_kernel
    from dpviz.numerics import logaddexp_float

    # the one function, and its compiled copies in both groups of loops that call it
    for fn in (logaddexp_float, class_loops.LOOPS.compiled()["logaddexp_float"],
               atom_kernel.LOOPS.compiled()["logaddexp_float"]):
        got = np.array([fn(a, b) for a, b in zip(x.tolist(), y.tolist(), strict=True)])
        nan = np.isnan(want)
        assert np.array_equal(np.isnan(got), nan) and _same(got[~nan], want[~nan])


def test_the_loops_are_compiled() -> None:
    assert class_loops.LOOPS.compiled()["layer_walk"] is not class_loops.layer_walk


def test_tables_interpreted_and_compiled_are_the_same() -> None:
    """Whole tables of the page's pairs (the threshold pair, a typed prior against 0⃗ and against
    U{|b| < k'}), both routes."""
    typed = H.exchangeable(k=80, level_weights=np.r_[0.0, 0.5, 0.3, 0.2, np.zeros(77)])
    pairs = [(H.below(k=80, k2=3), H.at_least(k=80, k2=3)), (H.point_zero(k=80), typed),
             (H.below(k=80, k2=5), typed), (H.at_least(k=80, k2=7), H.below(k=80, k2=7))]
    for p0, p1 in pairs:
        for eps0, delta0 in ((0.1, 1e-3), (1.3, 0.0), (0.02, 1e-6)):
            tables = []
            for compiled in (False, True):
                with class_loops.LOOPS.forced(compiled):
                    tables.append(classes.exchangeable_table(p0, p1, eps0, delta0))
            a, b = tables
            assert _same(a.log_m0, b.log_m0) and _same(a.log_m1, b.log_m1)
