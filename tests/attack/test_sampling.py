"""The samplers draw the statistic the test needs, exactly: identities of the likelihood ratio
(E_Q[e^L] = 1 per step, Steinke §2), the mass at +∞ of the canonical pair, the Laplace mean (its KL
divergence), chunking that changes nothing, and seeds that reproduce."""

from __future__ import annotations

import math

import numpy as np
import pytest

from dpviz.attack import make_attack
from dpviz.attack import sampling as S
from dpviz.attack.run import sample, sampler_for
from dpviz.mechanisms.registry import make


def mean_within(x: np.ndarray, expected: float, sds: float = 5.0) -> bool:
    """|mean − expected| within ``sds`` standard errors (5: a false failure about 1 run in 10^6)."""
    return abs(float(x.mean()) - expected) <= sds * float(x.std()) / math.sqrt(x.size) + 1e-12


@pytest.mark.parametrize("kind,params", [
    ("laplace", {"scale": 1.0}),
    ("gaussian", {"sigma": 1.0, "sampling_rate": 0.3}),
    ("laplace", {"scale": 2.0, "sampling_rate": 0.5}),
    ("randomized-response", {"eps0": 0.7, "categories": 3, "sampling_rate": 0.4}),
])
def test_likelihood_ratio_has_mean_one_under_q(kind, params):
    # L = ln P/Q, so E_Q[e^L] = Σ P = 1 (no mass at +∞ here): a sampler of the wrong law fails
    # the exact loss samplers (per_step: Laplace and subsampled laws are binned otherwise, §14.5)
    s_out = sample(make_attack(kind, k=1, trials=200_000, seed=11, delta=0.0, **params), per_step=True)[1]
    s_in = sample(make_attack(kind, k=1, trials=200_000, seed=12, delta=0.0, **params), per_step=True)[0]
    assert mean_within(np.exp(s_out), 1.0)
    assert mean_within(np.exp(-s_in), 1.0)


def test_laplace_counted_atoms_match_per_step_draws():
    # the sampler that counts the atoms ±ε0 and draws only the middle steps against the plain one
    # that draws every step (Laplace.loss_draw): same law of the sum (two-sample KS)
    from scipy.stats import ks_2samp

    k, e0, n = 12, 1.3, 40_000
    rng = np.random.default_rng(8)
    fast = S.of_sum(make("laplace", scale=1.0, sensitivity=e0).loss_sum(k), k).draw(rng, n, True)
    slow = S.summed(make("laplace", scale=1.0, sensitivity=e0).loss_draw(), k).draw(rng, n, True)
    assert ks_2samp(fast, slow).pvalue > 1e-4
    wrong_step = make("laplace", scale=1.0, sensitivity=1.2 * e0).loss_draw()
    wrong = S.summed(wrong_step, k).draw(rng, n, True) * (1 / 1.2)
    assert ks_2samp(fast, wrong).pvalue < 1e-4, "the check tells a different law apart"


def test_laplace_sum_has_mean_k_times_the_kl_divergence():
    # E_P[L] = KL(Lap(0, b) ‖ Lap(Δ, b)) = ε0 + e^{−ε0} − 1 per step, ε0 = Δ/b
    k, e0 = 7, 0.8
    a = make_attack("laplace", scale=1 / e0, k=k, trials=100_000, seed=2, delta=0.0)
    s_in, s_out, sampler = sample(a, per_step=True)  # the exact sampler (the page uses §14.5's)
    kl = e0 + math.exp(-e0) - 1
    assert sampler.per_step
    assert mean_within(s_in, k * kl) and mean_within(s_out, -k * kl)
    assert np.all(np.abs(s_in) <= k * e0 + 1e-9)


