"""Membership constraints (HBW §V-A): number of mechanisms to compose, caps, examples,
parallel composition, and agreement with the exact method on point-mass hypotheses."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.budget import Budget
from dpviz.composition import METHODS, homogeneous
from dpviz.gce import constraints as C
from dpviz.gce import hypotheses as H
from dpviz.gce import summary
from dpviz.gce.exact import exact_pair
from dpviz.guarantee import Guarantee, Kind
from dpviz.validation import ParameterError


@pytest.mark.parametrize(("k", "cap", "nb", "d"), [
    (1000, 365, "unbounded", 365), (1000, 365, "bounded", 730), (500, 365, "bounded", 500),
    (10, 1, "unbounded", 1), (10, 1, "bounded", 2), (7, 7, "unbounded", 7)])
def test_compositions_for_cap(k: int, cap: int, nb: str, d: int) -> None:
    assert C.compositions_for_cap(k=k, cap=cap, neighbouring=nb) == d


@pytest.mark.parametrize("k", [1, 6, 9])
def test_cap_bound_equals_brute_force_over_the_allowed_set(k: int) -> None:
    """Cap c ⇔ allowed set {|b| ≤ c}: max |b| or max |b ⊕ b'| by enumeration."""
    for cap in range(1, k + 1):
        allowed = [b for b in itertools.product((0, 1), repeat=k) if sum(b) <= cap]
        for nb in C.NEIGHBOURING:
            assert C.compositions_for_allowed(allowed, neighbouring=nb) == \
                C.compositions_for_cap(k=k, cap=cap, neighbouring=nb)


@pytest.mark.parametrize(("k1", "fa", "pa"), [(3, 2, 4), (0, 5, 5), (10, 1, 0), (2, 6, 3)])
def test_free_paid_columns(k1: int, fa: int, pa: int) -> None:
    allowed = C.feature_columns(common=k1, free_only=fa, paid_only=pa)
    assert len(allowed) == 3 and allowed[2] == (0,) * (k1 + fa + pa)
    for nb in C.NEIGHBOURING:
        assert C.compositions_for_allowed(allowed, neighbouring=nb) == \
            C.feature_compositions(common=k1, free_only=fa, paid_only=pa, neighbouring=nb)
    # bounded adds the free-vs-paid pair (fa + pa columns differ)
    assert C.feature_compositions(common=k1, free_only=fa, paid_only=pa, neighbouring="bounded") == \
        max(k1 + max(fa, pa), fa + pa)


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), [(20, 0.3, 1e-6, 1e-4), (5, 1.0, 0.0, 1e-3)])
def test_cap_equal_to_k_is_classic(k: int, eps0: float, delta0: float, delta: float) -> None:
    for nb in C.NEIGHBOURING:
        res = summary.capped(k=k, cap=k, neighbouring=nb, eps0=eps0, delta0=delta0, delta=delta)
        assert res["exact"].epsilon == res["classic"].epsilon
    res = summary.capped(k=k, cap=2, neighbouring="unbounded", eps0=eps0, delta0=delta0, delta=delta)
    assert res["exact"].epsilon < res["classic"].epsilon


def test_exact_for_a_cap_is_optimal_composition_of_c() -> None:
    """Worst pair under cap c (unbounded) is 0⃗ vs a point with c ones: the exact
    mixture method on those point masses equals KOV Thm 3.3 with c mechanisms."""
    k, c, eps0, delta0, delta = 6, 3, 0.4, 1e-3, 1e-2
    b = (1,) * c + (0,) * (k - c)
    pair = exact_pair(H.point((0,) * k), H.point(b), eps0=eps0, delta0=delta0)
    res = summary.capped(k=k, cap=c, neighbouring="unbounded", eps0=eps0, delta0=delta0, delta=delta)
    assert pair.epsilon(delta) == pytest.approx(res["exact"].epsilon, rel=1e-9)
    bounded = (0,) * c + (1,) * c
    pair2 = exact_pair(H.point(b), H.point(bounded), eps0=eps0, delta0=delta0)
    res2 = summary.capped(k=k, cap=c, neighbouring="bounded", eps0=eps0, delta0=delta0, delta=delta)
    assert pair2.epsilon(delta) == pytest.approx(res2["exact"].epsilon, rel=1e-9)


def test_gce_methods_are_at_least_as_good_as_parallel() -> None:
    """HBW §V-A1: parallel composition = d·ε0 = basic on the same d; optimal is below."""
    res = summary.capped(k=1000, cap=365, neighbouring="unbounded", eps0=0.05, delta0=0.0, delta=1e-6)
    assert res["parallel"].epsilon == pytest.approx(365 * 0.05)
    assert res["cap_basic"].epsilon == pytest.approx(res["parallel"].epsilon)
    assert res["exact"].epsilon < res["cap_advanced"].epsilon < res["parallel"].epsilon
    with_delta = summary.capped(k=10, cap=2, neighbouring="unbounded", eps0=0.5, delta0=1e-6, delta=1e-3)
    assert not with_delta["parallel"].feasible and "ε-DP" in with_delta["parallel"].reason


def test_subsidiaries_example() -> None:
    """HBW Ex. 2: unbounded = one mechanism, bounded = two."""
    eps0, delta0, delta = 1.0, 1e-6, 1e-5
    one = METHODS["optimal"].epsilon_for_delta(homogeneous(k=1, eps0=eps0, delta0=delta0), delta=delta)
    two = METHODS["optimal"].epsilon_for_delta(homogeneous(k=2, eps0=eps0, delta0=delta0), delta=delta)
    un = summary.capped(k=50, cap=1, neighbouring="unbounded", eps0=eps0, delta0=delta0, delta=delta)
    bo = summary.capped(k=50, cap=1, neighbouring="bounded", eps0=eps0, delta0=delta0, delta=delta)
    assert un["exact"].epsilon == one.epsilon and bo["exact"].epsilon == two.epsilon


