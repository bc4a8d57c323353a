"""One forward and one inverse transform per composition (``dpviz.pld.power``, docs/MATH.md §17).

Independent routes: exact integer convolutions (masses that are small integers times a power of two,
composed in Python integers), the Gaussian closed form (Steinke Cor. 8/10; a mix of Gaussians is a
Gaussian with μ² = Σ k_i/σ_i²), and hypothesis sweeps. Every interval must contain the truth.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpviz.mechanisms import gaussian
from dpviz.pld import entries, power
from dpviz.pld.accountant import epsilon_bounds
from dpviz.pld.grid import GridPLD

SCALE_BITS = 12


def _integer_grid(n: int, seed: int) -> np.ndarray:
    """Integer masses of a bell-shaped law with a long thin tail (integers < 2^12)."""
    rng = np.random.default_rng(seed)
    x = np.arange(n)
    bell = np.exp(-0.5 * ((x - n / 3) / (n / 12)) ** 2) * 4000
    return (np.floor(bell) + rng.integers(0, 3, n)).astype(np.int64)


def _exact_power(parts: list[tuple[np.ndarray, int]]) -> tuple[list[int], int]:
    """Π_i a_i^{*k_i} in Python integers, and the total number of factors (each mass = int·2^-12)."""
    out = [1]
    factors = 0
    for ints, k in parts:
        a = [int(v) for v in ints]
        for _ in range(k):
            res = [0] * (len(out) + len(a) - 1)
            for i, u in enumerate(out):
                if u:
                    for j, v in enumerate(a):
                        res[i + j] += u * v
            out = res
        factors += k
    return out, factors


def _exact_delta(masses: list[float], losses: np.ndarray, eps: float) -> float:
    return math.fsum(m * -math.expm1(eps - x) for m, x in zip(masses, losses, strict=True) if x > eps)


@pytest.mark.parametrize("tilt_at", [None, 2.0])
@pytest.mark.parametrize("pessimistic", [True, False])
def test_power_against_exact_integer_convolution(pessimistic: bool, tilt_at: float | None) -> None:
    """Two parts, 7 + 3 factors, a support of 3,500 bins (above ``DIRECT_BINS``: the transform path).
    The tilted round-off bound holds entrywise-summed against the exact product, and δ read off the
    grid is on the sound side of the exact δ at every ε."""
    h = 0.01
    a, b = _integer_grid(300, 1), _integer_grid(260, 2)
    parts = [(a, 7), (b, 3)]
    grids = [(GridPLD(h=h, lo=-100, mass=ints * 2.0**-SCALE_BITS / 1000.0, p_inf=0.0,
                      pessimistic=pessimistic), k) for ints, k in parts]
    assert sum(g.mass.size * k for g, k in grids) > power.DIRECT_BINS
    got = power.compose_power(grids, tail=1e-300, tilt_at=tilt_at)
    exact_ints, factors = _exact_power(parts)
    scale = (2.0**-SCALE_BITS / 1000.0) ** factors
    exact = [v * scale for v in exact_ints]
    lo = sum(g.lo * k for g, k in grids)
    losses = (lo + np.arange(len(exact))) * h
    # round-off: Σ |ĉ − c|·e^{θ·loss} ≤ err over the grid the result keeps
    idx = got.lo - lo + np.arange(got.mass.size)
    diff = np.abs(got.mass - np.asarray(exact)[idx]) * np.exp(got.tilt * got.losses)
    assert float(diff.sum()) <= got.err
    for eps in np.linspace(-1.0, float(losses[-1]), 25):
        truth = _exact_delta(exact, losses, float(eps))
        if pessimistic:
            assert got.delta(float(eps)) >= truth
        else:
            assert got.delta(float(eps)) <= truth


def test_direct_path_is_exact_up_to_its_relative_bound() -> None:
    """Small supports are summed directly: randomized response composes exactly (err = 0)."""
    g = GridPLD(h=0.5, lo=-1, mass=np.array([0.25, 0.0, 0.75]), p_inf=0.0, pessimistic=True)
    out = power.compose_power([(g, 20)], tail=1e-300)
    assert out.err == 0.0
    exact, _ = _exact_power([(np.array([1, 0, 3]), 20)])
    ref = np.asarray([v / 4.0**20 for v in exact])
    assert np.all(out.mass >= ref[out.lo + 20: out.lo + 20 + out.mass.size] * (1 - 1e-15))
    assert np.allclose(out.mass, ref[out.lo + 20: out.lo + 20 + out.mass.size], rtol=1e-13, atol=0)


def _gaussian_mix_contains(sigmas: list[float], ks: list[int], delta: float) -> None:
    parts = [(gaussian.loss_law(sigma=s), k) for s, k in zip(sigmas, ks, strict=True)]
    g = epsilon_bounds(parts, delta=delta)
    # a mix of Gaussians is one Gaussian of μ² = Σ k/σ² (Steinke Cor. 8/10)
    sigma = 1.0 / math.sqrt(sum(k / s**2 for s, k in zip(sigmas, ks, strict=True)))
    lo, hi = gaussian.epsilon_bracket(delta=delta, sigma=sigma)
    assert g.lower <= hi and lo <= g.upper, (g.lower, g.upper, lo, hi, g.detail)


@pytest.mark.parametrize(("sigmas", "ks", "delta"), [
    ([30.0], [10_000], 1e-6),  # many steps: the power's round-off is charged K times
    ([100.0], [1_000_000], 1e-10),
    ([2.0, 5.0], [50, 300], 1e-8),  # a mix: one power per part, one product
    ([1.0, 3.0, 8.0], [3, 40, 500], 1e-12),
])
def test_gaussian_mixes_contain_the_closed_form(sigmas, ks, delta) -> None:
    _gaussian_mix_contains(sigmas, ks, delta)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(log_sigmas=st.lists(st.floats(math.log(0.7), math.log(40.0)), min_size=1, max_size=3),
       log_ks=st.lists(st.floats(0.0, math.log(2e4)), min_size=3, max_size=3),
       log_delta=st.floats(math.log(1e-12), math.log(1e-3)))
def test_gaussian_mix_sweep_contains_the_closed_form(log_sigmas, log_ks, log_delta) -> None:
    sigmas = [math.exp(v) for v in log_sigmas]
    ks = [max(1, round(math.exp(v))) for v in log_ks[: len(sigmas)]]
    _gaussian_mix_contains(sigmas, ks, math.exp(log_delta))


def test_an_infinite_normaliser_says_nothing() -> None:
    """A tilt whose e^{Λ(θ)} leaves the float range gives err = ∞, never a bound read as one."""
    g = GridPLD(h=0.1, lo=-1, mass=np.array([0.5, 0.5]), p_inf=0.0, pessimistic=True, err=math.inf, tilt=1e4)
    assert not g.informative and g.delta(0.5) == 1.0 and g.epsilon(1e-6) is None


def test_a_subnormal_top_mass_keeps_the_normaliser_finite() -> None:
    """Regression (planner, discrete Gaussian, ε = 9.72, δ = 2.26e-09, k = 107): a grid whose
    largest loss carries a subnormal mass made SciPy's weighted logsumexp divide by that weight and
    overflow to λ = ∞ (a RuntimeWarning, an error under pytest; the page's exception box). The tilted
    composition must agree with the untilted one in the tail it is for."""
    j = np.arange(169) - 85  # a discrete Gaussian's losses on every other bin, tails down to 2e-323
    mass = np.where(j % 2 == 0, np.exp(-0.11037 * j.astype(float) ** 2 - 0.9835), 0.0)
    assert mass[-2] > 0.0 and mass[-2] < 1e-320 and mass[-1] == 0.0
    g = GridPLD(h=0.4414878504672898, lo=-84, mass=mass, p_inf=5e-323, pessimistic=True)
    tilted = power.compose_power([(g, 107)], tail=2.26e-14, tilt_at=103.49417808173632)
    plain = power.compose_power([(g, 107)], tail=2.26e-14)
    assert tilted.informative and math.isfinite(tilted.err)
    for eps in (80.0, 100.0):  # the tail the tilt is for (δ ≈ 2e-4 and 1.4e-8)
        assert tilted.delta(eps) == pytest.approx(plain.delta(eps), rel=2e-3)


@pytest.mark.parametrize("tilt_at", [None, 0.5])
def test_per_frequency_round_off_bound_against_exact_binomials(tilt_at: float | None) -> None:
    """Many factors (docs/MATH.md §17.4, per frequency): (1/4, 1/2, 1/4)^{*8000} ∗ (1/2, 1/2)^{*4000}
    is Binomial(20000, 1/2), exact as C(20000, j)/2^20000 (Python's int division rounds correctly).
    The round-off bound charged holds entry by entry summed against the exact masses, and it is the
    per-frequency one: below the uniform K·κ·√N·‖w‖₂ of the same transform."""
    h = 0.01
    grids = [(GridPLD(h=h, lo=0, mass=np.array([0.25, 0.5, 0.25]), p_inf=0.0, pessimistic=True), 8000),
             (GridPLD(h=h, lo=0, mass=np.array([0.5, 0.5]), p_inf=0.0, pessimistic=True), 4000)]
    got = power.compose_power(grids, tail=1e-300, tilt_at=tilt_at)
    n = 20000
    idx = got.lo + np.arange(got.mass.size)
    exact = np.array([math.comb(n, int(j)) / 2**n for j in idx])
    diff = np.abs(got.mass - exact) * np.exp(got.tilt * got.losses)
    assert float(diff.sum()) <= got.err
    # the uniform bound with N ≥ the grid kept (so κ and √N at least these), ‖w‖₂ ≥ 1/2 (every
    # tilted step keeps a mass ≥ 1/2 of its total) and the untilting factor e^{Σkλ} ≥ 1 (λ ≥ 0 for
    # θ ≥ 0 on losses ≥ 0)
    size = got.mass.size
    uniform = 12000 * 20 * 2.0**-53 * math.log2(size) * math.sqrt(size) * 0.5
    assert got.err < uniform / 2
    losses = got.losses
    tail_above = float(np.sum(exact)) - 1.0  # ≤ 0: mass beyond the grid kept is ignored below
    assert tail_above <= 1e-12
    for eps in np.linspace(float(losses[0]), float(losses[-1]), 9):
        truth = math.fsum(float(m) * -math.expm1(eps - x)
                          for m, x in zip(exact, losses, strict=True) if x > eps)
        assert got.delta(float(eps)) >= truth


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 20_000), st.floats(-30, 1), st.integers(0, 2**32 - 1))
def test_truncation_reads_the_same_index_off_a_prefix(n: int, log_tail: float, seed: int) -> None:
    """``grid._within`` (running sums chunk by chunk, each carrying the sum before it) gives the index
    of the whole cumulative sum, so truncation keeps the same bins."""
    from dpviz.pld.grid import _within

    rng = np.random.default_rng(seed)
    m = rng.random(n) * 10.0 ** rng.uniform(-20, 0, n)
    tail = 10.0**log_tail
    assert _within(m, tail) == int(np.searchsorted(np.cumsum(m), tail, side="right"))


@pytest.mark.parametrize("theta", [0.0, 3.7, 539.2])
def test_untilt_on_a_run_is_the_general_route(theta: float) -> None:
    """``entries.untilt`` on kept entries that form one run (slices, in place) gives the masses and ζ of the
    general route (gather, scatter) bit for bit; a ragged set takes the general route itself."""
    rng = np.random.default_rng(int(theta))
    out = rng.random(5000) * np.exp(-rng.random(5000) * 40)
    s_lo, h, offset, norm, log_total = -1234, 3.7e-6, 1.3e-7, 12.5, 1e-13
    for nz in (np.arange(100, 4000), np.flatnonzero(rng.random(5000) < 0.7)):
        mass = np.zeros(out.size)
        zeta = entries.untilt(out, nz, mass, s_lo=s_lo, h=h, offset=offset, theta=theta, norm=norm,
                             log_total=log_total)
        losses = (s_lo + nz) * h + offset
        tilt_x = theta * losses
        ref = np.zeros(out.size)
        ref[nz] = np.exp(np.minimum(np.log(out[nz]) + (norm - tilt_x), log_total))
        ref_zeta = 2.0 * power.U * (abs(norm) + max(abs(float(tilt_x[0])), abs(float(tilt_x[-1]))) + 3.0)
        assert np.array_equal(mass, ref) and zeta == ref_zeta
        run = entries.kept_run(np.isin(np.arange(out.size), nz))  # the run as (a, b), in ``out`` itself
        scratch, mass = out.copy(), np.zeros(out.size)
        zeta = entries.untilt(scratch, run, mass, s_lo=s_lo, h=h, offset=offset, theta=theta, norm=norm,
                             log_total=log_total, scratch=True)
        assert np.array_equal(mass, ref) and zeta == ref_zeta


@pytest.mark.parametrize("seed", range(6))
def test_run_is_the_kept_indices(seed: int) -> None:
    """``entries.kept_run`` gives (a, b) exactly where the true entries are the one run a … b − 1,
    and otherwise their indices (``np.flatnonzero``)."""
    rng = np.random.default_rng(seed)
    n = 300
    for _ in range(200):
        kept = np.zeros(n, dtype=bool)
        a, b = sorted(rng.integers(0, n + 1, 2))
        kept[a:b] = True
        if rng.random() < 0.5:  # a ragged set: a few entries flipped
            kept[rng.integers(0, n, rng.integers(1, 4))] ^= True
        got = entries.kept_run(kept)
        idx = np.flatnonzero(kept)
        contiguous = idx.size > 0 and idx[-1] - idx[0] + 1 == idx.size
        if contiguous:
            assert got == (int(idx[0]), int(idx[-1]) + 1)
        else:
            assert not isinstance(got, tuple) and np.array_equal(got, idx)


def test_exp_is_zero_below_the_underflow_cutoff() -> None:
    """``compose_power`` exponentiates ln Π m only at or above ``UNDERFLOW_LOG`` (zeros elsewhere):
    binary64 e^x is exactly 0 there, so the product is the whole exp's, bit for bit."""
    cut = power.UNDERFLOW_LOG
    x = np.concatenate([np.linspace(-5000.0, cut, 200_001), [np.nextafter(cut, -np.inf), cut, -1e300]])
    assert not np.any(np.exp(x))
    rng = np.random.default_rng(3)
    log_m = rng.uniform(-900.0, 0.0, 4001)
    log_m[[5, 17]] = [np.nan, -np.inf]
    weights = rng.random(4001) * 1e3
    whole = np.exp(log_m) * weights
    masked = weights * np.exp(log_m, out=np.zeros(log_m.size), where=~(log_m < cut))
    assert np.array_equal(whole, masked, equal_nan=True)


@pytest.mark.parametrize("seed", range(4))
def test_curve_readings_unchanged_by_its_kept_negation(seed: int) -> None:
    """A grid's δ-curve starts at ``losses[0]`` (computed without the loss array), and ``solve``'s
    binary search on −D kept once finds the index the search on a freshly negated D finds."""
    rng = np.random.default_rng(seed)
    m = rng.random(3000) * np.exp(-rng.random(3000) * 30)
    g = GridPLD(h=3.7e-6 * (1 + seed), lo=int(rng.integers(-9000, 9000)), mass=m, p_inf=0.0,
                pessimistic=True, offset=float(rng.random() * 1e-6))
    assert g.curve.l0 == float(g.losses[0])
    c = g.curve
    for t in np.concatenate([rng.random(50) * float(c.d[0]), [0.0, float(c.d[-1]), float(c.d[0])]]):
        j = int(np.searchsorted(-c.d, -t, side="left"))
        assert j == int(np.searchsorted(c.rising, -t, side="left"))


@pytest.mark.parametrize("seed", range(5))
def test_log_mgf_bound_per_argument_whatever_the_others(seed: int) -> None:
    """``log_mgf_many`` gives each t the same float alone or among others, so the Chernoff edges'
    bounds at θ ± t are reused by the tail bounds (``_tail_bound``'s memo): the same tail masses."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        n = int(rng.integers(1, 3000))
        loss = np.sort(rng.normal(0.0, rng.uniform(1e-4, 2.0), n))
        m = rng.random(n) * np.exp(-rng.random(n) * 50)
        log_m = np.log(m / m.sum())
        part = power._Part(loss=loss, log_m=log_m, k=int(rng.integers(1, 10_000)),
                           span=float(np.abs(loss).max()), search_loss=loss, search_log_m=log_m)
        ts = rng.normal(0.0, 100.0, int(rng.integers(1, 6)))
        together = power.log_mgf_many([part], ts)
        for i, t in enumerate(ts):
            assert power.log_mgf_many([part], np.array([t]))[0] == together[i]
        theta, t, x = abs(float(ts[0])), abs(float(rng.normal(0.0, 50.0))) + 1e-3, float(rng.normal())
        for sign in (1.0, -1.0):
            memo = {theta + sign * t: float(power.log_mgf_many([part], np.array([theta + sign * t]))[0])}
            assert power._tail_bound([part], theta, 1.5, x, t, sign, memo) == \
                power._tail_bound([part], theta, 1.5, x, t, sign)


@pytest.mark.parametrize("seed", range(4))
def test_cumulants_plain_exponential_is_the_masked_one(seed: int) -> None:
    """``cumulants`` exponentiates in place where no weight is below e^{−700}, else drops those by a
    mask: the same floats as the masked route everywhere (here written out as the reference)."""
    import math

    rng = np.random.default_rng(seed)
    for _ in range(300):
        n = int(rng.integers(1, 1025))
        loss = np.sort(rng.normal(0.0, rng.uniform(1e-4, 1.0), n))
        log_m = np.log(rng.random(n)) - rng.random(n) * rng.choice([10.0, 800.0])  # some below e^{−700}
        log_m -= log_m.max()
        part = power._Part(loss=loss, log_m=log_m, k=int(rng.integers(1, 10_000)),
                           span=float(np.abs(loss).max()), search_loss=loss, search_log_m=log_m)
        for a in (0.0, float(rng.normal(0.0, 300.0)), float(rng.normal(0.0, 3.0))):
            e = a * loss + log_m
            top = float(e.max())
            e -= top
            w = np.exp(e, out=np.zeros_like(e), where=e > -700.0)
            total = float(w.sum())
            w /= total
            mean = float(np.einsum("i,i->", w, loss))
            dev = loss - mean
            want = (part.k * (top + math.log(total)), part.k * mean,
                    part.k * float(np.einsum("i,i,i->", w, dev, dev)))
            assert power.cumulants([part], a) == want


def test_a_vanishing_finite_mass_keeps_the_alias_bound_finite() -> None:
    """Regression (Mechanisms, heterogeneous rows: ε = 5, δ = 0.999, count = 10^7): the finite mass
    of the composition, 10^{−3k}, is e^{norm} with norm < −700; the untilted alias bound
    (below + above)·e^{−norm} raised OverflowError (an exception box). Normalised in the exponent, it
    is finite, and the composition is all at +∞: δ(ε) = 1 at every ε."""
    j = np.arange(201) - 100
    mass = np.exp(-0.5 * (j / 30.0) ** 2)
    mass *= 1e-3 / mass.sum()
    g = GridPLD(h=0.05, lo=-100, mass=mass, p_inf=0.999, pessimistic=True)
    for k in (1000, 10**6):
        c = power.compose_power([(g, k)], tail=1e-12)
        assert c.informative and c.p_inf >= 1.0
        assert c.delta(1.0) == 1.0 and c.delta(50.0) == 1.0
