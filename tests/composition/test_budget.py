"""Bounded work per request for classic composition (issue 14, item 3).

The optimal composition estimates its cost before it starts (``optimal.cost``); over the
budget the row shows the best closed form as the upper bound it is, with the reason. The
binomial keeps O(√k) atoms, lumping the negligible tails so that δ(ε) can only grow. No test
here measures time: they assert on the estimated cost and on the route taken.
"""

from __future__ import annotations

import itertools
import json
import math

import numpy as np
import pytest
from scipy.special import logsumexp

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, OverBudget
from dpviz.cli import main
from dpviz.composition import METHODS, advanced, basic, homogeneous, kov, optimal, parse_levels, zcdp
from dpviz.composition.atoms import LossAtoms
from dpviz.composition.binomial_atoms import away_from_zero, binomial_atom_count, binomial_log_weights
from dpviz.composition.levels import Level
from dpviz.guarantee import Kind
from dpviz.numerics import logsumexp as fast_logsumexp
from dpviz.numerics import logsumexp_rows
from dpviz.regions import method_region
from dpviz.validation import ParameterError
from tests.oracles import assert_sound_and_tight, mp_zcdp_epsilon

TINY = Budget(seconds=1e-9, max_bytes=1e18)
"""Below every estimate: forces the cheap route."""
UNLIMITED = Budget(seconds=1e12, max_bytes=1e18)


def _full_binomial(k: int, eps0: float, delta0: float) -> LossAtoms:
    """The k + 1 atoms summed one by one, as before the tails were lumped (the reference)."""
    l_idx = np.arange(k + 1, dtype=float)
    log_free = k * math.log1p(-delta0)
    return LossAtoms(loss=away_from_zero((k - 2.0 * l_idx) * eps0),
                     log_p=binomial_log_weights(k, eps0) + log_free, p_inf=-math.expm1(log_free))


# ---------------------------------------------------------------- the cheap route over budget

HETERO = parse_levels("0.1:1e-6:100,0.5:0:20,0.03:0:200")  # 101 · 21 · 201 = 426,321 atoms


@pytest.mark.parametrize("levels", [HETERO, homogeneous(k=5000, eps0=0.05, delta0=1e-7)],
                         ids=["heterogeneous", "homogeneous"])
@pytest.mark.parametrize("delta", [1e-3, 0.05])
def test_over_budget_shows_the_best_closed_form_and_it_is_sound(levels, delta: float) -> None:
    """The stand-in is the smallest closed-form ε (zCDP included: at δ = 1e-3 here it is 11.26
    against KOV's 12.35), labelled upper with its own source, and it is never below the exact
    optimum (computed here, where it is cheap)."""
    cheap = optimal.epsilon_for_delta(levels, delta=delta, budget=TINY)
    exact = optimal.epsilon_for_delta(levels, delta=delta, budget=UNLIMITED)
    closed = [m.epsilon_for_delta(levels, delta=delta) for m in (basic, advanced, kov, zcdp)]
    best = min((g for g in closed if g.feasible), key=lambda g: g.epsilon)
    assert cheap.kind is Kind.UPPER and cheap.epsilon == best.epsilon and cheap.source == best.source
    assert cheap.reason.startswith("exact optimum not computed") and "budget" in cheap.reason
    assert exact.kind is Kind.EXACT and cheap.epsilon >= exact.epsilon


@pytest.mark.parametrize("epsilon", [6.0, 12.0, 30.0])
def test_over_budget_delta_is_the_smallest_closed_form_delta_and_sound(epsilon: float) -> None:
    cheap = optimal.delta_for_epsilon(HETERO, epsilon=epsilon, budget=TINY)
    exact = optimal.delta_for_epsilon(HETERO, epsilon=epsilon, budget=UNLIMITED)
    closed = [m.delta_for_epsilon(HETERO, epsilon=epsilon) for m in (basic, advanced, kov, zcdp)]
    assert cheap.kind is Kind.UPPER
    assert cheap.delta == min(g.delta for g in closed if g.feasible)
    assert cheap.delta >= exact.delta


