"""HBW Thm 3 at the best split of δ over its terms (issue 12 item 3; docs/MATH.md §12).

Independent routes: ``theorem3(split=…)`` evaluates any split term by term through the
composition methods, so a brute-force search over splits (a grid refined by scipy for k = 2,
a grid over the simplex for k = 3) bounds the optimum from above; Cor. 7 is the closed form
of the basic case; the exact worst case bounds every value from below in its proved direction.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from dpviz.composition import optimal
from dpviz.gce import hypotheses as H
from dpviz.gce import paper_bounds as PB
from dpviz.gce import summary
from dpviz.gce.delta_split import SPLIT_MARGIN, allocate, optimal_curve
from dpviz.gce.exact import exact_pair

SPLIT_METHODS = ("advanced", "optimal")


def _at_split(k: int, eps0: float, delta0: float, method: str, delta: float, split: list[float]) -> float:
    g = PB.theorem3(k=k, eps0=eps0, delta0=delta0, method=method, split=split)
    return g.epsilon if g.feasible and g.delta <= delta else np.inf  # type: ignore[return-value]


def _brute_k2(eps0: float, delta0: float, method: str, delta: float) -> float:
    """min over δ̂_1 of ε at (δ̂_1, δ̂_2) with w_1 δ̂_1 + w_2 δ̂_2 = δ: a grid, then scipy near its best."""
    w = np.exp(PB._weights(2, 2))

    def value(d1: float) -> float:
        return _at_split(2, eps0, delta0, method, delta, [d1, (delta - w[0] * d1) / w[1] * (1 - 1e-15)])

    xs = np.geomspace(delta * 1e-6 / w[0], delta / w[0] * (1 - 1e-9), 120)
    vals = [value(x) for x in xs]
    i = int(np.argmin(vals))
    r = minimize_scalar(value, bounds=(xs[max(i - 1, 0)], xs[min(i + 1, xs.size - 1)]), method="bounded",
                        options={"xatol": 1e-14 * delta})
    return min(min(vals), float(r.fun))


@pytest.mark.parametrize("method", SPLIT_METHODS)
@pytest.mark.parametrize(("eps0", "delta0", "delta"), [(0.5, 0.0, 0.1), (1.0, 1e-3, 1e-2), (0.3, 1e-6, 1e-4)])
def test_best_split_is_the_brute_force_optimum_for_two_terms(method, eps0, delta0, delta) -> None:
    """Measured: within 2e-8 of the brute force (the split is planned for δ(1 − 1e-9), and the
    brute force is itself only as good as scipy's 1e-14 δ tolerance)."""
    best = PB.theorem3_best(k=2, eps0=eps0, delta0=delta0, method=method, delta=delta)
    brute = _brute_k2(eps0, delta0, method, delta)
    assert best.feasible and best.delta <= delta
    assert best.epsilon <= brute * (1 + 1e-7)
    assert best.epsilon >= brute * (1 - 1e-7)  # and no better than a split can be (it is one)


@pytest.mark.parametrize("method", SPLIT_METHODS)
def test_best_split_beats_a_grid_over_the_simplex_for_three_terms(method) -> None:
    k, eps0, delta0, delta = 3, 0.5, 1e-4, 1e-2
    w = np.exp(PB._weights(k, k))
    fr = np.linspace(0.02, 0.98, 25)
    grid = min(_at_split(k, eps0, delta0, method, delta,
                         [a * delta / w[0], b * delta / w[1], (1 - a - b) * delta / w[2] * (1 - 1e-12)])
               for a in fr for b in fr if a + b < 1)
    best = PB.theorem3_best(k=k, eps0=eps0, delta0=delta0, method=method, delta=delta)
    assert np.isfinite(grid) and best.epsilon <= grid


CASES = [(2, 0.5, 0.0, 0.1), (10, 0.3, 1e-6, 1e-4), (30, 0.1, 1e-8, 1e-6), (200, 0.05, 1e-9, 1e-5),
         (5000, 0.02, 0.0, 1e-6)]


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), CASES)
@pytest.mark.parametrize("method", PB.THEOREM3_METHODS)
def test_best_split_is_never_worse_than_the_common_slack(k, eps0, delta0, delta, method) -> None:
    best, common = PB.theorem3_pair(k=k, eps0=eps0, delta0=delta0, method=method, delta=delta)
    assert common.note == "common δ̂ for every term" or not common.feasible
    if common.feasible:
        assert best.feasible and best.epsilon <= common.epsilon and best.delta <= delta
    if best.feasible:
        assert best.delta <= delta and "best split" in best.note


@pytest.mark.parametrize("method", SPLIT_METHODS)
def test_best_split_is_monotone_in_delta_and_eps0(method) -> None:
    k, eps0, delta0 = 25, 0.2, 1e-7
    deltas = np.geomspace(1e-5, 1e-1, 9)
    eps = [PB.theorem3_best(k=k, eps0=eps0, delta0=delta0, method=method, delta=float(d)).epsilon
           for d in deltas]
    assert all(b <= a * (1 + 1e-9) for a, b in itertools.pairwise(eps))
    by_eps0 = [PB.theorem3_best(k=k, eps0=e, delta0=delta0, method=method, delta=1e-4).epsilon
               for e in (0.05, 0.1, 0.2, 0.4)]
    assert all(b > a for a, b in itertools.pairwise(by_eps0))


