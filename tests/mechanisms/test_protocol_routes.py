"""The mechanism protocol, the registry and the routes (issue 11 item 1, issue 8).

Exact composition of finite pairs against brute-force enumeration (``tests.oracles``), δ = 0 and δ at ε,
replace-one subsampling against numerical integration, mixes against their parts, and the
headline never above a cheaper sound route.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats

from dpviz.guarantee import Kind, Status
from dpviz.mechanisms import routes as R
from dpviz.mechanisms.base import law_max_loss
from dpviz.mechanisms.registry import MECHANISMS, make, part, parts
from dpviz.mechanisms.subsampling import gaussian_replace_one
from dpviz.validation import ParameterError
from tests import oracles

EXAMPLES = {  # one valid parameter set per registered mechanism
    "gaussian": {"sigma": 1.3}, "laplace": {"scale": 2.0}, "geometric": {"eps0": 0.4, "sensitivity": 2},
    "randomized-response": {"eps0": 0.7, "categories": 3}, "canonical": {"eps0": 0.5, "delta0": 1e-3},
    "finite": {"p": "0.5,0.3,0.2", "q": "0.2,0.3,0.5"}, "discrete-gaussian": {"sigma": 1.5},
}


# ---------------------------------------------------------------- the protocol
def test_every_registered_mechanism_has_an_example() -> None:
    assert set(EXAMPLES) == set(MECHANISMS)


@pytest.mark.parametrize("key", sorted(MECHANISMS))
def test_contract(key: str) -> None:
    """Params are keyed specs; the law is proper; max_loss is the law's; the per-step guarantee
    holds on the exact law; RDP is non-negative where finite."""
    cls = MECHANISMS[key]
    assert all(p.key and p.label and p.help for p in cls.params)
    assert set(cls.required) <= {p.key for p in cls.params}
    m = make(key, **EXAMPLES[key])
    law = m.law
    assert math.fsum(law.p) + law.p_inf == pytest.approx(1.0, abs=1e-9) or law.continuous is not None
    assert m.max_loss == law_max_loss(law) or m.max_loss == pytest.approx(law_max_loss(law), rel=1e-12)
    step = m.step_guarantee(1e-6)
    for d in law.both_directions():
        assert float(d.delta(step.epsilon)[0]) <= step.delta + 1e-15
    curve = m.rdp_curve((2, 8, 64))
    assert np.all((curve >= 0) | np.isinf(curve))
    assert m.label and m.describe()["mechanism"] == key


@pytest.mark.parametrize("key", sorted(MECHANISMS))
def test_missing_and_unknown_parameters_name_the_field(key: str) -> None:
    cls = MECHANISMS[key]
    for required in cls.required:
        values = {k: v for k, v in EXAMPLES[key].items() if k != required}
        with pytest.raises(ParameterError) as exc:
            make(key, **{**values, required: None})
        assert exc.value.field == required
    with pytest.raises(ParameterError) as exc:
        make(key, **EXAMPLES[key], bogus=1)
    # the unknown key is the value, never the field name: a key from a visitor's JSON would reach
    # Markdown outside the notice's code span (issue 22)
    assert (exc.value.field, exc.value.value) == ("parameter", "bogus")


# ---------------------------------------------------------------- exact vs brute force
def _outcomes(m, reverse=False):
    law = m.law.reversed() if reverse else m.law
    return oracles.law_pair(law)


def _brute_delta(pairs: list[tuple[object, int]], eps: float) -> float:
    best = 0.0
    for reverse in (False, True):
        factors = [_outcomes(m, reverse) for m, k in pairs for _ in range(k)]
        p, q = oracles.product_pair(factors)
        best = max(best, oracles.hockey(p, q, eps))
    return best


FINITE_CASES = [
    [(make("finite", p="0.6,0.3,0.1", q="0.2,0.3,0.5"), 3)],
    [(make("finite", p="0.7,0.3,0", q="0.1,0.4,0.5"), 2)],  # an outcome with P = 0 (loss −∞)
    [(make("finite", p="0.5,0.5", q="0.9,0.1"), 4)],
    [(make("randomized-response", eps0=0.8, categories=4), 4)],
    [(make("geometric", eps0=0.3, sensitivity=2), 3)],
    [(make("canonical", eps0=0.4, delta0=0.01), 5)],
    [(make("finite", p="0.6,0.4", q="0.3,0.7"), 2), (make("randomized-response", eps0=0.5, categories=3), 2)],
    [(make("randomized-response", eps0=1.0, sampling_rate=0.3), 3)],
]


@pytest.mark.parametrize("pairs", FINITE_CASES, ids=lambda p: " + ".join(f"{m.key}×{k}" for m, k in p))
@pytest.mark.parametrize("eps", [0.0, 0.2, 0.9, 2.5])
def test_exact_delta_at_epsilon_equals_enumeration(pairs, eps: float) -> None:
    g = R.exact(pairs, epsilon=eps)
    assert g.status is Status.OK and g.kind is Kind.EXACT
    truth = _brute_delta(pairs, eps)
    assert truth <= g.delta <= truth * (1 + 1e-9) + 1e-15


@pytest.mark.parametrize("pairs", FINITE_CASES, ids=lambda p: " + ".join(f"{m.key}×{k}" for m, k in p))
@pytest.mark.parametrize("delta", [1e-6, 0.02, 0.2])
def test_exact_epsilon_at_delta_is_the_smallest(pairs, delta: float) -> None:
    g = R.exact(pairs, delta=delta)
    if g.status is Status.IMPOSSIBLE:  # δ below the mass at +∞
        assert _brute_delta(pairs, 300.0) > delta
        return
    eps = g.epsilon
    assert _brute_delta(pairs, eps) <= delta * (1 + 1e-9)
    if eps > 1e-9:
        assert _brute_delta(pairs, eps * (1 - 1e-7)) > delta


def test_exact_beyond_the_atom_limit_is_not_computed_and_pld_answers() -> None:
    big = [(make("finite", p="0.5,0.3,0.2", q="0.2,0.3,0.5"), 3000)]  # off any lattice: count vectors
    assert R.exact(big, delta=1e-5).status is Status.NOT_COMPUTED
    key, g = R.best(R.routes(big, delta=1e-5))
    assert g.status is Status.OK and key in ("pld", "rdp", "generic", "pure")


def test_a_lattice_law_beyond_the_count_vectors_is_exact_inside_the_pld_interval() -> None:
    """3-ary randomized response, 3,000 steps: 4.5 million count vectors, 6,001 lattice points
    (``exact_route._lattice_power``)."""
    big = [(make("randomized-response", eps0=0.2, categories=3), 3000)]
    ex, pl = R.exact(big, delta=1e-5), R.pld(big, delta=1e-5)
    assert ex.status is Status.OK and ex.kind is Kind.EXACT
    assert pl.lower <= ex.epsilon <= pl.upper


def test_exact_and_pld_agree_on_a_lattice_law() -> None:
    pairs = [(make("geometric", eps0=0.25, sensitivity=3), 40)]
    ex = R.exact(pairs, delta=1e-6)
    pl = R.pld(pairs, delta=1e-6)
    # both certified: the exact route's masses carry its recursion's round-off bound (~1e-11 here)
    assert pl.lower * (1 - 1e-10) <= ex.epsilon <= pl.upper * (1 + 1e-10)


# ---------------------------------------------------------------- δ = 0 and δ at ε
def test_delta_zero_is_the_exact_largest_loss() -> None:
    lap = make("laplace", scale=0.5)
    _, g = R.best(R.routes([(lap, 7)], delta=0.0))
    assert g.kind is Kind.EXACT and g.epsilon == pytest.approx(14.0, rel=1e-15) and g.epsilon >= 14.0
    sub = make("laplace", scale=0.5, sampling_rate=0.2)
    _key, g = R.best(R.routes([(sub, 3)], delta=0.0))
    assert g.epsilon == pytest.approx(3 * math.log1p(0.2 * math.expm1(2.0)), rel=1e-12)
    assert R.pure([(make("gaussian", sigma=1.0), 3)], delta=0.0).status is Status.IMPOSSIBLE
    # the discrete Gaussian's loss is unbounded on ℤ, even where its cut tails underflow (σ = 1)
    dg = make("discrete-gaussian", sigma=1.0)
    assert dg.max_loss is None and dg.law.p_inf > 0
    assert R.pure([(dg, 1)], delta=0.0).status is Status.IMPOSSIBLE


def test_delta_zero_of_a_mix_of_asymmetric_pairs_sums_per_direction() -> None:
    """REVIEW R2: ε(0) = max over the neighbouring direction of Σ k·max L in that direction (the
    direction is common to all steps), not Σ of each part's max over both (5.52146 'exact')."""
    mix = [(make("finite", p="0.5,0.5", q="0.9,0.1"), 1), (make("finite", p="0.99,0.01", q="0.5,0.5"), 1)]
    # (Q, P) direction: ln(0.9/0.5) + ln(0.5/0.01) = ln 90; (P, Q): ln(0.5/0.1) + ln(0.99/0.5) = ln 9.9
    larger = math.log(0.9 / 0.5) + math.log(0.5 / 0.01)
    results = R.routes(mix, delta=0.0, compare=True)
    for route in ("pure", "exact", "pld"):
        g = results[route]
        assert g.kind is Kind.EXACT and g.epsilon == pytest.approx(larger, rel=1e-12), route
    assert results["pure"].epsilon == pytest.approx(4.49981, abs=1e-5) and results["pure"].epsilon >= larger
    _key, best = R.best(results)
    assert best.kind is Kind.EXACT and best.upper == pytest.approx(larger, rel=1e-12) and not best.note
    eps_given = R.pure(mix, epsilon=4.6)
    assert eps_given.kind is Kind.EXACT and eps_given.delta == 0.0  # 4.6 ≥ ε(0) = 4.49981 (was NOT_COMPUTED)