def test_canonical_infinite_loss_has_its_mass():
    # P(some step hits the δ0 outcome) = 1 − (1 − δ0)^k under P (+∞) and under Q (−∞)
    k, d0, n = 20, 0.01, 200_000
    a = make_attack("canonical", eps0=0.3, delta0=d0, k=k, trials=n, seed=4, delta=0.1)
    s_in, s_out, sampler = sample(a)
    p = 1 - (1 - d0) ** k
    sd = math.sqrt(p * (1 - p) / n)
    assert not sampler.per_step
    assert abs(np.mean(s_in == math.inf) - p) < 5 * sd and abs(np.mean(s_out == -math.inf) - p) < 5 * sd
    finite = s_in[np.isfinite(s_in)]
    steps = finite / 0.3
    assert np.allclose(steps, np.rint(steps)), "sums stay on the lattice of ε0"


def test_gaussian_sum_is_the_composed_gaussian():
    # Steinke Cor. 10: the k-fold loss is N(kμ²/2, kμ²) under P
    s_in = sample(make_attack("gaussian", sigma=2.0, k=16, trials=200_000, seed=5, delta=0.0))[0]
    mu2k = 16 * 0.25
    assert mean_within(s_in, mu2k / 2)
    assert abs(s_in.var() / mu2k - 1) < 0.02


def test_uniform_prior_count_matches_its_mixture():
    # HBW §V-B: E[n_B] under the uniform non-empty prior, by summing over |b| = j exactly
    k, e0 = 6, 0.5
    a = make_attack("canonical", eps0=e0, k=k, trials=200_000, seed=6, delta=0.0, prior="uniform")
    s_in = sample(a)[0]
    high, low = 1 / (1 + math.exp(-e0)), 1 / (1 + math.exp(e0))
    w = np.array([math.comb(k, j) for j in range(1, k + 1)]) / (2**k - 1)
    expected = sum(wj * (j * high + (k - j) * low) for wj, j in zip(w, range(1, k + 1), strict=True))
    assert mean_within(s_in, expected)


@pytest.mark.parametrize("chunk", [7, 64, 1000])
def test_chunking_changes_nothing(monkeypatch, chunk):
    # per-step draws are consumed row by row: any chunk size (below k = 50 too) gives the same sums
    def draws() -> tuple[np.ndarray, np.ndarray]:
        sampler = S.summed(make("laplace", scale=1.0, sensitivity=0.7).loss_draw(), 50)
        rng = np.random.default_rng
        return sampler.draw(rng(9), 300, True), sampler.draw(rng(9), 300, False)

    whole = draws()
    monkeypatch.setattr(S, "CHUNK_DRAWS", chunk)
    parts = draws()
    assert np.allclose(whole[0], parts[0], rtol=1e-12, atol=1e-12)
    assert np.allclose(whole[1], parts[1], rtol=1e-12, atol=1e-12)


def test_chunked_subsampling_keeps_its_law(monkeypatch):
    # subsampled steps draw the "sampled?" coins per chunk, so another chunk size gives other trials
    # from the same law (two-sample KS)
    from scipy.stats import ks_2samp

    a = make_attack("gaussian", sigma=1.0, sampling_rate=0.3, k=40, trials=20_000, seed=9, delta=0.0)
    whole = sample(a, per_step=True)[0]
    monkeypatch.setattr(S, "CHUNK_DRAWS", 64)
    assert ks_2samp(whole, sample(a, per_step=True)[0]).pvalue > 1e-4


def test_same_seed_same_trials_other_seed_other_trials():
    a = make_attack("randomized-response", eps0=0.4, k=30, trials=1000, seed=3, delta=0.0)
    b = make_attack("randomized-response", eps0=0.4, k=30, trials=1000, seed=4, delta=0.0)
    assert np.array_equal(sample(a)[0], sample(a)[0])
    assert not np.array_equal(sample(a)[0], sample(b)[0])


def test_cost_does_not_grow_with_k_for_sufficient_statistics():
    for kind, params in (("canonical", {"eps0": 0.1}), ("randomized-response", {"eps0": 0.1}),
                         ("gaussian", {"sigma": 10.0})):
        s = sampler_for(make_attack(kind, k=10_000, trials=1000, seed=1, delta=0.0, **params))
        assert not s.per_step and s.work(1000) == 1000
