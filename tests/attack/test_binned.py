"""The binned post-processing sampled from its composed law (docs/MATH.md §14.5): the same statistic
drawn step by step has the same law (two-sample KS, and a wrong law fails the same check), the
floating-point bound covers the FFT against direct sums, the certified ε stays below the proven ε,
and 10^6 trials at k = 10^4 are allowed (the per-step cap refused them)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import ks_2samp

from dpviz.attack import binned as B
from dpviz.attack import curve as C
from dpviz.attack import make_attack, run_attack
from dpviz.attack import sampling as S
from dpviz.attack.run import binned_law, sample, sampler_for
from dpviz.mechanisms.registry import make


def _step(key: str, noise: str, mu: float):
    """One step's loss draw of ``key`` in units of its noise (sensitivity μ, noise 1)."""
    return make(key, **{noise: 1.0, "sensitivity": mu}).loss_draw()


CASES = [
    ("laplace", {"scale": 1.0}, _step("laplace", "scale", 1.0)),
    ("gaussian", {"sigma": 1.0, "sampling_rate": 0.3},
     S.subsampled_step(_step("gaussian", "sigma", 1.0), 0.3)),
    ("laplace", {"scale": 2.0, "sampling_rate": 0.5},
     S.subsampled_step(_step("laplace", "scale", 0.5), 0.5)),
]
IDS = ["laplace", "subsampled-gaussian", "subsampled-laplace"]


def per_step_statistic(step: S.StepDraw, pair: B.BinnedPair, k: int, n: int, under_p: bool,
                       rng: np.random.Generator) -> np.ndarray:
    """h·Σ j_i with every step's loss drawn and put in its window (end windows open): the attacker's
    statistic computed from the outputs, without the composed law. (The clips at 1e-11 mass are
    invisible at this n.)"""
    losses = step(rng, n * k, under_p).reshape(n, k)
    j = np.clip(B.symbols(losses, pair.h), pair.lo, pair.lo + pair.p.size - 1)
    return j.sum(axis=1) * pair.h


@pytest.mark.parametrize("kind,params,step", CASES, ids=IDS)
def test_composed_law_is_the_law_of_the_per_step_statistic(kind, params, step):
    k, n = 6, 20_000
    a = make_attack(kind, k=k, trials=n, seed=5, delta=1e-3, **params)
    law, lattice = binned_law(a)
    one = B.bin_law(law, B.step_width(law, k, lattice))
    fast_in, fast_out, sampler = sample(a)
    assert not sampler.per_step and sampler.law_error > 0
    rng = np.random.default_rng(6)
    slow_in = per_step_statistic(step, one, k, n, True, rng)
    slow_out = per_step_statistic(step, one, k, n, False, rng)
    assert ks_2samp(fast_in, slow_in).pvalue > 1e-4
    assert ks_2samp(fast_out, slow_out).pvalue > 1e-4
    # a deliberately wrong law (one step more) fails the same check
    wrong = S.binned_sum(B.compose(one, k + 1), k + 1).draw(np.random.default_rng(7), n, True)
    assert ks_2samp(wrong, slow_in).pvalue < 1e-4


def test_cell_masses_are_a_pair_of_probability_laws():
    a = make_attack("gaussian", sigma=1.0, sampling_rate=0.01, k=100, trials=1000, seed=1, delta=1e-5)
    law, lattice = binned_law(a)
    one = B.bin_law(law, B.step_width(law, a.k, lattice))
    assert np.all(one.p >= 0) and np.all(one.q >= 0)
    assert abs(one.p.sum() - 1) <= one.err_p + 1e-15 and abs(one.q.sum() - 1) <= one.err_q + 1e-15
    # windows far finer than the step's spread (a subsampled loss is mostly within q of 0)
    assert np.count_nonzero(one.p > 1e-3) >= 20


def test_round_off_bound_covers_the_fft_against_direct_sums():
    a = make_attack("gaussian", sigma=1.0, sampling_rate=0.01, k=2, trials=1000, seed=1, delta=1e-5)
    law, lattice = binned_law(a)
    one = B.bin_law(law, B.step_width(law, 100, lattice))
    assert one.p.size > 1000  # the FFT path of _product
    two = B.compose(one, 2)
    direct = np.convolve(one.p, one.p)
    i0 = two.lo - 2 * one.lo
    kept = direct[i0:i0 + two.p.size].copy()
    kept[0] += direct[:i0].sum()
    kept[-1] += direct[i0 + two.p.size:].sum()
    diff = float(np.abs(kept - two.p).sum())
    assert diff <= two.err_p
    assert two.err_p < 1e-9  # and the bound is small enough to matter for nothing at N ≤ 10^7