def test_bounded_laws_never_lose_to_a_pure_bound() -> None:
    """Issue 8: Laplace b = 0.5, q = 0.2, k = 3 at δ = 1e-14 has a finite ε ≤ kε0'."""
    sub = make("laplace", scale=0.5, sampling_rate=0.2)
    _key, g = R.best(R.routes([(sub, 3)], delta=1e-14))
    assert g.status is Status.OK and g.upper <= 3 * math.log1p(0.2 * math.expm1(2.0)) * (1 + 1e-12)


def test_gaussian_delta_at_epsilon_is_the_closed_form() -> None:
    from dpviz.mechanisms import gaussian

    pairs = [(make("gaussian", sigma=2.0), 30)]
    key, g = R.best(R.routes(pairs, epsilon=1.5), solved="delta")
    assert key == "analytic" and g.delta == gaussian.delta_for_epsilon(epsilon=1.5, sigma=2.0, k=30)
    pl = R.pld(pairs, epsilon=1.5)
    assert pl.lower <= g.delta <= pl.upper


# ---------------------------------------------------------------- replace-one
@pytest.mark.parametrize(("mu", "q"), [(1.0, 0.1), (0.5, 0.5), (2.0, 0.02)])
def test_replace_one_law_against_numerical_integration(mu: float, q: float) -> None:
    """δ(ε) of ((1−q)N(0,1) + qN(μ,1), (1−q)N(0,1) + qN(−μ,1)) integrated directly."""
    law = gaussian_replace_one(mu=mu, rate=q)
    for eps in (0.0, 0.05, 0.3, 1.0):
        def f(x, eps=eps):
            p = (1 - q) * stats.norm.pdf(x) + q * stats.norm.pdf(x - mu)
            r = (1 - q) * stats.norm.pdf(x) + q * stats.norm.pdf(x + mu)
            return max(0.0, p - math.exp(eps) * r)
        truth, _ = integrate.quad(f, -40, 40, points=[0.0, mu, -mu], limit=400, epsabs=1e-14)
        assert float(law.delta(eps)[0]) == pytest.approx(truth, rel=1e-6, abs=1e-13)