def test_allowed_set_summary_and_errors() -> None:
    allowed = C.feature_columns(common=2, free_only=3, paid_only=1)
    res = summary.allowed_set(allowed, neighbouring="bounded", eps0=0.5, delta0=0.0, delta=0.0)
    assert res["exact"].epsilon == pytest.approx(5 * 0.5, rel=1e-12)  # pure DP at δ = 0: d·ε0
    with pytest.raises(ParameterError, match="neighbouring"):
        C.compositions_for_cap(k=5, cap=2, neighbouring="sideways")
    with pytest.raises(ParameterError, match="cap"):
        C.compositions_for_cap(k=5, cap=0, neighbouring="bounded")
    assert C.compositions_for_cap(k=5, cap=365, neighbouring="unbounded") == 5  # no constraint
    with pytest.raises(ParameterError, match="allowed"):
        C.compositions_for_allowed([(0, 2)], neighbouring="bounded")


def _composed_bounds_before(*, d: int, eps0: float, delta0: float, delta: float, budget=None) -> dict:
    """``composed_bounds`` as it was before ``composed_bound`` (issue 20): every method in one loop."""
    from dataclasses import replace

    if d == 0:
        g = Guarantee(epsilon=0.0, delta=0.0, kind=Kind.EXACT,
                      source=f"{C.SOURCE_CAP}: no mechanism can tell")
        return dict.fromkeys(METHODS, g)
    levels = homogeneous(k=d, eps0=eps0, delta0=delta0)
    out = {}
    for key, method in METHODS.items():
        g = method.epsilon_for_delta(levels, delta=delta, budget=budget)
        out[key] = replace(g, source=f"{C.SOURCE_CAP} with {d} of the mechanisms: {g.source}",
                           note=(g.reason or "") if g.feasible else "")
    return out


@settings(max_examples=60)
@given(d=st.integers(0, 3000), eps0=st.floats(0.0, 3.0), delta0=st.sampled_from([0.0, 1e-9, 1e-6, 1e-3]),
       delta=st.sampled_from([0.0, 1e-12, 1e-6, 1e-5, 0.1]), tight=st.booleans())
def test_one_method_is_the_same_guarantee_as_all_methods(d: int, eps0: float, delta0: float, delta: float,
                                                         tight: bool) -> None:
    """``composed_bound(m)`` (the ε-against-k series' exact points) is ``composed_bounds``'s entry m,
    equal to the loop it replaced, field for field, within and over a budget."""
    from dpviz.budget import Budget

    budget = Budget(seconds=1e-6, max_bytes=1e12) if tight else None
    before = _composed_bounds_before(d=d, eps0=eps0, delta0=delta0, delta=delta, budget=budget)
    every = C.composed_bounds(d=d, eps0=eps0, delta0=delta0, delta=delta, budget=budget)
    assert every == before
    for key in METHODS:
        assert C.composed_bound(key, d=d, eps0=eps0, delta0=delta0, delta=delta, budget=budget) == before[key]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(st.integers(1, 3000), st.floats(0.0, 2.0)), min_size=1, max_size=8),
       st.sampled_from([0.0, 1e-9, 1e-6]), st.sampled_from([1e-12, 1e-6, 1e-3]),
       st.sampled_from([None, Budget(seconds=1e-4, max_bytes=1e12)]))
def test_the_classic_series_is_the_classic_answer_at_each_point(points, delta0, delta, budget):
    """``summary.classics`` (an ε-against-k series' classic curve, searched side by side) gives at every
    (k, ε0) the Guarantee ``summary.classic`` gives alone, field for field, within and over budget."""
    together = summary.classics(points, delta0=delta0, delta=delta, budget=budget)
    alone = [summary.classic(k=k, eps0=eps0, delta0=delta0, delta=delta, budget=budget) for k, eps0 in points]
    assert together == alone


def test_long_vectors_have_their_hamming_diameter() -> None:
    """Vectors longer than the cube method's 20 bits, e.g. HBW Ex. 3's feature columns with 3,000
    common columns on the Database priors page (bounded), raised "vectors must be of one length
    from 1 to 20": compared in pairs, against the brute force."""
    import numpy as np

    rng = np.random.default_rng(5)
    for k in (21, 33, 64):
        a, b = rng.integers(0, 2, size=(7, k)), rng.integers(0, 2, size=(5, k))
        assert C.hamming_diameter(a, b) == int((a[:, None, :] != b[None, :, :]).sum(axis=2).max())
    for k1, fa, pa in ((3000, 4, 5), (0, 30, 20), (25, 0, 0)):
        allowed = C.feature_columns(common=k1, free_only=fa, paid_only=pa)
        for nb in C.NEIGHBOURING:
            d = C.feature_compositions(common=k1, free_only=fa, paid_only=pa, neighbouring=nb)
            assert C.compositions_for_allowed(allowed, neighbouring=nb) == d
            res = summary.allowed_set(allowed, neighbouring=nb, eps0=0.1, delta0=0.0, delta=0.0)
            assert res["exact"].epsilon == pytest.approx(d * 0.1, rel=1e-12)  # pure DP at δ = 0: d·ε0
