"""The exact route's lattice recursion (``exact_route._lattice_power``, docs/MATH.md §24) against exact
rational arithmetic: the k-fold law of a lattice law, merged per lattice point, computed with
``fractions.Fraction`` from the same float masses and losses. Every true mass is within the stated
relative error of the computed one and every true loss is at most the computed (rounded-up) loss; the
recursion and the count vectors agree; and the planner's geometric search at Δ = 4 (3 s of count
vectors per question before) uses the recursion."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import exact_route, registry
from dpviz.pld.law import LossLaw


def _rational_power(loss: np.ndarray, p: np.ndarray, steps: np.ndarray, k: int) -> dict[int, tuple[Fraction,
                                                                                                 Fraction]]:
    """{lattice step: (exact P-mass, exact largest summed loss)} of the k-fold law, by a DP over the
    steps in rational arithmetic (each float is a rational: nothing is rounded)."""
    out: dict[int, tuple[Fraction, Fraction]] = {0: (Fraction(1), Fraction(0))}
    atoms = [(int(s), Fraction(float(x)), Fraction(float(m))) for s, x, m in zip(steps, loss, p, strict=True)]
    for _ in range(k):
        nxt: dict[int, tuple[Fraction, Fraction]] = {}
        for j, (mass, top) in out.items():
            for s, x, m in atoms:
                old = nxt.get(j + s)
                pair = (mass * m, top + x)
                nxt[j + s] = pair if old is None else (old[0] + pair[0], max(old[1], pair[1]))
        out = nxt
    return out


def _check(law: LossLaw, unit: float, k: int) -> None:
    keep = law.p > 0
    loss, p = law.loss[keep], law.p[keep]
    steps = exact_route._lattice(law, unit)
    assert steps is not None
    up, log_mass, error = exact_route._lattice_power(loss, np.log(p), steps, unit, k)
    truth = _rational_power(loss, p, steps, k)
    index = sorted(j for j, (m, _) in truth.items() if m > 0)
    assert len(index) == up.size
    got_index = np.rint((up - 0.0) / unit).astype(np.int64)  # the points, in increasing order
    assert list(got_index) == index or np.allclose(got_index, index, atol=1)
    for j, u, lm in zip(index, up, log_mass, strict=True):
        mass, top = truth[j]
        assert Fraction(float(u)) >= top  # the loss is rounded up
        assert float(u) - float(top) <= 1e-12 * (1.0 + abs(float(top)))  # and not by much
        rel = abs(math.exp(float(lm)) / float(mass) - 1.0) if float(mass) > 1e-300 else 0.0
        assert rel <= error + 4e-16  # the exp and the division of this check round too


@settings(max_examples=60, deadline=None)
@given(eps0=st.floats(1e-3, 3.0), sensitivity=st.integers(2, 5), k=st.integers(1, 9))
def test_geometric_lattice_power_is_certified_against_rationals(eps0: float, sensitivity: int,
                                                                k: int) -> None:
    m = registry.make("geometric", sampling_rate=None, neighbouring="add-remove", eps0=eps0,
                      sensitivity=sensitivity)
    _check(m.law, m.grid_unit, k)


@settings(max_examples=40, deadline=None)
@given(masses=st.lists(st.floats(1e-6, 1.0), min_size=2, max_size=5), steps=st.lists(st.integers(-6, 6),
       min_size=5, max_size=5, unique=True), unit=st.floats(1e-3, 2.0), k=st.integers(1, 7))
def test_any_lattice_law_is_certified_against_rationals(masses, steps, unit, k) -> None:
    n = len(masses)
    p = np.array(masses) / sum(masses)
    loss = np.array(steps[:n], dtype=float) * unit
    law = LossLaw.from_atoms("lattice", loss, p, p[::-1].copy(), symmetric=False)
    _check(law, unit, k)


@pytest.mark.parametrize(("sensitivity", "k"), [(2, 12), (3, 20), (4, 30), (6, 8)])
def test_recursion_and_count_vectors_give_the_same_atoms(sensitivity: int, k: int) -> None:
    m = registry.make("geometric", sampling_rate=None, neighbouring="add-remove", eps0=0.3,
                      sensitivity=sensitivity)
    law = m.law
    keep = law.p > 0
    loss, log_p = law.loss[keep], np.log(law.p[keep])
    steps = exact_route._lattice(law, m.grid_unit)
    up, lm, error = exact_route._lattice_power(loss, log_p, steps, m.grid_unit, k)
    counts, coef = exact_route._count_table(loss.size, k)
    total = counts @ loss
    err = (loss.size + 2) * 2.0**-52 * (counts @ np.abs(loss))
    lp = coef + (counts * log_p).sum(axis=1)
    e_up, _, e_lm = exact_route._merge_lattice(total, err, lp, counts @ steps)
    assert up.size == e_up.size
    assert np.allclose(up, e_up, rtol=0, atol=1e-12 * (1 + np.abs(e_up).max()))
    assert np.allclose(lm, e_lm, rtol=0, atol=1e-11)
    assert 0 < error < 1e-9


def test_the_route_picks_the_recursion_where_the_count_vectors_are_many() -> None:
    m = registry.make("geometric", sampling_rate=None, neighbouring="add-remove", eps0=0.02, sensitivity=4)
    atoms, vectors, lattice = exact_route._part_size(m, 50)
    assert vectors == 0.0 and lattice > 0  # 316,251 count vectors of 5 against 24,750 recursion entries
    assert atoms == 50 * 4 + 1  # steps ±4, ±2, 0: stride 2, so 201 points
    few = registry.make("geometric", sampling_rate=None, neighbouring="add-remove", eps0=0.02, sensitivity=2)
    assert exact_route._part_size(few, 3)[1] > 0  # 10 vectors of 3: cheaper than the recursion's calls


def test_exact_answer_matches_the_count_vectors_route() -> None:
    """The route's ε at δ and δ at ε with the recursion equal the count vectors' within the bounds."""
    m = registry.make("geometric", sampling_rate=None, neighbouring="add-remove", eps0=0.05, sensitivity=4)
    lattice = exact_route.exact([(m, 40)], delta=1e-6)
    eps = lattice.epsilon
    saved = exact_route._lattice_cells
    try:
        exact_route._lattice_cells = lambda steps, k: math.inf  # the count vectors, as before
        vectors = exact_route.exact([(m, 40)], delta=1e-6)
        d_vec = exact_route.exact([(m, 40)], epsilon=eps).delta
    finally:
        exact_route._lattice_cells = saved
    d_lat = exact_route.exact([(m, 40)], epsilon=eps).delta
    assert eps == pytest.approx(vectors.epsilon, rel=1e-10)  # the recursion charges ~2e-11 of δ
    assert d_lat == pytest.approx(d_vec, rel=1e-9)