def test_replace_one_laplace_far_beyond_its_scale_has_finite_masses() -> None:
    """Δ/b = 10^5 on a fixed-size batch of 256 of 60,000 records (replace-one at q = m/n), reached by a
    walk of the Mechanisms page: e^{ℓ+c} − (1 − q) was ≤ 0 by round-off at ℓ = 0, the masses NaN
    and the PLD route failed ("math domain error"). The person's record decides almost every output:
    δ(100) = q up to e^{−5·10^4}, inside the certified interval."""
    from dpviz.mechanisms.laplace import replace_one_law
    from dpviz.pld import accountant

    q = 256 / 60_000
    law = replace_one_law(eps0=1e5, rate=q)
    v = np.array([0.0, 1e-12, 1.0, law.continuous.hi / 2])
    for f in (law.continuous.sf_p, law.continuous.cdf_p, law.continuous.sf_q, law.continuous.cdf_q):
        assert np.all(np.isfinite(f(v))) and np.all((f(v) >= 0) & (f(v) <= 1))
    g = accountant.delta_bounds([(law, 1)], epsilon=100.0)
    assert g.lower is not None and g.upper is not None
    assert g.lower <= q * (1 + 1e-12) and q * (1 - 1e-12) <= g.upper


def test_replace_one_at_rate_one_is_the_gaussian_of_twice_the_sensitivity() -> None:
    a = make("gaussian", sigma=1.5, sampling_rate=1.0, neighbouring="replace-one").law
    b = make("gaussian", sigma=1.5, sensitivity=2.0).law
    eps = np.array([0.0, 0.4, 2.0])
    np.testing.assert_allclose(a.delta(eps), b.delta(eps), rtol=1e-12)