def test_slack_lowers_the_certificate():
    rng = np.random.default_rng(3)
    s_in, s_out = rng.normal(1, 1, 4000), rng.normal(-1, 1, 4000)
    plain = C.certify(s_in, s_out, delta=0.0, confidence=0.9)
    padded = C.certify(s_in, s_out, delta=0.0, confidence=0.9, slack=0.01)
    assert padded.p_fa_upper == pytest.approx(plain.p_fa_upper + 0.01)
    assert padded.epsilon < plain.epsilon


@pytest.mark.parametrize("kind,params", [("laplace", {"scale": 10.0}),
                                         ("gaussian", {"sigma": 1.0, "sampling_rate": 0.01})],
                         ids=["laplace", "subsampled-gaussian"])
def test_a_million_trials_at_k_ten_thousand_stay_below_the_proven_epsilon(kind, params):
    # the per-step cap (5·10^7 step draws) refused this; the composed law costs one draw per trial
    a = make_attack(kind, k=10_000, trials=1_000_000, seed=1, delta=1e-5, **params)
    assert sampler_for(a).work(a.trials) == a.trials
    r = run_attack(a)
    assert r.proven_epsilon is not None
    assert 0 < r.empirical_epsilon <= r.proven_epsilon
    assert r.to_json()["sampling"]["per_step"] is False


def test_binned_certificate_exceeds_the_proven_epsilon_no_more_than_the_confidence_allows():
    # the proven ε (PLD upper bound) is ≥ the truth, so a sound certificate exceeds it in at most a
    # fraction 1 − c of the seeds; c = 0.8 gives the check teeth (150 seeds, 3 binomial sd of slack)
    from dpviz.attack import theory

    confidence, seeds, delta = 0.8, 150, 0.01
    proven = theory.proven(make_attack("laplace", scale=1.0, k=4, trials=2000, seed=0, delta=delta))
    assert proven.upper is not None

    def exceed(scale: float) -> float:
        over = 0
        for seed in range(seeds):
            a = make_attack("laplace", scale=scale, k=4, trials=2000, seed=seed, delta=delta)
            s_in, s_out, sampler = sample(a)
            cert = C.certify(s_in, s_out, delta=delta, confidence=confidence, slack=sampler.law_error)
            over += cert.epsilon > proven.upper
        return over / seeds

    allowed = (1 - confidence) + 3 * (confidence * (1 - confidence) / seeds) ** 0.5
    assert exceed(1.0) <= allowed
    # samples of a leakier law (b = 0.7: ε0 43% larger) fail the same check (measured: 0.43 > 0.30)
    assert exceed(0.7) > allowed


def test_the_kept_range_holds_both_laws_far_apart() -> None:
    """Laplace ε0 = 20 at k = 201,999 (a walk of the Attack lab): the k-fold laws under P and Q sit
    about 2k(ε0 − 1) ≈ 7.7·10^6 apart in loss, and h was chosen from the spread alone (0.054): 1.5·10^8 bins,
    ten minutes of composition behind a progress bar. The estimate now counts the means' distance."""
    law, lattice = B.law_of(make("laplace", scale=0.05), sampling_rate=None)
    k = 201_999
    h = B.step_width(law, k, lattice)
    gap = B._mean_sd(law)[0] - B._mean_sd(law, side="q")[0]
    assert gap > 37.0
    assert k * gap / h <= B.MAX_BINS
    assert B.composed_law(law, k, lattice).p.size <= B.MAX_BINS


def test_a_step_whose_loss_is_one_point_keeps_its_window_indices_small():
    """The canonical pair at ε0 = 1e-300, subsampled at q = 0.1: both atoms sit at loss 2.8e-17, the
    support has no width, and h came out 1.5e-305, so the window index of the atoms (10^288) did not
    fit in an integer (``python -m dpviz attack canonical --eps0 1e-300 --sampling-rate 0.1`` raised;
    found by the attack fuzz). h is now at least |loss|/2^32: the run certifies ε ≥ 0 and proves 0."""
    import warnings

    from dpviz.mechanisms import canonical
    from dpviz.mechanisms.subsampling import subsample_remove

    law = subsample_remove(canonical.loss_law(eps0=1e-300, delta0=0.0), rate=0.1)
    h = B.step_width(law, 1)
    assert h >= float(np.max(np.abs(law.loss))) / B.INDEX_SPAN
    assert int(np.max(np.abs(B.symbols(law.loss, h)))) <= 2**33
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = run_attack(make_attack("canonical", eps0=1e-300, k=1, trials=100, seed=1, delta=0.1,
                                   confidence=0.5, sampling_rate=0.1))
    assert r.empirical_epsilon == 0.0 and r.proven_epsilon == 0.0
