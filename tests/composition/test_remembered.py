"""ε(δ) remembered per atom set, and δ(ε) remembered per ε (``LossAtoms._cache``, ``_values``): the
same floats as an atom set computing every evaluation afresh (seed 004 KOV Thm 3.3)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition.atoms import LossAtoms


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
    """An atom set that remembers no evaluation: every one computed."""

    def log_finite_part(self, eps: float) -> float:
        self._values.clear()
        return super().log_finite_part(eps)


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