def test_replace_one_costs_more_than_add_remove_and_its_rdp_is_sound() -> None:
    ar = [(make("gaussian", sigma=1.0, sampling_rate=0.01), 500)]
    ro = [(make("gaussian", sigma=1.0, sampling_rate=0.01, neighbouring="replace-one"), 500)]
    a, r = R.pld(ar, delta=1e-5), R.pld(ro, delta=1e-5)
    assert r.lower > a.upper
    assert R.rdp(ro, delta=1e-5).epsilon >= r.lower


def test_replace_one_is_refused_where_not_implemented() -> None:
    with pytest.raises(ParameterError) as exc:
        make("randomized-response", eps0=1.0, sampling_rate=0.1, neighbouring="replace-one")
    assert exc.value.field == "neighbouring"


@pytest.mark.parametrize("q", [0.3, 1.0])
def test_laplace_replace_one_against_numerical_integration(q: float) -> None:
    """((1−q)Lap(0) + qLap(1), (1−q)Lap(0) + qLap(−1)), b = 1, integrated piece by piece."""
    law = make("laplace", scale=1.0, sampling_rate=q, neighbouring="replace-one").law

    def g(x: float) -> float:
        return 0.5 * math.exp(-abs(x))

    for eps in (0.0, 0.2, 0.5, 1.5):
        def f(x: float, eps: float = eps) -> float:
            return max(0.0, (1 - q) * g(x) + q * g(x - 1) - math.exp(eps) * ((1 - q) * g(x) + q * g(x + 1)))
        truth = sum(integrate.quad(f, lo, hi, limit=200, epsabs=1e-15)[0]
                    for lo, hi in ((-60, -1), (-1, 0), (0, 1), (1, 61)))
        assert float(law.delta(eps)[0]) == pytest.approx(truth, rel=1e-8, abs=1e-14)
    top = math.log((1 - q + q * math.e) / (1 - q + q / math.e))
    assert law.p[0] > 0 and law.loss[0] == pytest.approx(top)  # the largest loss is an atom: pure DP


# ---------------------------------------------------------------- mixes
def test_a_mix_of_equal_parts_is_the_single_composition() -> None:
    rr = make("randomized-response", eps0=0.3)
    one = R.exact([(rr, 12)], delta=1e-6).epsilon
    two = R.exact([(rr, 5), (rr, 7)], delta=1e-6).epsilon
    assert two == pytest.approx(one, rel=1e-12)


def test_a_mix_of_gaussians_is_the_gaussian_of_the_summed_mu_squared() -> None:
    """Steinke Cor. 10: the mix is Gaussian with μ² = Σ k_i/σ_i²."""
    from dpviz.mechanisms import gaussian

    mix = [(make("gaussian", sigma=2.0), 10), (make("gaussian", sigma=5.0), 40)]
    mu = math.sqrt(10 / 4.0 + 40 / 25.0)
    lo, hi = gaussian.epsilon_bracket(delta=1e-6, sigma=1.0 / mu)
    g = R.pld(mix, delta=1e-6)
    assert g.lower <= hi and lo <= g.upper


