"""ε(δ) searches of many atom sets (``atoms.epsilons``): the same floats, bit for bit, as one search at
a time and as the search before it was written as loops (``legacy_solve``, which reads the same
evaluations); the optimum's guarantees of many k, and the atom sets of many k built together."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz import budget as budgets
from dpviz.composition import METHODS, homogeneous, optimal
from dpviz.composition.atoms import LossAtoms, epsilons
from dpviz.composition.levels import Level
from tests.composition import legacy_solve


def same(a: float | None, b: float | None) -> bool:
    """Equal floats (NaN equal to NaN), or both ``None``."""
    if a is None or b is None:
        return a is b
    return a == b or (math.isnan(a) and math.isnan(b))


# ------------------------------------------------------------------ the windowed sums
def atom_sets() -> list[LossAtoms]:
    """Binomial sets (with and without lumped tails and δ0), a heterogeneous product, and a set of
    arbitrary masses with tied losses, negative losses and a zero mass."""
    sets = [LossAtoms.binomial(k=k, eps0=e, delta0=d)
            for k, e, d in ((1, 0.5, 0.0), (7, 0.1, 1e-3), (30, 0.1, 0.0), (300, 0.05, 1e-6),
                            (1000, 0.4, 0.0), (20_000, 0.01, 0.0))]
    sets.append(optimal.loss_atoms((Level(0.1, 1e-6, 30), Level(0.5, 0.0, 10))))
    loss = np.array([3.0, 3.0, 2.5, 1.0, 0.2, 0.0, -0.7, -0.7, -2.0])
    log_p = np.log(np.array([0.01, 0.02, 0.05, 0.2, 0.3, 0.1, 0.2, 0.12, 0.0]) + 1e-300)
    sets.append(LossAtoms.from_masses(loss, log_p, p_inf=1e-4))
    return sets


SETS = atom_sets()


def test_a_dense_curve_on_one_set() -> None:
    atoms = LossAtoms.binomial(k=30, eps0=0.1, delta0=1e-3)
    eps = np.linspace(0.0, 3.2, 160)
    assert atoms.deltas(eps) == [atoms.delta(float(e)) for e in eps]
    big = LossAtoms.binomial(k=100_000, eps0=0.01, delta0=0.0)
    eps = np.linspace(-1.0, 40.0, 97)
    assert big.deltas(eps) == [big.delta(float(e)) for e in eps]


# ------------------------------------------------------------------ the searches
@settings(max_examples=150)
@given(sets=st.lists(st.tuples(st.floats(0.0, 4.5), st.floats(-4.0, 1.3),
                               st.sampled_from([0.0, 0.0, 1e-8, 1e-4, 1e-2])),
                     min_size=1, max_size=12),
       log_delta=st.floats(-300.0, -0.01))
def test_searches_side_by_side_are_the_old_searches(sets: list[tuple[float, float, float]],
                                                    log_delta: float) -> None:
    """Each search run with others (``atoms.epsilons``) returns the float the search returned before
    it was written as steps, and the one it returns alone; δ is sometimes below the floor P(L = ∞)."""
    delta = 10.0**log_delta
    made = [dict(k=max(1, int(10.0**lk)), eps0=10.0**le, delta0=d) for lk, le, d in sets]
    together = epsilons([(LossAtoms.binomial(**m), delta) for m in made])
    alone = [LossAtoms.binomial(**m).epsilon(delta) for m in made]
    before = [legacy_solve.solve(LossAtoms.binomial(**m), delta) for m in made]
    assert together == alone == before


def test_searches_that_end_at_once_or_never_reach() -> None:
    """Answers without a step (δ below the floor, δ(0) ≤ δ, one atom) among searches that take many."""
    sets = [LossAtoms.binomial(k=50, eps0=0.1, delta0=0.01), LossAtoms.binomial(k=50, eps0=0.1, delta0=0.0),
            LossAtoms.binomial(k=1, eps0=2.0, delta0=0.0), LossAtoms.binomial(k=400, eps0=0.02, delta0=0.0)]
    for delta in (1e-3, 0.9, 1e-12):
        want = [legacy_solve.solve(a, delta) for a in sets]
        assert epsilons([(a, delta) for a in sets]) == want
    assert want[0] is None  # 1 − 0.99^50 > 1e-12: below the floor


def test_remembered_answers_are_kept_per_set() -> None:
    atoms = LossAtoms.binomial(k=100, eps0=0.1, delta0=0.0)
    first = epsilons([(atoms, 1e-5), (atoms, 1e-3), (atoms, 1e-5)])
    assert first[0] == first[2] and set(atoms._cache) == {1e-5, 1e-3}
    assert epsilons([(atoms, 1e-3)]) == [first[1]] == [legacy_solve.solve(atoms, 1e-3)]


# ------------------------------------------------------------------ the optimum's guarantees
@pytest.mark.parametrize("delta", [1e-5, 0.05, 1e-9])
def test_an_epsilon_curve_is_the_points_one_at_a_time(delta: float) -> None:
    """``optimal.epsilons_for_delta`` over a curve's k, with a budget that leaves the largest k to the
    closed forms and δ0 that puts the floor above δ at some k: every Guarantee as one at a time."""
    many = [homogeneous(k=k, eps0=0.2, delta0=1e-7) for k in (1, 2, 5, 30, 300, 3000, 100_000, 10**6)]
    tight = budgets.Budget(seconds=0.001, max_bytes=budgets.PAGE.max_bytes)
    for budget in (None, tight):
        assert optimal.epsilons_for_delta(many, delta=delta, budget=budget) == \
            [optimal.epsilon_for_delta(lv, delta=delta, budget=budget) for lv in many]
    assert METHODS["optimal"].epsilons_for_delta(many, delta=delta) == \
        [METHODS["optimal"].epsilon_for_delta(lv, delta=delta) for lv in many]
    assert METHODS["zcdp"].epsilons_for_delta(many, delta=delta) == \
        [METHODS["zcdp"].epsilon_for_delta(lv, delta=delta) for lv in many]


# ------------------------------------------------------------------ the atom sets of many k
@settings(max_examples=120)
@given(log_ks=st.lists(st.floats(0.0, 6.5), min_size=1, max_size=8), log_eps0=st.floats(-4.0, 1.5),
       seed=st.integers(0, 2**32 - 1))
def test_weights_of_many_n_are_the_old_ones(log_ks: list[float], log_eps0: float, seed: int) -> None:
    """Each run's weights are the floats of Loader's form called once per n as before: the ends, the
    table of small Stirling remainders (n or x ≤ 15), and runs whose deviance series stop after
    different numbers of terms (near the mode, few; a run stops when its own terms are negligible)."""
    from dpviz.numerics import log_binom_pmf, log_binom_pmf_runs, softplus
    from tests.composition import legacy_binomial

    eps0 = 10.0**log_eps0
    log_p, log_q = -float(softplus(eps0)), eps0 - float(softplus(eps0))
    rng = np.random.default_rng(seed)
    ns = [max(1, int(10.0**v)) for v in log_ks]
    xs = [np.unique(np.concatenate([[0, n, min(n, 7)], np.round(rng.uniform(0, n, min(n, 200)))]))
          for n in ns]
    got = log_binom_pmf_runs(ns, np.concatenate(xs), [x.size for x in xs], log_p=log_p, log_q=log_q)
    want = np.concatenate([legacy_binomial.log_binom_pmf(n, x, log_p=log_p, log_q=log_q)
                           for n, x in zip(ns, xs, strict=True)])
    assert got.tolist() == want.tolist()
    assert np.concatenate([log_binom_pmf(n, x, log_p=log_p, log_q=log_q)
                           for n, x in zip(ns, xs, strict=True)]).tolist() == want.tolist()


@settings(max_examples=80)
@given(log_ks=st.lists(st.floats(0.0, 6.5), min_size=1, max_size=10), log_eps0=st.floats(-4.0, 1.5),
       delta0=st.sampled_from([0.0, 1e-7, 1e-2]), above=st.one_of(st.none(), st.floats(-1.0, 2.0)))
def test_atom_sets_built_together_are_each_built_alone(log_ks: list[float], log_eps0: float, delta0: float,
                                                       above: float | None) -> None:
    """``LossAtoms.binomials`` (one weight pass, lumped tails at both ends, ``above`` cuts) against
    each set built by the old weights: the same atoms, masses, P(L = ∞) and term counts."""
    from dpviz.composition.binomial_atoms import away_from_zero, binomial_window
    from dpviz.numerics import softplus
    from tests.composition import legacy_binomial

    eps0 = 10.0**log_eps0
    ks = [max(1, int(10.0**v)) for v in log_ks]
    cut = None if above is None else above * max(ks) * eps0
    log_p, log_q = -float(softplus(eps0)), eps0 - float(softplus(eps0))
    for k, atoms in zip(ks, LossAtoms.binomials(ks, eps0=eps0, delta0=delta0, above=cut), strict=True):
        lo, hi = binomial_window(k, eps0)
        l_idx = np.arange(lo, hi + 1, dtype=float)
        loss = away_from_zero((k - 2.0 * l_idx) * eps0)
        kept = loss.size if cut is None else int(np.searchsorted(-loss, -cut, side="left"))
        w = legacy_binomial.log_binom_pmf(k, l_idx[:kept], log_p=log_p, log_q=log_q)
        loss = loss[:kept]
        if hi < k and kept == l_idx.size:
            edge = float(legacy_binomial.log_binom_pmf(k, np.array([hi + 1.0]), log_p=log_p, log_q=log_q)[0])
            w[-1] = np.logaddexp(w[-1], edge + math.log(k - hi))
        if lo > 0:
            edge = float(legacy_binomial.log_binom_pmf(k, np.array([lo - 1.0]), log_p=log_p, log_q=log_q)[0])
            loss = np.concatenate([away_from_zero(np.array([k * eps0])), loss])
            w = np.concatenate([[edge + math.log(lo)], w])
        log_free = k * math.log1p(-delta0)
        assert atoms.loss.tolist() == loss.tolist() and atoms.log_p.tolist() == (w + log_free).tolist()
        assert (atoms.p_inf, atoms.terms) == (-math.expm1(log_free), k + 1)


def test_the_remembered_small_sets_are_the_sets() -> None:
    """``optimal``'s remembered sets, built together for a curve, are the sets built one by one; a
    curve longer than the memory still gets each of its sets."""
    keys = [(k, 0.123, 1e-6) for k in range(1, 200)]
    got = optimal._small_binomials(keys)
    assert len(optimal._small) == optimal.SMALL_KEPT
    for (k, e, d), atoms in zip(keys, got, strict=True):
        alone = LossAtoms.binomial(k=k, eps0=e, delta0=d)
        assert atoms.loss.tolist() == alone.loss.tolist() and atoms.log_p.tolist() == alone.log_p.tolist()
    assert optimal._small_binomial(199, 0.123, 1e-6) is got[-1]  # remembered


def test_forget_drops_every_remembered_set_and_the_answers_come_back_the_same() -> None:
    """``optimal.forget`` (the benchmarks' fresh start) empties both memories: a small set, which
    keeps its ε, and a large one; asked again, each is built anew with the same answer."""
    small, large = homogeneous(k=40, eps0=0.1, delta0=0.0), homogeneous(k=3_000, eps0=0.02, delta0=0.0)
    first = [optimal.epsilon_for_delta(lv, delta=1e-5) for lv in (small, large)]
    before = optimal.loss_atoms(small), optimal.loss_atoms(large)
    optimal.forget()
    assert not optimal._small and optimal.loss_atoms.cache_info().currsize == 0
    after = optimal.loss_atoms(small), optimal.loss_atoms(large)
    assert after[0] is not before[0] and after[1] is not before[1]
    assert [optimal.epsilon_for_delta(lv, delta=1e-5) for lv in (small, large)] == first
