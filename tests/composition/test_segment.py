"""``LossAtoms._segment`` (the prefix-sum guess, confirmed exactly at its two ends) finds the bracket
that bisection over the atoms finds (seed 004 KOV Thm 3.3: δ(ε) is linear in e^ε between atoms)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition.atoms import LossAtoms
from dpviz.numerics import bisect_int


def _bisected(atoms: LossAtoms, log_t: float, positive: int) -> tuple[int, int]:
    return bisect_int(lambda i: atoms.log_finite_part(float(atoms.loss[i])) < log_t, 0, positive)


def _segment(atoms: LossAtoms, log_t: float, positive: int,
             asked: list[float] | None = None) -> tuple[int, int]:
    """``LossAtoms``' bracket as its search finds it: the prefix-sum guess (``_guess``), its two ends
    evaluated, then ``_segment``'s steps run alone (as ``atom_batch.run`` runs one search), each ε
    it asks for answered by ``log_finite_part`` and noted in ``asked``."""
    guess = atoms._guess(log_t, positive)
    ends = [] if guess is None else [i for i in (guess - 1, guess) if 0 < i < positive]
    known = {i: atoms.log_finite_part(float(atoms.loss[i])) for i in ends}
    if asked is not None:
        asked += [float(atoms.loss[i]) for i in ends]
    steps = atoms._segment(log_t, positive, guess, known)
    try:
        want = next(steps)
        while True:
            if asked is not None:
                asked += list(want)
            want = steps.send([atoms.log_finite_part(e) for e in want])
    except StopIteration as done:
        return done.value


@settings(max_examples=150, deadline=None)
@given(log_k=st.floats(0.0, 6.0), log_eps0=st.floats(-4.0, 1.0), log_delta=st.floats(-300.0, -0.01))
def test_segment_is_the_bisected_bracket(log_k: float, log_eps0: float, log_delta: float) -> None:
    atoms = LossAtoms.binomial(k=max(1, int(10.0**log_k)), eps0=10.0**log_eps0, delta0=0.0)
    positive = int(np.searchsorted(atoms._neg_loss, 0.0, side="left"))
    log_t = log_delta * math.log(10.0)
    if positive == 0:
        return
    assert _segment(atoms, log_t, positive) == _bisected(atoms, log_t, positive)


def test_the_guess_is_used_and_confirmed():
    """Not a test that passes by always bisecting: the prefix-sum guess is the bracket here."""
    atoms = LossAtoms.binomial(k=1000, eps0=0.1, delta0=0.0)
    positive = int(np.searchsorted(atoms._neg_loss, 0.0, side="left"))
    calls: list[float] = []
    lo, hi = _segment(atoms, math.log(1e-5), positive, calls)
    assert len(calls) == 2 and (lo, hi) == _bisected(atoms, math.log(1e-5), positive)


def test_a_remembered_epsilon_is_the_one_solved_and_never_shared_by_a_copy() -> None:
    """``LossAtoms.epsilon`` remembers its answers per atom set: the same floats as a fresh atom set
    solving the same δ, and a ``replace`` copy with another infinite-loss mass (``ExactPair``'s lower
    curves) solves afresh: a shared memory would hand it the original's ε."""
    from dataclasses import replace

    atoms = LossAtoms.binomial(k=200, eps0=0.1, delta0=1e-4)
    first = atoms.epsilon(0.05)
    assert atoms.epsilon(0.05) == first == LossAtoms.binomial(k=200, eps0=0.1, delta0=1e-4).epsilon(0.05)
    assert first is not None and 0.05 in atoms._cache
    lower = replace(atoms, p_inf=0.0)
    fresh = LossAtoms(loss=atoms.loss, log_p=atoms.log_p, p_inf=0.0, terms=atoms.terms)
    assert lower.epsilon(0.05) == fresh.epsilon(0.05) < first


class _Unremembered(LossAtoms):
    """The atom set as it was before ``_values``: every evaluation computed."""

    def log_finite_part(self, eps: float) -> float:
        return self._log_finite_part(eps)


@settings(max_examples=150, deadline=None)
@given(log_k=st.floats(0.0, 4.0), log_eps0=st.floats(-4.0, 1.0), delta0=st.sampled_from([0.0, 1e-9, 1e-6]),
       log_deltas=st.lists(st.floats(-300.0, -0.01), min_size=1, max_size=4))
def test_remembered_evaluations_give_the_same_floats(log_k: float, log_eps0: float, delta0: float,
                                                     log_deltas: list[float]) -> None:
    """ε(δ) and δ(ε) with ``log_finite_part`` remembered are those of an atom set computing every
    evaluation afresh, bit for bit, asked in the same order (a solve, then its caller's δ(ε))."""
    k, eps0 = max(1, int(10.0**log_k)), 10.0**log_eps0
    atoms = LossAtoms.binomial(k=k, eps0=eps0, delta0=delta0)
    plain = _Unremembered(loss=atoms.loss, log_p=atoms.log_p, p_inf=atoms.p_inf, terms=atoms.terms)
    for log_delta in log_deltas:
        delta = 10.0**log_delta
        eps, ref = atoms.epsilon(delta), plain.epsilon(delta)
        assert eps == ref
        if eps is not None:
            assert atoms.delta(eps) == plain.delta(eps)
            assert atoms.delta(eps / 2) == plain.delta(eps / 2)


def test_a_solve_evaluates_its_answer_once() -> None:
    """The remembered evaluations are used: solving ε(δ) and reading δ(ε) there computes two
    evaluations fewer than the same work done afresh (the last Newton step's, ``_round_up``'s,
    the caller's)."""
    counts: dict[type, int] = {}
    for cls in (LossAtoms, _Unremembered):
        atoms = cls(**{f: getattr(LossAtoms.binomial(k=1000, eps0=0.1, delta0=0.0), f)
                       for f in ("loss", "log_p", "p_inf", "terms")})
        calls: list[float] = []
        inner = atoms._log_finite_part
        object.__setattr__(atoms, "_log_finite_part",
                           lambda e, inner=inner, calls=calls: calls.append(e) or inner(e))
        eps = atoms.epsilon(1e-5)
        assert eps is not None
        atoms.delta(eps)
        counts[cls] = len(calls)
    assert counts[LossAtoms] <= counts[_Unremembered] - 2