def test_mix_parser_names_the_entry_and_field() -> None:
    m, c = part({"mechanism": "laplace", "scale": 2, "count": 3, "sampling_rate": 0.5})
    assert c == 3 and m.sampling_rate == 0.5
    for entry, field in [({"mechanism": "nope", "count": 1}, "spec[0].mechanism"),
                         ({"mechanism": "laplace", "scale": 1}, "spec[0].count"),
                         ({"mechanism": "laplace", "count": 1}, "spec[0].scale"),
                         ({"mechanism": "laplace", "scale": -1, "count": 1}, "spec[0].scale"),
                         ({"mechanism": "laplace", "scale": 1, "count": 0}, "spec[0].count"),
                         ({"mechanism": "laplace", "scale": 1, "count": 1, "x": 1}, "spec[0].parameter")]:
        with pytest.raises(ParameterError) as exc:
            part(entry)
        assert exc.value.field == field
    with pytest.raises(ParameterError) as exc:
        parts([{"mechanism": "laplace", "scale": 1, "count": 6_000_000}] * 2)
    assert exc.value.field == "spec"


# ---------------------------------------------------------------- the best route
@pytest.mark.parametrize("pairs", [
    [(make("randomized-response", eps0=0.1), 30)],
    [(make("laplace", scale=1.0, sampling_rate=0.2), 20)],
    [(make("gaussian", sigma=1.0, sampling_rate=0.01), 300)],
    [(make("canonical", eps0=0.2, delta0=1e-7), 50)],
], ids=lambda p: p[0][0].key)
def test_the_headline_is_never_above_a_cheaper_sound_route(pairs) -> None:
    results = R.routes(pairs, delta=1e-8)
    _key, g = R.best(results)
    for name in ("rdp", "generic", "pure"):
        r = results[name]
        if r.status is Status.OK:
            assert g.upper <= r.upper
    for r in results.values():
        if r.status is Status.OK and r.lower is not None and r.kind is not Kind.UPPER:
            assert r.lower <= g.upper * (1 + 1e-12)


# ---------------------------------------------------------------- found by fuzzing the CLI
def test_a_pair_with_no_finite_loss_is_impossible_not_a_crash() -> None:
    """P = (1, 0), Q = (0, 1): every outcome has infinite loss (the enumeration recursed forever)."""
    pairs = [(make("finite", p="1,0", q="0,1"), 10)]
    assert R.exact(pairs, delta=0.5).status is Status.IMPOSSIBLE
    assert R.exact(pairs, epsilon=1.0).delta == 1.0


def test_many_outcomes_per_step_leave_the_exact_route_to_the_grid() -> None:
    """Geometric Δ = 100 has 101 loss atoms: count vectors would take minutes to enumerate."""
    g = R.exact([(make("geometric", eps0=0.5, sensitivity=100), 3)], delta=0.1)
    assert g.status is Status.NOT_COMPUTED and "outcomes per step" in (g.reason or "")


def test_discrete_gaussian_sigma_floor_names_sigma() -> None:
    with pytest.raises(ParameterError) as exc:
        make("discrete-gaussian", sigma=1e-300)
    assert exc.value.field == "sigma"


# ---------------------------------------------------------------- replace-one on ℤ
def _lattice_pair(log_noise, shift: int, q: float, width: int = 600):
    x = np.arange(-width, width + 1, dtype=float)
    n = np.exp(log_noise(x))
    n = n / n.sum()
    n_minus = np.exp(log_noise(x - shift))
    n_plus = np.exp(log_noise(x + shift))
    z = np.exp(log_noise(x)).sum()
    return (1 - q) * n + q * n_minus / z, (1 - q) * n + q * n_plus / z


@pytest.mark.parametrize(("key", "params", "log_noise"), [
    ("geometric", {"eps0": 0.4, "sensitivity": 2}, lambda x: -0.4 * np.abs(x)),
    ("discrete-gaussian", {"sigma": 1.5, "sensitivity": 1}, lambda x: -(x**2) / (2 * 1.5**2)),
])
@pytest.mark.parametrize("q", [0.3, 1.0])
def test_lattice_replace_one_against_enumeration(key, params, log_noise, q: float) -> None:
    """((1−q)N + qN(·−Δ), (1−q)N + qN(·+Δ)) summed outcome by outcome on a wide window."""
    law = make(key, **params, sampling_rate=q, neighbouring="replace-one").law
    p, r = _lattice_pair(log_noise, params["sensitivity"], q)
    for eps in (0.0, 0.1, 0.4, 1.0, 2.0):
        truth = float(np.maximum(p - math.exp(eps) * r, 0.0).sum())
        assert float(law.delta(eps)[0]) == pytest.approx(truth, rel=1e-9, abs=1e-15)


