"""δ(ε) and ε(δ) of loss atoms as loops (``dpviz.composition.atom_kernel``, issue 20): the interpreted
and the compiled loops give the same floats; the prefix sums are numpy's accumulation, bit for bit;
the sums agree with the numpy route they replaced to within the error bound and with an exact sum in
rational arithmetic; the search's answers are sound (δ(ε) ≤ δ) and the smallest such ε to within a
few ulps; a search's value at its answer is what an evaluation gives afresh."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpviz.composition import atom_kernel
from dpviz.composition.atom_kernel import WINDOW
from dpviz.composition.atoms import LossAtoms, epsilons
from dpviz.gce import delta_split, paper_bounds
from dpviz.numerics import log1mexp, logsumexp
from tests.composition.test_atom_searches import SETS, same


def fresh(atoms: LossAtoms) -> LossAtoms:
    """The same atoms with nothing computed or remembered yet."""
    return LossAtoms(loss=atoms.loss, log_p=atoms.log_p, p_inf=atoms.p_inf, terms=atoms.terms)


def random_sets(seed: int, count: int) -> list[LossAtoms]:
    """Arbitrary atom sets: losses of both signs (ties, zeros), masses down to e^−740 (subnormal)."""
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


def numpy_part(atoms: LossAtoms, eps: float) -> float:
    """The numpy route the loops replaced (``LossAtoms._log_finite_part`` before issue 20's loops):
    the window term by term, the rest through the full prefix sums."""
    neg = -atoms.loss
    m = int(np.searchsorted(neg, -eps, side="left"))
    if m == 0:
        return -math.inf
    j = int(np.searchsorted(neg, -(eps + WINDOW), side="left"))
    parts = []
    if j < m:
        parts.append(logsumexp(atoms.log_p[j:m] + log1mexp(-(atoms.loss[j:m] - eps))))
    if j > 0:
        log_a = np.logaddexp.accumulate(atoms.log_p)
        log_b = np.logaddexp.accumulate(atoms.log_p - atoms.loss)
        y = min(eps + log_b[j - 1] - log_a[j - 1], -WINDOW)
        parts.append(float(log_a[j - 1] + log1mexp(y)))
    return logsumexp(np.asarray(parts, dtype=float))


def eps_at(atoms: LossAtoms, u: float, how: str) -> float:
    """An ε anywhere: scaled, at an atom's loss, at its window's edge, one ulp below an atom."""
    at = float(atoms.loss[int(u * (atoms.loss.size - 1))])
    return {"scale": (u - 0.5) * 40.0, "atom": at, "atom-W": at - WINDOW,
            "atom-": float(np.nextafter(at, -np.inf)), "0": 0.0}[how]


HOW = st.sampled_from(["scale", "atom", "atom-W", "atom-", "0"])


@settings(max_examples=300, deadline=None)
@given(which=st.integers(0, len(ALL) - 1), u=st.floats(0.0, 1.0), how=HOW)
def test_the_sums_are_the_numpy_routes_to_within_the_error_bound(which: int, u: float, how: str) -> None:
    atoms = fresh(ALL[which])
    eps = eps_at(atoms, u, how)
    got, want = atoms.log_finite_part(eps), numpy_part(atoms, eps)
    if want == -math.inf:
        assert got == -math.inf
    else:
        assert abs(math.expm1(got - want)) <= atoms.relative_error


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 60), eps0=st.floats(0.01, 2.0), delta0=st.sampled_from([0.0, 1e-6, 1e-2]),
       u=st.floats(0.0, 1.0), how=HOW)
def test_the_sums_are_exact_rational_sums(k: int, eps0: float, delta0: float, u: float, how: str) -> None:
    """Σ_{L > ε} p (1 − e^{ε − L}) with every term's exp and the sum in rational arithmetic (the
    masses and 1 − e^{ε − L} rounded once each, by expm1): within the error bound of the evaluation."""
    atoms = LossAtoms.binomial(k=k, eps0=eps0, delta0=delta0)
    eps = eps_at(atoms, u, how)
    exact = sum((Fraction(math.exp(lp)) * Fraction(-math.expm1(eps - lo))
                 for lo, lp in zip(atoms.loss.tolist(), atoms.log_p.tolist(), strict=True) if lo > eps),
                Fraction(0))
    got = atoms.log_finite_part(eps)
    if exact == 0:
        assert got == -math.inf
    else:
        assert abs(math.exp(got) / float(exact) - 1.0) <= atoms.relative_error + 4e-16 * (k + 1)


@settings(max_examples=100, deadline=None)
@given(which=st.integers(0, len(ALL) - 1), upto=st.floats(0.0, 1.0))
def test_the_prefix_sums_are_numpys_accumulation(which: int, upto: float) -> None:
    atoms = ALL[which]
    n = atoms.loss.size
    la, lb = np.empty(n), np.empty(n)
    functions = atom_kernel.LOOPS.interpreted()
    half = functions["_fill"](atoms.loss, atoms.log_p, la, lb, 0, int(upto * n))
    assert functions["_fill"](atoms.loss, atoms.log_p, la, lb, half, n) == n  # continued where it stopped
    assert la.tobytes() == np.logaddexp.accumulate(atoms.log_p).tobytes()
    assert lb.tobytes() == np.logaddexp.accumulate(atoms.log_p - atoms.loss).tobytes()


@settings(max_examples=60, deadline=None)
@given(which=st.lists(st.integers(0, len(ALL) - 1), min_size=1, max_size=6),
       log_delta=st.floats(-40.0, -0.05), u=st.floats(0.0, 1.0), how=HOW)
def test_interpreted_and_compiled_loops_give_the_same_floats(which: list[int], log_delta: float, u: float,
                                                             how: str) -> None:
    delta = math.exp(log_delta)
    got = {}
    for compiled in (False, True):
        with atom_kernel.LOOPS.forced(compiled):
            sets = [fresh(ALL[i]) for i in which]
            got[compiled] = (epsilons([(a, delta) for a in sets]),
                             [a.log_finite_part(eps_at(a, u, how)) for a in sets])
    assert all(same(x, y) for x, y in zip(got[False][0], got[True][0], strict=True))
    assert all(same(x, y) for x, y in zip(got[False][1], got[True][1], strict=True))


@settings(max_examples=150, deadline=None)
@given(which=st.integers(0, len(ALL) - 1), log_delta=st.floats(-300.0, -0.01))
def test_the_answer_is_sound_and_smallest(which: int, log_delta: float) -> None:
    """δ(ε) ≤ δ at the answer, and above δ a few ulps below it (or the answer is 0, or δ is below
    the floor P(L = ∞) and there is none)."""
    atoms = fresh(ALL[which])
    delta = 10.0**log_delta
    eps = atoms.epsilon(delta)
    if eps is None:
        assert delta < atoms.p_inf
        return
    assert atoms.delta(eps) * (1.0 + atoms.relative_error) <= delta or eps == float(atoms.loss[0])
    below = eps - 8.0 * math.ulp(max(eps, 1e-300)) - 1e-13 * eps
    if eps > 0.0 and below > 0.0:
        assert fresh(atoms).delta(below) * (1.0 - 4.0 * atoms.relative_error) > delta \
            or abs(fresh(atoms).delta(below) / delta - 1.0) <= 1e-9


def test_a_search_remembers_the_value_it_accepted() -> None:
    """The finite part at the answer is remembered (its caller's δ(ε) reads it) and is the float an
    evaluation on a fresh set gives."""
    atoms = LossAtoms.binomial(k=1000, eps0=0.1, delta0=0.0)
    eps = atoms.epsilon(1e-5)
    assert eps is not None and eps in atoms._values
    assert atoms.delta(eps) == fresh(atoms).delta(eps) <= 1e-5


def test_a_nan_gives_nan() -> None:
    assert math.isnan(fresh(ALL[0]).log_finite_part(math.nan))


@pytest.mark.parametrize("k", [30, 1000])
def test_a_search_reads_only_the_prefix_it_needs(k: int) -> None:
    """At a small δ the answer is among the largest losses: the prefix sums are filled only that far."""
    atoms = LossAtoms.binomial(k=k, eps0=0.1, delta0=0.0)
    atoms.epsilon(1e-12)
    assert 0 < atoms._scan[2] < atoms.loss.size


def test_remembered_optimal_curves_are_computed_ones() -> None:
    thm3, _ = paper_bounds._term_atoms(60, 40, 0.2, 1e-7)
    for a in thm3[:8]:
        t, d = delta_split.optimal_curve(a)
        again = delta_split.optimal_curve(a)
        assert again[0] is t and again[1] is d
        t2, d2 = delta_split._optimal_curve(fresh(a))
        assert t.tobytes() == t2.tobytes() and d.tobytes() == d2.tobytes()


@settings(max_examples=100, deadline=None)
@given(which=st.integers(0, len(ALL) - 1), first=st.floats(0.0, 1.0), upto=st.floats(0.0, 1.0))
def test_the_interpreters_numpy_prefix_is_the_loops(which: int, first: float, upto: float) -> None:
    """``prefill`` (numpy, for the interpreter), from scratch or continued from any entry, writes the
    floats ``_fill`` writes."""
    atoms = ALL[which]
    n = atoms.loss.size
    a, b = int(first * n), int(upto * n)
    loops = [np.full(n, np.nan), np.full(n, np.nan)]
    by_numpy = [np.full(n, np.nan), np.full(n, np.nan)]
    fill = atom_kernel.LOOPS.interpreted()["_fill"]
    fill(atoms.loss, atoms.log_p, *loops, fill(atoms.loss, atoms.log_p, *loops, 0, a), max(a, b))
    atom_kernel.prefill(atoms.loss, atoms.log_p, *by_numpy,
                        atom_kernel.prefill(atoms.loss, atoms.log_p, *by_numpy, 0, a), max(a, b))
    assert loops[0].tobytes() == by_numpy[0].tobytes() and loops[1].tobytes() == by_numpy[1].tobytes()


@settings(max_examples=100, deadline=None)
@given(which=st.integers(0, len(ALL) - 1), log_delta=st.floats(-60.0, -0.05))
def test_a_guess_changes_no_answer(which: int, log_delta: float) -> None:
    """``solve`` with the loops' guess, numpy's (``numpy_guess``), a wrong one and none (bisection):
    the same ε and the same value at it."""
    atoms = ALL[which]
    delta = math.exp(log_delta) + atoms.p_inf
    assume(delta - atoms.p_inf > 0)  # solve's precondition (the caller answers the rest)
    n, positive = atoms.loss.size, int((atoms.loss > 0).sum())
    solve = atom_kernel.LOOPS.interpreted()["solve"]
    la, lb = np.empty(n), np.empty(n)
    atom_kernel.prefill(atoms.loss, atoms.log_p, la, lb, 0, n)
    guesses = [-2, atom_kernel.numpy_guess(atoms.loss, la, lb, positive, math.log(delta - atoms.p_inf)), -1]
    if positive > 2:
        guesses.append(1 + (positive - 2) // 3)
    got = {g: solve(atoms.loss, atoms.log_p, atoms.p_inf, delta, 1.0 + atoms.relative_error, positive,
                    la, lb, n, g)[:2] for g in guesses}
    first = got[-2]
    assert all(same(v[0], first[0]) and same(v[1], first[1]) for v in got.values())