def test_basic_composition_at_cor7_delta_reproduces_cor7() -> None:
    """issue 12 item 3: with δ0 = 1e-6, k = 20 the common δ̂ is infeasible at exactly the δ where
    HBW Cor. 7 (Thm 3 with basic composition) holds; the best split is Cor. 7 there, and the
    independent term-by-term sum (each term its own Σδ) agrees."""
    k, eps0, delta0 = 20, 0.1, 1e-6
    c7 = PB.corollary7(k=k, eps0=eps0, delta0=delta0)
    rows = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=c7.delta)
    assert not rows["theorem3_basic_common"].feasible  # today's common-δ̂ value: no value here
    best = rows["theorem3_basic"]
    assert (best.epsilon, best.delta, best.directions) == (c7.epsilon, c7.delta, "both")
    terms = PB.theorem3(k=k, eps0=eps0, delta0=delta0, method="basic")  # Σ over the 20 terms
    assert best.epsilon == pytest.approx(terms.epsilon, rel=1e-12)
    assert best.delta == pytest.approx(terms.delta, rel=1e-12)
    below = PB.theorem3_best(k=k, eps0=eps0, delta0=delta0, method="basic", delta=c7.delta * (1 - 1e-9))
    assert not below.feasible and "Cor. 7" in below.reason
    # optimal composition of the terms at the same δ: feasible, and no worse than Cor. 7
    opt = rows["theorem3_optimal"]
    assert opt.feasible and opt.epsilon <= c7.epsilon and not rows["theorem3_optimal_common"].feasible


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), [(2, 0.5, 0.0, 0.1), (6, 0.4, 1e-4, 1e-2),
                                                           (12, 0.2, 1e-7, 1e-5)])
@pytest.mark.parametrize("method", PB.THEOREM3_METHODS)
def test_best_split_holds_against_the_exact_worst_case(k, eps0, delta0, delta, method) -> None:
    """Soundness in the direction(s) the label claims; at k = 2 the best optimal split is forward
    only (docs/MATH.md §5.4's counterexample)."""
    pair = exact_pair(H.point_zero(k=k), H.uniform_nonzero(k=k), eps0=eps0, delta0=delta0)
    best = PB.theorem3_best(k=k, eps0=eps0, delta0=delta0, method=method, delta=delta)
    if not best.feasible:
        return
    slack = 1e-12 * best.delta + 1e-15
    assert pair.delta_forward(best.epsilon) <= best.delta + slack
    if best.directions == "both":
        assert pair.delta_reverse(best.epsilon) <= best.delta + slack


def test_the_counterexample_split_is_labelled_forward() -> None:
    best = PB.theorem3_best(k=2, eps0=0.5, delta0=0.0, method="optimal", delta=0.1)
    assert best.epsilon == pytest.approx(0.329, abs=5e-4) and best.directions == "forward"


@pytest.mark.parametrize(("k", "eps0", "delta0", "delta"), [(10, 0.3, 1e-6, 1e-4), (30, 0.1, 1e-8, 1e-6),
                                                           (200, 0.05, 1e-9, 1e-5)])
def test_optimal_split_equalises_the_tail_probability_under_the_reference(k, eps0, delta0, delta) -> None:
    """docs/MATH.md §12: at the optimum one λ has Q_i(L_i > ε̂_i) ≤ λ ≤ Q_i(L_i ≥ ε̂_i) for every term
    (the KKT certificate, sufficient for this convex problem). Q-masses from the terms' own atoms."""
    n = min(k, PB.TERMS)
    levels = [PB._term_levels(k=k, i=i, eps0=eps0, delta0=delta0, with_first=True) for i in range(1, n + 1)]
    atoms = [optimal.loss_atoms.__wrapped__(lv) for lv in levels]
    curves = [optimal_curve(a) for a in atoms]
    found = allocate(curves, np.exp(PB._weights(k, n)), delta * (1 - SPLIT_MARGIN))
    assert found is not None
    split, taken, inside = found
    above, at_or_above, chosen = [], [], []
    for i, a in enumerate(atoms):
        eps = a.epsilon(float(split[i])) if i == inside else float(np.log(curves[i][0][taken[i]]))
        chosen.append(eps)
        q = np.exp(a.log_p - a.loss)
        above.append(q[a.loss > eps * (1 + 1e-12) + 1e-15].sum())
        at_or_above.append(q[a.loss >= eps * (1 - 1e-12) - 1e-15].sum())
    assert max(above) <= min(at_or_above) * (1 + 1e-9)
    assert max(chosen) > min(chosen) * (1 + 1e-6)  # the terms really sit at different ε̂_i


@pytest.mark.parametrize("delta", [1e-280, 1e-300, 1e-320])
@pytest.mark.parametrize(("k", "eps0", "delta0"), [(1, 0.0, 0.0), (3, 0.5, 0.0)])
def test_best_split_at_a_delta_near_underflow(k, eps0, delta0, delta) -> None:
    """The advanced curve samples slacks 30 decades below δ: at δ = 1e-300 that range ended at 0
    (numpy's geomspace raised); now it is clamped to positive floats and the answer still holds δ."""
    best, common = PB.theorem3_pair(k=k, eps0=eps0, delta0=delta0, method="advanced", delta=delta)
    for g in (best, common):
        assert not g.feasible or (g.delta <= delta and np.isfinite(g.epsilon) and g.epsilon >= 0)
    rows = summary.uniform_nonzero(k=k, eps0=eps0, delta0=delta0, delta=delta)
    assert all(not r.feasible or r.delta <= delta for r in rows.values())