def test_replace_one_at_rate_one_is_twice_the_sensitivity_on_z() -> None:
    eps = np.array([0.0, 0.3, 1.0, 1.5])
    cases = [("geometric", {"eps0": 0.4, "sensitivity": 2}, {"eps0": 0.4, "sensitivity": 4}),
             ("discrete-gaussian", {"sigma": 1.5, "sensitivity": 1}, {"sigma": 1.5, "sensitivity": 2})]
    for key, a, b in cases:
        ro = make(key, **a, sampling_rate=1.0, neighbouring="replace-one").law
        np.testing.assert_allclose(ro.delta(eps), make(key, **b).law.delta(eps), rtol=1e-12, atol=1e-300)


def test_geometric_replace_one_stays_pure() -> None:
    """Its loss is constant beyond |x| ≥ Δ: bounded, so δ = 0 has the exact finite ε."""
    m = make("geometric", eps0=0.4, sensitivity=2, sampling_rate=0.3, neighbouring="replace-one")
    top = math.log((0.7 + 0.3 * math.exp(0.8)) / (0.7 + 0.3 * math.exp(-0.8)))
    assert m.max_loss == pytest.approx(top, rel=1e-12)
    _, g = R.best(R.routes([(m, 5)], delta=0.0))
    assert g.kind is Kind.EXACT and g.epsilon == pytest.approx(5 * top, rel=1e-12)


def test_lattice_atoms_merge_and_agree_with_the_grid() -> None:
    """RR with 3 categories, k = 400: 80,601 count vectors merge onto 801 lattice points."""
    pairs = [(make("randomized-response", eps0=0.1, categories=3), 400)]
    g = R.exact(pairs, delta=1e-6)
    assert g.detail == "801 atoms"
    pl = R.pld(pairs, delta=1e-6)
    assert pl.lower - 1e-12 <= g.epsilon <= pl.upper + 1e-12


def test_the_canonical_pair_composes_exactly_at_large_k() -> None:
    """The binomial keeps ≈ 40√k atoms: exact at k = 10^6, and impossible where δ < 1 − (1 − δ0)^k."""
    g = R.exact([(make("canonical", eps0=0.01, delta0=1e-12), 1_000_000)], delta=1e-5)
    assert g.status is Status.OK and g.kind is Kind.EXACT
    parts_ = [(make("canonical", eps0=0.01, delta0=1e-9), 10_000_000)]
    results = R.routes(parts_, delta=1e-5)
    assert results["exact"].status is Status.IMPOSSIBLE and results["generic"].status is Status.IMPOSSIBLE
    assert R.best(results)[1].status is Status.IMPOSSIBLE


def test_rate_one_is_the_mechanism_itself() -> None:
    """q = 1 samples everyone: the Gaussian keeps its closed form (the analytic route)."""
    m = make("gaussian", sigma=1.0, sampling_rate=1.0)
    assert m == make("gaussian", sigma=1.0) and m.closed_form(10, delta=1e-5) is not None


def test_rdp_delta_at_epsilon_inverts_epsilon_at_delta() -> None:
    pairs = [(make("gaussian", sigma=1.2, sampling_rate=0.02), 500)]
    eps = R.rdp(pairs, delta=1e-6).epsilon
    assert R.rdp(pairs, epsilon=eps).delta <= 1e-6 * (1 + 1e-9)
    assert R.rdp(pairs, epsilon=eps * 0.99).delta > 1e-6


def test_generic_route_with_a_vacuous_per_step_delta_is_not_computed() -> None:
    """Replace-one by group privacy states δ0' = (1 + e^ε0)·qδ0, which can exceed 1 (σ = 0.3, q = 0.5):
    the generic route raised 'delta0 must be a number in [0, 1)', naming a field the user never gave."""
    m = make("gaussian", sigma=0.3, sampling_rate=0.5, neighbouring="replace-one")
    g = R.generic([(m, 1)], delta=1e-6)
    assert g.status is Status.NOT_COMPUTED and "δ0" in (g.reason or "")
    _key, best = R.best(R.routes([(m, 1)], delta=1e-6))
    assert best.status is Status.OK and best.upper is not None
