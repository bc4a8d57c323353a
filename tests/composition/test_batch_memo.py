"""The batched sums (``atom_batch.log_finite_parts``) read and fill the values each atom set remembers
(``LossAtoms._values``), the memory ``log_finite_part`` uses one pair at a time: a search's last
evaluation is then its caller's δ(ε) at the answer (``optimal.epsilons_for_delta``) without the ε
being handed back beside the answer. The numbers are those computed afresh, bit for bit."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dpviz.composition import atom_batch, homogeneous, optimal
from dpviz.composition.atom_batch import log_finite_parts
from dpviz.composition.atoms import LossAtoms, epsilons
from tests.composition import legacy_solve


@dataclass(frozen=True, eq=False)
class _Counted(LossAtoms):
    """An atom set that notes the ε at which ``log_finite_part`` is computed one pair at a time."""

    computed: list[float] = field(default_factory=list, init=False, repr=False, compare=False)

    def _log_finite_part(self, eps: float) -> float:
        self.computed.append(eps)
        return super()._log_finite_part(eps)


def _counted(k: int, eps0: float, delta0: float) -> _Counted:
    a = LossAtoms.binomial(k=k, eps0=eps0, delta0=delta0)
    return _Counted(loss=a.loss, log_p=a.log_p, p_inf=a.p_inf, terms=a.terms)


@pytest.fixture
def batched(monkeypatch: pytest.MonkeyPatch) -> list[tuple[object, float]]:
    """Every pair the batched path computes (``atom_batch._computed``), in order."""
    seen: list[tuple[object, float]] = []
    inner = atom_batch._computed

    def counting(requests):  # type: ignore[no-untyped-def]
        seen.extend(requests)
        return inner(requests)

    monkeypatch.setattr(atom_batch, "_computed", counting)
    return seen


def test_the_batched_path_fills_and_reads_the_memory(batched: list[tuple[object, float]]) -> None:
    """A batch computes each pair once and remembers it: asked again, one at a time or in a batch,
    nothing is computed; a batch of remembered and new pairs computes only the new ones."""
    atoms, other = _counted(300, 0.05, 1e-6), _counted(40, 0.3, 0.0)
    eps = [0.0, 0.4, 1.1, 2.5, -1.0]
    first = log_finite_parts([(atoms, e) for e in eps] + [(other, 0.7)])
    assert len(batched) == 6 and atoms.computed == other.computed == []
    assert set(atoms._values) == set(eps) and set(other._values) == {0.7}
    assert [atoms.log_finite_part(e) for e in eps] == first[:5] and atoms.computed == []
    assert log_finite_parts([(atoms, e) for e in reversed(eps)]) == first[4::-1] and len(batched) == 6
    again = log_finite_parts([(atoms, 0.4), (atoms, 3.0), (other, 0.7), (other, 0.9)])
    assert batched[6:] == [(atoms, 3.0), (other, 0.9)]
    assert again == [first[1], atoms._log_finite_part(3.0), first[5], other._log_finite_part(0.9)]
    before = len(atoms.computed)
    one_new = log_finite_parts([(atoms, 0.4), (atoms, 5.0)])
    assert atoms.computed[before:] == [5.0] and len(batched) == 8  # one new pair: computed alone
    assert one_new == [first[1], atoms._log_finite_part(5.0)] and 5.0 in atoms._values


def test_the_caller_reads_the_searches_answers_from_memory(batched: list[tuple[object, float]]) -> None:
    """After searches side by side, δ's finite part at each answer is remembered: asking for all of
    them at once computes nothing, and they are the floats computed afresh."""
    sets = [_counted(k, 0.1, 1e-7) for k in (3, 30, 300, 3000)]
    found = epsilons([(a, 1e-5) for a in sets])
    assert found == [legacy_solve.solve(a, 1e-5) for a in sets]
    done = len(batched), [len(a.computed) for a in sets]
    parts = log_finite_parts([(a, e) for a, e in zip(sets, found, strict=True) if e is not None])
    assert (len(batched), [len(a.computed) for a in sets]) == done
    assert parts == [a._log_finite_part(e) for a, e in zip(sets, found, strict=True) if e is not None]


def test_the_optimum_of_many_k_evaluates_each_answer_once(batched: list[tuple[object, float]],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``optimal.epsilons_for_delta``: no ε is computed twice on one atom set, alone or in a batch (the
    last Newton step, ``_round_up``'s check and the Guarantee's δ share one evaluation), and each
    answer's value is remembered."""
    alone: list[tuple[object, float]] = []
    inner = LossAtoms._log_finite_part

    def counting(self: LossAtoms, eps: float) -> float:
        alone.append((self, eps))
        return inner(self, eps)

    many = [homogeneous(k=k, eps0=0.17, delta0=1e-10) for k in (2, 9, 50, 400, 1500)]
    sets = [optimal.loss_atoms(lv) for lv in many]
    for a in sets:
        a._values.clear()
        a._cache.clear()
    monkeypatch.setattr(LossAtoms, "_log_finite_part", counting)
    got = optimal.epsilons_for_delta(many, delta=1e-6)
    computed = [(id(a), e) for a, e in batched + alone]
    assert len(computed) == len(set(computed)) > 0
    monkeypatch.setattr(LossAtoms, "_log_finite_part", inner)
    for g, a in zip(got, sets, strict=True):
        assert g.epsilon in a._values
        assert g.delta == min(a.p_inf + math.exp(a._log_finite_part(g.epsilon)), 1.0)


@settings(max_examples=150, deadline=None)
@given(log_k=st.floats(0.0, 4.5), log_eps0=st.floats(-4.0, 1.0), delta0=st.sampled_from([0.0, 1e-8, 1e-3]),
       eps=st.lists(st.one_of(st.floats(-2.0, 30.0), st.sampled_from([0.0, 1e-300])),
                    min_size=2, max_size=40))
def test_batched_values_on_fresh_sets_are_computed_ones(log_k: float, log_eps0: float, delta0: float,
                                                        eps: list[float]) -> None:
    """On an atom set that remembers nothing yet, the batch's floats are ``_log_finite_part``'s, and a
    second batch (read from memory) gives them again."""
    atoms = LossAtoms.binomial(k=max(1, int(10.0**log_k)), eps0=10.0**log_eps0, delta0=delta0)
    top = float(atoms.loss[0])
    eps = [e if i % 3 else float(atoms.loss[int(abs(e) * 1e3) % atoms.loss.size]) for i, e in enumerate(eps)]
    eps.append(top)
    want = [atoms._log_finite_part(e) for e in eps]
    assert log_finite_parts([(atoms, e) for e in eps]) == want == log_finite_parts([(atoms, e) for e in eps])
    assert atoms.deltas(np.array(eps)) == [atoms.p_inf + math.exp(v) for v in want]
