"""The exact optimum's largest k by two exact evaluations (``dpviz.planner.optimal_k``, issue 9):
the same answer, check and next-value check as the generic search, bit for bit, with far fewer
exact δ(ε) evaluations (counted, not timed)."""

from __future__ import annotations

import pytest

from dpviz import budget as budgets
from dpviz.composition import atoms, homogeneous, optimal
from dpviz.planner import composition as pc
from dpviz.planner import optimal_k
from dpviz.planner.result import step_budget

# (ε0, ε, δ, δ0): answers from 10^3 to the 10^7 limit, tiny δ, δ0 > 0
CASES = [
    (1e-4, 1.0, 1e-5, 0.0),  # 7,185,142 (issue 9's slow case)
    (1e-4, 10.0, 1e-5, 0.0),  # every k up to 10^7 fits
    (1e-3, 1.0, 1e-5, 0.0),  # 71,854
    (3e-4, 2.0, 1e-12, 0.0),
    (1e-3, 0.5, 1e-3, 1e-12),
    (2e-2, 3.0, 1e-8, 0.0),
    (1e-5, 0.1, 1e-5, 0.0),
]


def _generic(monkeypatch: pytest.MonkeyPatch, **kw: object) -> dict:
    """The plan by the generic search alone (the module does not recognise the optimum)."""
    with monkeypatch.context() as m:
        m.setattr(pc, "optimal", None)
        return pc.max_k(methods=["optimal"], **kw)["optimal"].to_json()  # type: ignore[arg-type]


@pytest.mark.parametrize("budget", [None, budgets.PAGE], ids=["cli", "page"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(f"{x:g}" for x in c))
def test_same_plan_as_the_generic_search(monkeypatch: pytest.MonkeyPatch, case: tuple, budget) -> None:
    eps0, epsilon, delta, delta0 = case
    kw = dict(eps0=eps0, epsilon=epsilon, delta=delta, delta0=delta0, budget=budget)
    fast = pc.max_k(methods=["optimal"], **kw)["optimal"].to_json()  # type: ignore[arg-type]
    assert fast == _generic(monkeypatch, **kw)


def test_the_slow_case_takes_two_exact_evaluations(monkeypatch: pytest.MonkeyPatch) -> None:
    """k = 7,185,142 took ten exact δ(ε) sums and two full forward checks; now the atoms are built
    twice (k and k + 1), and both the decisions and the checks are read from them."""
    built: list[int] = []
    real = atoms.LossAtoms.binomial.__func__  # type: ignore[attr-defined]

    def counting(cls, *, k: int, **kw: object) -> atoms.LossAtoms:
        built.append(k)
        return real(cls, k=k, **kw)

    monkeypatch.setattr(atoms.LossAtoms, "binomial", classmethod(counting))
    optimal.loss_atoms.cache_clear()
    p = pc.max_k(eps0=1e-4, epsilon=1.0, delta=1e-5, methods=["optimal"])["optimal"]
    assert p.value == 7_185_142
    assert sorted(built) == [7_185_142, 7_185_143]
    assert optimal.loss_atoms.cache_info().currsize == 0  # no full atom set was built for a check


@pytest.mark.parametrize("k", [1_000, 20_000, 71_854, 71_855, 1_000_003, 7_185_142, 7_185_143])
@pytest.mark.parametrize("delta0", [0.0, 1e-13])
def test_forward_check_is_the_optimum_bit_for_bit(k: int, delta0: float) -> None:
    eps0 = 1e-3 if k < 1_000_000 else 1e-4
    fast = optimal_k.LargestK(eps0=eps0, delta0=delta0, epsilon=1.0, delta=1e-5, budget=None, top=10**7,
                              fallback_score=lambda n: pytest.fail("fallback"),  # type: ignore[arg-type,return-value]
                              fallback_forward=lambda n: pytest.fail("fallback"))  # type: ignore[arg-type,return-value]
    levels = homogeneous(k=k, eps0=eps0, delta0=delta0)
    assert fast.forward(k) == optimal.epsilon_for_delta(levels, delta=1e-5)
    assert fast.score(k) == pc.score_fn(pc.METHODS["optimal"], epsilon=1.0, delta=1e-5)(levels)


def test_crossing_outside_the_kept_atoms_falls_back() -> None:
    """Atoms kept above a = 0.9 cannot give ε(δ) ≈ 0.45: the full forward check answers."""
    calls: list[int] = []
    fast = optimal_k.LargestK(eps0=1e-3, delta0=0.0, epsilon=1.0, delta=1e-5, budget=None, top=10**7,
                              fallback_score=lambda n: 0.0,
                              fallback_forward=lambda n: calls.append(n) or optimal.epsilon_for_delta(
                                  homogeneous(k=n, eps0=1e-3, delta0=0.0), delta=1e-5))
    fast._atoms[20_000] = atoms.LossAtoms.binomial(k=20_000, eps0=1e-3, delta0=0.0, above=0.9)
    g = fast.forward(20_000)
    assert calls == [20_000]
    assert g == optimal.epsilon_for_delta(homogeneous(k=20_000, eps0=1e-3, delta0=0.0), delta=1e-5)


def test_over_budget_reach_uses_the_generic_search(monkeypatch: pytest.MonkeyPatch) -> None:
    """On the page the exact sum is over the share of the budget near k = 10^7: the score there is a
    closed form's, not monotone with the exact one, so the generic search decides (same answer)."""
    kw = dict(eps0=1e-4, epsilon=1.0, delta=1e-5, delta0=0.0, budget=budgets.PAGE)
    fast = optimal_k.LargestK(eps0=1e-4, delta0=0.0, epsilon=1.0, delta=1e-5,
                              budget=step_budget(budgets.PAGE), top=10**7, fallback_score=lambda n: 0.0,
                              fallback_forward=lambda n: None)  # type: ignore[arg-type,return-value]
    assert fast.search() is None
    assert pc.max_k(methods=["optimal"], **kw)["optimal"].to_json() == _generic(monkeypatch, **kw)  # type: ignore[arg-type]