def test_no_closed_form_either_is_infeasible_with_both_reasons() -> None:
    levels = homogeneous(k=10, eps0=1.0, delta0=1e-3)  # every closed form needs δ ≥ 1 − (1 − δ0)^k
    g = optimal.epsilon_for_delta(levels, delta=1e-6, budget=TINY)
    assert g.kind is Kind.INFEASIBLE and "not computed" in g.reason and "no closed form" in g.reason


def test_methods_pass_the_budget_to_the_optimum_only() -> None:
    out = {key: m.epsilon_for_delta(HETERO, delta=1e-3, budget=TINY) for key, m in METHODS.items()}
    assert out["optimal"].kind is Kind.UPPER and out["optimal"].reason
    assert all(out[key].reason is None for key in ("basic", "advanced", "kov"))


def test_curves_leave_out_optima_that_were_not_computed() -> None:
    from dpviz.composition.curves import delta_vs_epsilon, epsilon_vs_k

    s = epsilon_vs_k(eps0=0.1, delta0=0.0, delta=1e-5, ks=[10, 100], budget=TINY)
    assert np.isnan(s.y["optimal"]).all() and np.isfinite(s.y["kov"]).all()
    d = delta_vs_epsilon(HETERO, epsilons=[1.0, 3.0], budget=TINY)
    assert np.isnan(d.y["optimal"]).all()


def test_the_optimal_region_refuses_over_budget() -> None:
    with pytest.raises(OverBudget, match="budget must be at least"):
        method_region("optimal", homogeneous(k=100, eps0=0.1, delta0=0.0), budget=TINY)


