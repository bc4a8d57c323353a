"""The searches' shortcuts of issue 20 (priors, third pass) against the routes they replaced, bit for bit:
the prefix sums over the atoms with L > 0 only, the guess's δ-independent ln S(L_i) (one set, and many
sets in one pass), the closed-form step's log1mexp of one float, the atom counts by ``bisect``, and
the remembered optimal curves of HBW Thm 3's split."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import atom_batch
from dpviz.composition.atom_batch import WINDOW
from dpviz.composition.atoms import LossAtoms, _fill_reaches, epsilons
from dpviz.gce import delta_split, paper_bounds
from dpviz.numerics import log1mexp, log1mexp_float
from tests.composition.test_atom_batch import SETS, same


def fresh(atoms: LossAtoms) -> LossAtoms:
    """The same atoms with nothing computed or remembered yet."""
    return LossAtoms(loss=atoms.loss, log_p=atoms.log_p, p_inf=atoms.p_inf, terms=atoms.terms)


def old_prefix(atoms: LossAtoms) -> tuple[np.ndarray, np.ndarray]:
    """The prefix sums over every atom, as ``LossAtoms._prefix`` computed them for every search."""
    return np.logaddexp.accumulate(atoms.log_p), np.logaddexp.accumulate(atoms.log_p - atoms.loss)


def old_guess(atoms: LossAtoms, log_t: float, positive: int) -> int | None:
    """``LossAtoms._guess`` before its δ-independent part was kept (the replaced code, on the full sums)."""
    if positive <= 2:
        return None
    log_a, log_b = old_prefix(atoms)
    with np.errstate(invalid="ignore"):
        y = np.minimum(atoms.loss[1:positive] + log_b[: positive - 1] - log_a[: positive - 1], 0.0)
        reached = log_a[: positive - 1] + log1mexp(y) >= log_t
    return 1 + int(np.argmax(reached)) if reached.any() else positive


def random_sets(seed: int, count: int) -> list[LossAtoms]:
    """Arbitrary atom sets: losses of both signs (ties, zeros), masses down to e^−740 (subnormal; a zero
    mass among the largest losses makes the windowed sums' −∞ − (−∞) warn, in the old route too)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        n = int(rng.integers(1, 400))
        loss = np.round(rng.normal(rng.normal(0.0, 2.0), rng.uniform(0.01, 5.0), n), int(rng.integers(1, 6)))
        log_p = rng.normal(-5.0, 3.0, n)
        log_p[rng.random(n) < 0.05] = -740.0
        log_p[rng.random(n) < 0.05] = -700.0
        out.append(LossAtoms.from_masses(loss, log_p, p_inf=float(rng.choice([0.0, 1e-9, 1e-3]))))
    return out


ALL = SETS + random_sets(3, 60)


def test_positive_prefix_is_the_head_of_the_full_one() -> None:
    for atoms in ALL:
        a = fresh(atoms)
        head_a, head_b = a._positive_prefix
        full_a, full_b = old_prefix(atoms)
        n = int((atoms.loss > 0).sum())
        assert head_a.size == head_b.size == n
        assert head_a.tobytes() == full_a[:n].tobytes() and head_b.tobytes() == full_b[:n].tobytes()
        assert a._prefix_to(n)[0] is head_a  # no full sums for a search at ε ≥ 0
        assert a._prefix_to(n + 1)[0].size == atoms.loss.size  # beyond the positive atoms: the full sums


@settings(max_examples=200)
@given(which=st.integers(0, len(ALL) - 1), log_t=st.one_of(st.floats(-800.0, 1.0),
                                                           st.sampled_from([-math.inf, 0.0, -1e-300])))
def test_guess_is_the_old_guess(which: int, log_t: float) -> None:
    a = fresh(ALL[which])
    positive = int(np.searchsorted(-a.loss, 0.0, side="left"))
    assert a._positive == positive
    assert a._guess(log_t, positive) == old_guess(a, log_t, positive)


def test_reaches_in_one_pass_are_each_sets_own() -> None:
    together = [fresh(a) for a in ALL]
    _fill_reaches(together + together[:3])  # repeated sets are filled once
    filled = [a for a in together if "_reach" in a.__dict__]
    assert len(filled) == sum(1 for a in ALL if int((a.loss > 0).sum()) > 2) > 10
    for a, atoms in zip(together, ALL, strict=True):
        alone = fresh(atoms)
        if "_reach" in a.__dict__:
            assert a._reach.tobytes() == alone._reach.tobytes()


@settings(max_examples=500)
@given(x=st.one_of(st.floats(max_value=0.0), st.sampled_from([0.0, -0.0, -math.log(2.0), -1e-300, -5e-324,
                                                               -math.inf, math.nan])))
def test_log1mexp_of_one_float_is_the_arrays(x: float) -> None:
    want = float(log1mexp(np.array([x]))[0])
    assert same(log1mexp_float(x), want)


def test_log1mexp_of_one_float_over_many() -> None:
    rng = np.random.default_rng(11)
    x = -np.concatenate([rng.exponential(1.0, 20_000), rng.uniform(0.0, 1.4, 20_000),
                         10.0 ** rng.uniform(-300, 3, 5_000)])
    want = log1mexp(x)
    assert [log1mexp_float(v) for v in x.tolist()] == want.tolist()


@settings(max_examples=300)
@given(which=st.integers(0, len(ALL) - 1), u=st.floats(0.0, 1.0),
       how=st.sampled_from(["scale", "atom", "atom+W", "atom-", "inf", "-inf", "-0"]))
def test_counts_by_bisect_are_searchsorted(which: int, u: float, how: str) -> None:
    atoms = ALL[which]
    at = float(atoms.loss[int(u * (atoms.loss.size - 1))])
    eps = {"scale": (u - 0.5) * 40.0, "atom": at, "atom+W": at - WINDOW,
           "atom-": float(np.nextafter(at, -np.inf)), "inf": math.inf, "-inf": -math.inf, "-0": -0.0}[how]
    assert atoms._neg_loss_list is not None
    neg = -atoms.loss
    want = (int(np.searchsorted(neg, -eps, side="left")),
            int(np.searchsorted(neg, -(eps + WINDOW), side="left")))
    assert atom_batch._counts(atoms, eps) == want


def test_counts_of_a_nan_take_searchsorted() -> None:
    atoms = ALL[0]
    neg = -atoms.loss
    assert atom_batch._counts(atoms, math.nan) == (int(np.searchsorted(neg, -math.nan)),) * 2


@settings(max_examples=60, deadline=None)
@given(which=st.lists(st.integers(0, len(ALL) - 1), min_size=2, max_size=12),
       log_delta=st.floats(-30.0, -0.1))
def test_searches_read_the_same_floats_as_before(which: list[int], log_delta: float) -> None:
    """Whole searches side by side: each answer is the answer of a search on a set whose prefix sums
    are the old full ones and whose guess is the old guess (both put in place before it runs)."""
    delta = math.exp(log_delta)
    new = [fresh(ALL[i]) for i in which]
    old = []
    for i in which:
        a = fresh(ALL[i])
        a.__dict__["_prefix"] = old_prefix(ALL[i])  # _prefix_to then reads the full sums
        positive = int((a.loss > 0).sum())
        if positive > 2:
            log_a, log_b = a._prefix
            with np.errstate(invalid="ignore"):
                y = np.minimum(a.loss[1:positive] + log_b[: positive - 1] - log_a[: positive - 1], 0.0)
                a.__dict__["_reach"] = log_a[: positive - 1] + log1mexp(y)
        a.__dict__["_neg_loss_list"] = None  # the counts by searchsorted
        old.append(a)
    got = epsilons([(a, delta) for a in new])
    want = [epsilons([(a, delta)])[0] for a in old]
    assert all(same(g, w) for g, w in zip(got, want, strict=True))


def test_remembered_optimal_curves_are_computed_ones() -> None:
    thm3, _ = paper_bounds._term_atoms(60, 40, 0.2, 1e-7)
    for a in thm3[:8]:
        t, d = delta_split.optimal_curve(a)
        again = delta_split.optimal_curve(a)
        assert again[0] is t and again[1] is d
        t2, d2 = delta_split._optimal_curve(fresh(a))
        assert t.tobytes() == t2.tobytes() and d.tobytes() == d2.tobytes()