def test_cli_budget_flag(capsys) -> None:
    assert main(["compose", "--levels", "0.1:1e-6:300,0.5:0:40", "--delta", "1e-3", "--budget", "1e-9"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["optimal"]["kind"] == "upper" and "raise --budget" in out["optimal"]["reason"]
    assert out["optimal"]["epsilon"] == min(out[m]["epsilon"] for m in ("basic", "advanced", "kov", "zcdp"))
    assert main(["compose", "--eps0", "0.1", "--k", "10", "--delta", "1e-5", "--budget", "soon"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "budget must be" in err


# ---------------------------------------------------------------- lumped binomial tails

@pytest.mark.parametrize(("k", "eps0", "delta0"), [(3000, 0.1, 0.0), (20_000, 0.01, 1e-9), (500, 2.0, 0.0),
                                                    (4000, 0.0, 1e-6)])
def test_lumped_tails_never_lower_delta_and_change_nothing(k: int, eps0: float, delta0: float) -> None:
    """Against all k + 1 atoms: δ(ε) (in log space, where the tails live) is never lower, and
    equal to within the summation error; ε(δ) never lower either."""
    lumped = LossAtoms.binomial(k=k, eps0=eps0, delta0=delta0)
    full = _full_binomial(k, eps0, delta0)
    assert lumped.loss.size <= full.loss.size and lumped.loss[0] == full.loss[0]  # the top atom is kept
    tol = 2 * full.relative_error
    for eps in np.linspace(0.0, k * eps0, 41):
        a, b = lumped.log_finite_part(float(eps)), full.log_finite_part(float(eps))
        if b == -math.inf:
            continue
        assert a >= b - tol, (eps, a, b)
        assert a <= b + tol or b < -740, (eps, a, b)  # beyond doubles the lumps may dominate
    for delta in (1e-2, 1e-10, 1e-100, 1e-300):
        e_l, e_f = lumped.epsilon(delta), full.epsilon(delta)
        if e_f is not None:
            assert e_l is not None and e_l >= e_f * (1 - 1e-12)


def test_ten_million_mechanisms_keep_about_forty_root_k_atoms() -> None:
    """Memory grows like √k: 126,000 atoms at k = 10^7 (10^7 + 1 before), within the page budget."""
    n = binomial_atom_count(10_000_000, 1e-8)
    assert 100_000 < n < 40 * math.sqrt(10_000_000) + 10
    c = optimal.cost(homogeneous(k=10_000_000, eps0=1e-8, delta0=0.0))
    assert budgets.PAGE.admits(c) and c.bytes < 64 * 2**20


def test_theorem3_terms_at_ten_million_fit() -> None:
    """``gce --k 10000000`` said "levels must be at most 4,000,000 atoms": the HBW Thm 3 terms
    (one full and k − i subsampled mechanisms) now keep a few hundred thousand atoms."""
    e_s = math.log1p(math.expm1(0.1) / 2)
    levels = (Level(epsilon=0.1, delta=0.0, count=1), Level(epsilon=e_s, delta=0.0, count=10_000_000 - 1))
    assert optimal.atom_count(levels) < optimal.MAX_ATOMS / 10
    assert optimal.loss_atoms.__wrapped__(levels).epsilon(1e-5) is not None


def test_the_hard_size_limit_still_says_too_large() -> None:
    levels = parse_levels("0.1:0:3000,0.2:0:3000,0.3:0:3000")
    assert optimal.atom_count(levels) > optimal.MAX_ATOMS
    with pytest.raises(ParameterError, match="atoms"):
        optimal.loss_atoms(levels)


def test_logsumexp_replica_is_bit_identical_to_scipy() -> None:
    rng = np.random.default_rng(7)
    arrays = [np.array([]), np.array([-np.inf, -np.inf]), np.array([np.inf, 0.0]), np.array([2.0, 2.0])]
    for n in (1, 2, 7, 1000, 20_000):
        for scale, shift in ((1e-3, 0.0), (1.0, -700.0), (300.0, 0.0)):
            a = rng.normal(scale=scale, size=n) + shift
            a[rng.integers(n)] = -np.inf if n > 2 else a[0]
            arrays.append(a)
    for a in arrays:
        ours = fast_logsumexp(a)
        assert ours == float(logsumexp(a)) or (math.isnan(ours) and a.size)
    for n in (1, 5, 300, 3000):  # rows of a matrix (the exact threshold sums reduce two rows at once)
        m = rng.normal(scale=50.0, size=(2, n))
        m[rng.random((2, n)) < 0.3] = -np.inf
        m[1] = -np.inf if n == 5 else m[1]
        assert np.array_equal(logsumexp_rows(m), logsumexp(m, axis=1))


# ---------------------------------------------------------------- same numbers within budget

README = {  # python -m dpviz compose …, printed by the code before the budget (commit 72b018a)
    ("--eps0", "0.1", "--delta0", "1e-6", "--k", "2000", "--delta", "1e-2"): {
        "basic": (200.0, 0.002), "advanced": (34.931397346381274, 0.01), "kov": (23.8856507491596, 0.01),
        "optimal": (19.94488666148196, 0.009999999999999336)},
    ("--levels", "0.1:1e-6:30,0.5:0:10", "--delta", "1e-4"): {
        "basic": (8.0, 2.9999999999999997e-05), "advanced": (10.878633146864576, 0.0001),
        "kov": (8.0, 0.0001), "optimal": (6.085806755833635, 9.999999999999552e-05)},
}


ROUNDED_UP = ("advanced", "kov")  # KOV: its square-root terms (Σε, basic's value, is not)
"""Methods whose ε has been rounded up (numerics.round_up) since README's numbers were printed."""

README_ZCDP = {  # zCDP came after README's numbers: (ρ = Σ count·ε_l²/2, Σδ_l), Steinke Thm 18/22
    ("--eps0", "0.1", "--delta0", "1e-6", "--k", "2000", "--delta", "1e-2"): (2000 * 0.1**2 / 2, 2000e-6),
    ("--levels", "0.1:1e-6:30,0.5:0:10", "--delta", "1e-4"): (30 * 0.1**2 / 2 + 10 * 0.5**2 / 2, 30e-6),
}


@pytest.mark.parametrize("argv", list(README))
def test_readme_examples_print_the_same_numbers(capsys, argv: tuple[str, ...]) -> None:
    assert main(["compose", *argv]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == set(METHODS)
    got = {key: (g["epsilon"], g["delta"]) for key, g in out.items() if key in README[argv]}
    for key in ROUNDED_UP:  # the closed forms are now rounded up past their float error: never below
        (eps, delta), (want_eps, want_delta) = got.pop(key), README[argv][key]
        assert want_eps <= eps <= want_eps * (1 + 1e-14) and delta == want_delta
    assert got == {key: v for key, v in README[argv].items() if key not in ROUNDED_UP}
    assert out["optimal"]["kind"] == "exact"
    # zCDP: Prop. 14's infimum at δ′ = δ − Σδ_l, from 50-digit mpmath (never below it, within 1e-9)
    rho, sum_delta = README_ZCDP[argv]
    target = float(argv[-1])
    assert out["zcdp"]["kind"] == "upper" and out["zcdp"]["delta"] == pytest.approx(target, rel=1e-12)
    assert_sound_and_tight(out["zcdp"]["epsilon"], mp_zcdp_epsilon(rho, target - sum_delta))
    assert out["optimal"]["epsilon"] <= out["zcdp"]["epsilon"] <= out["advanced"]["epsilon"]


@pytest.mark.parametrize("levels", [homogeneous(k=100_000, eps0=0.05, delta0=0.0), HETERO,
                                    homogeneous(k=1_000_000, eps0=0.01, delta0=1e-9)])
def test_within_budget_the_page_and_cli_answers_are_the_exact_ones(levels) -> None:
    for delta in (1e-5, 1e-200):
        ref = optimal.epsilon_for_delta(levels, delta=delta, budget=UNLIMITED)
        for b in (budgets.PAGE, budgets.CLI, None):
            assert optimal.epsilon_for_delta(levels, delta=delta, budget=b) == ref


# ---------------------------------------------------------------- the cost model

def test_cost_grows_with_k_and_with_levels() -> None:
    ks = [1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000]
    costs = [optimal.cost(homogeneous(k=k, eps0=0.1, delta0=0.0)) for k in ks]
    assert all(a.seconds <= b.seconds and a.bytes <= b.bytes for a, b in itertools.pairwise(costs))
    counts = [10, 100, 1000, 3000]
    het = [optimal.cost((Level(epsilon=0.1, delta=0.0, count=n), Level(epsilon=0.3, delta=0.0, count=n)))
           for n in counts]
    assert all(a.seconds < b.seconds for a, b in itertools.pairwise(het))
    three = optimal.cost(parse_levels("0.1:0:100,0.3:0:100,0.7:0:100"))
    assert three.seconds > het[1].seconds  # one more level multiplies the atoms


def test_budget_allows_is_monotone_and_the_reason_names_both_limits() -> None:
    b = Budget(seconds=2.0, max_bytes=256 * 2**20)
    assert b.allows(1.9, 100) and not b.allows(2.1, 100) and not b.allows(1.0, 300 * 2**20)
    assert b.reason(Cost(40.0, 2**30, "5 atoms")) == (
        "not computed (5 atoms): about 40 s of work, above the 2 s budget and about 1.0 GiB of memory, "
        "above the 256 MiB budget (raise --budget)")
    assert budgets.PAGE.seconds < budgets.CLI.seconds and budgets.PAGE.max_bytes < budgets.CLI.max_bytes
    assert budgets.from_seconds("120").max_bytes == 2 * budgets.CLI.max_bytes
    assert budgets.from_seconds("86400").max_bytes == 4 * budgets.CLI.max_bytes  # memory stays bounded
    assert budgets.from_seconds("0.5").max_bytes == budgets.CLI.max_bytes
    with pytest.raises(ParameterError, match="budget"):
        budgets.from_seconds("-1")
