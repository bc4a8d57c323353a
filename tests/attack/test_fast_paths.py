"""The attack lab's cheaper computations give the numbers of the direct ones (issue 20, "cost per
interaction"): quantiles of a sorted copy are numpy's own quantiles, bit for bit; a count at one
threshold is the brute-force count; the certificate is the one the sorting implementation gave."""

from __future__ import annotations

import math
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from dpviz.attack import curve as C


def samples() -> list[np.ndarray]:
    """Shuffled samples with ties, infinities of both signs, a constant and a tiny one."""
    rng = np.random.default_rng(20)
    ties = rng.integers(-5, 6, size=40_001).astype(float) * 0.1
    with_inf = rng.normal(size=30_000)
    with_inf[rng.random(30_000) < 0.01] = math.inf
    with_inf[rng.random(30_000) < 0.01] = -math.inf
    return [rng.normal(size=100_000), ties, with_inf, np.full(17, 2.5), np.array([3.0, -1.0])]


@pytest.mark.parametrize("i", range(5))
@pytest.mark.parametrize("count", [2, 512, 2000])
def test_finite_quantiles_are_numpys_quantiles_of_the_shuffled_sample(i, count):
    x = samples()[i]
    before = x.copy()
    want = np.quantile(x[np.isfinite(x)], np.linspace(0.0, 1.0, count))
    got = C.finite_quantiles(x, count)
    assert np.array_equal(got, want)  # bit for bit: the same thresholds, the same curve
    assert np.array_equal(x, before)  # the sample's order (its halves) is left alone


@pytest.mark.parametrize("seed", range(20))
def test_sorted_quantiles_are_numpys_bit_for_bit(seed):
    # numpy's arithmetic, repeated: sizes from 1, levels on a grid and at random, ties and scales
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 5000)) if seed % 4 else int(rng.integers(1, 4))
    x = rng.normal(size=n) * 10.0 ** rng.integers(-3, 4)
    if seed % 3 == 0:
        x = np.round(x, 1)
    levels = np.linspace(0.0, 1.0, int(rng.integers(2, 3000))) if seed % 2 else np.sort(rng.random(999))
    assert np.array_equal(C.sorted_quantiles(np.sort(x), levels), np.quantile(x, levels))


sorted_arrays = st.lists(st.sampled_from([-math.inf, -2.0, -0.5, 0.0, 0.5, 1.0, 3.0, math.inf]) | st.floats(
    -1e3, 1e3, allow_nan=False), max_size=60).map(lambda v: np.sort(np.array(v, dtype=float)))


@settings(max_examples=300, deadline=None)
@given(sorted_arrays, sorted_arrays, st.data())
def test_merged_at_is_the_sorted_pool(a, b, data):
    # the order statistics of two sorted samples, read without merging them: ties within and across,
    # infinities, an empty side; every rank or a random few
    assume(a.size + b.size > 0)
    pool = np.sort(np.concatenate([a, b]))
    ranks = np.arange(pool.size) if data.draw(st.booleans()) else np.array(
        data.draw(st.lists(st.integers(0, pool.size - 1), min_size=1, max_size=10)), dtype=np.intp)
    assert np.array_equal(C.merged_at(a, b, ranks), pool[ranks])


@settings(max_examples=200, deadline=None)
@given(sorted_arrays, sorted_arrays, st.integers(1, 700))
def test_pooled_quantiles_are_the_pooled_samples(a, b, count):
    pool = np.concatenate([a, b])
    want = C.finite_quantiles(pool, count) if np.isfinite(pool).any() else np.zeros(0)
    for merge_above in (0, C.MERGE_ABOVE):  # read out of the two samples, and the small pool sorted
        with patch.object(C, "MERGE_ABOVE", merge_above):
            assert np.array_equal(C.pooled_quantiles(a, b, count), want)  # bit for bit


@pytest.mark.parametrize("i", range(5))
def test_pooled_quantiles_of_the_samples_halves(i):
    x = samples()[i]
    a, b = np.sort(x[: x.size // 3]), np.sort(x[x.size // 3:] * 1.5)
    with patch.object(C, "MERGE_ABOVE", 0):  # these pools are below it: read out of the two samples
        want = C.finite_quantiles(np.concatenate([a, b]), 2000)
        assert np.array_equal(C.pooled_quantiles(a, b, 2000), want)


def test_merged_at_fails_a_shifted_rank():
    # the comparison above can fail: the rank before each one is another value of a sample without ties
    a, b = np.sort(samples()[0][:500]), np.sort(samples()[0][500:900])
    ranks = np.arange(1, 900)
    assert not np.array_equal(C.merged_at(a, b, ranks - 1), np.sort(np.concatenate([a, b]))[ranks])


def test_every_trial_infinite_certifies_without_a_finite_quantile():
    # δ0 = 0.999, k = 5: every trial's loss is +∞ under H0 and −∞ under H1, nothing finite to take
    # quantiles of (this raised IndexError, also from ``python -m dpviz attack``): the test at +∞
    # makes no error, so the certified ε is the largest 25,000 error-free trials show
    from dpviz.attack import make_attack, run_attack

    r = run_attack(make_attack("canonical", eps0=0.5, delta0=0.999, k=5, trials=50_000, seed=5, delta=1e-3))
    assert not np.isfinite(r.curve.thresholds).any()
    assert r.certificate.false_alarms == r.certificate.misses == 0
    level = 1.0 - 0.05 / 2.0
    upper = float(C.cp_upper(0, 25_000, level))
    assert r.empirical_epsilon == pytest.approx(math.log((1 - 1e-3 - upper) / upper), rel=1e-12)
    assert C.finite_quantiles(np.array([math.inf, -math.inf]), 5).size == 0


def test_finite_quantiles_differ_from_a_wrong_level_grid():
    # the comparison above can fail: one level more moves the interior quantiles
    x = samples()[0]
    assert not np.array_equal(C.finite_quantiles(x, 512), np.quantile(x, np.linspace(0, 1, 513))[:512])


@pytest.mark.parametrize("i", range(5))
def test_count_at_is_the_brute_force_count(i):
    x = samples()[i]
    y = np.roll(x, 7) * 0.9
    for t in [-math.inf, -0.3, 0.0, 0.1, 0.2, 2.5, 3.0, math.inf, float(np.nanmedian(x))]:
        fa = sum(1 for v in x if v < t)
        md = sum(1 for v in y if v >= t)
        assert C.count_at(x, y, t) == (fa, md)
        many = C.error_counts(x, y, np.array([t]))
        assert (int(many[0][0]), int(many[1][0])) == (fa, md)


def certify_by_sorting(s_in: np.ndarray, s_out: np.ndarray, *, delta: float, confidence: float
                       ) -> tuple[float, float, int, int]:
    """``curve.certify`` as it was written before issue 20 (np.quantile of the shuffled half, sorted
    counts at the chosen threshold): (ε, threshold, false alarms, misses)."""
    half = s_in.size // 2
    level = 1.0 - (1.0 - confidence) / 2.0
    pooled = np.concatenate([s_in[:half], s_out[:half]])
    finite = pooled[np.isfinite(pooled)]
    cand = np.unique(np.quantile(finite, np.linspace(0.0, 1.0, C.CANDIDATES)))
    cand = np.unique(np.concatenate([cand, np.nextafter(cand, math.inf), [math.inf]]))
    fa, md = C.error_counts(s_in[:half], s_out[:half], cand)
    t = float(cand[int(np.argmax(C.epsilon_shown(C.cp_upper(fa, half, level), C.cp_upper(md, half, level),
                                                 delta)))])
    n = s_in.size - half
    fa_b, md_b = C.error_counts(s_in[half:], s_out[half:], np.array([t]))
    a_up, b_up = float(C.cp_upper(fa_b, n, level)[0]), float(C.cp_upper(md_b, n, level)[0])
    eps = float(C.epsilon_shown(a_up, b_up, delta))
    return eps, t, int(fa_b[0]), int(md_b[0])


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("shift,discrete", [(1.0, False), (3.0, False), (1.0, True)])
def test_certify_is_unchanged(seed, shift, discrete):
    rng = np.random.default_rng(seed)
    s_in, s_out = rng.normal(shift / 2, 1.0, 20_001), rng.normal(-shift / 2, 1.0, 20_001)
    if discrete:
        s_in, s_out = np.round(s_in * 2) / 2, np.round(s_out * 2) / 2
    cert = C.certify(s_in, s_out, delta=1e-3, confidence=0.95)
    assert (cert.epsilon, cert.threshold, cert.false_alarms, cert.misses) == \
        certify_by_sorting(s_in, s_out, delta=1e-3, confidence=0.95)


def test_deferred_columns_are_made_once_when_first_read():
    from dpviz.views import Deferred

    made: list[int] = []

    def make() -> dict[str, list[int]]:
        made.append(1)
        return {"a": [1, 2], "b": [3, 4]}

    d = Deferred(make)
    assert made == []  # building a view costs nothing for its download
    assert list(d) == ["a", "b"] and d["b"] == [3, 4] and len(d) == 2
    assert dict(d) == {"a": [1, 2], "b": [3, 4]}
    assert made == [1]  # made once, whatever is read


def test_the_attack_views_csv_is_the_results_columns():
    from dpviz import export
    from dpviz.attack import make_attack, run_attack
    from dpviz.views import attack as av

    r = run_attack(make_attack("gaussian", sigma=1.0, k=4, trials=30_000, seed=3, delta=1e-3))
    view = av.build(r)
    assert export.columns_csv(view.csv["curve"]) == export.columns_csv(r.columns())
    assert len(view.csv["curve"]["P_FA_upper"]) == r.curve.thresholds.size > 1000


@pytest.mark.parametrize("p", [[0.45, 0.0, 0.30, 0.25], [0.62, 0.38, 0.0], [0.0, 1.0], [0.1, 0.2, 0.3, 0.4]])
def test_multinomial_counts_have_the_multinomial_law(p):
    from scipy.stats import multinomial

    from dpviz.attack.sampling import multinomial_counts

    k, n = 6, 200_000
    probs = np.array(p)
    counts = multinomial_counts(np.random.default_rng(4), k, probs, n)
    assert counts.shape == (n, probs.size) and np.all(counts.sum(axis=1) == k) and np.all(counts >= 0)
    assert np.all(counts[:, probs == 0] == 0)
    rows, seen = np.unique(counts, axis=0, return_counts=True)
    for row, m in zip(rows, seen, strict=True):  # each count vector's frequency: 5 binomial sds
        expected = float(multinomial.pmf(row, k, probs))
        assert abs(m / n - expected) <= 5 * math.sqrt(expected * (1 - expected) / n) + 1e-12, row
    mass_seen = sum(float(multinomial.pmf(row, k, probs)) for row in rows)
    assert mass_seen > 0.999  # no likely count vector is missing


def test_multinomial_counts_fail_a_wrong_law():
    # the frequency check above can fail: counts of the wrong probabilities do
    from scipy.stats import multinomial

    from dpviz.attack.sampling import multinomial_counts

    counts = multinomial_counts(np.random.default_rng(4), 6, np.array([0.5, 0.5]), 200_000)
    row, m = np.array([3, 3]), int(np.sum(np.all(counts == [3, 3], axis=1)))
    expected = float(multinomial.pmf(row, 6, [0.62, 0.38]))
    assert abs(m / 200_000 - expected) > 5 * math.sqrt(expected * (1 - expected) / 200_000)


@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("seed", range(8))
def test_lookup_is_numpys_searchsorted(seed, side):
    from dpviz.attack.lookup import Lookup

    rng = np.random.default_rng(seed)
    mass = rng.random(int(rng.integers(1, 2000)))
    if seed % 2:
        mass[rng.random(mass.size) < 0.5] = 0.0  # atoms of mass 0: repeated cdf values
    if seed % 4 == 3:
        mass[: mass.size // 2] *= 1e-12  # half the values crowded into the first cell
    cdf = np.cumsum(mass)
    top = max(float(cdf[-1]), 1.0)
    keys = rng.random(int(rng.integers(0, 50_000))) * top
    keys[: keys.size // 10] = rng.choice(cdf, keys.size // 10)  # keys equal to a value: ties
    keys[keys.size // 10: keys.size // 5] = np.nextafter(rng.choice(cdf, keys.size // 5 - keys.size // 10), 0)
    if seed == 5:
        keys[:50] = -1.0  # outside [0, top]: still exact
        keys[50:100] = 2 * top
    assert np.array_equal(Lookup(cdf, top, side)(keys), np.searchsorted(cdf, keys, side=side))


def test_lookup_hints_are_never_past_the_answer():
    # a hint never past the answer: from index 0 the steps still find it; a hint past it (which the
    # lowered edges rule out) would give wrong indices, so the check above can fail
    from dpviz.attack.lookup import Lookup

    rng = np.random.default_rng(3)
    cdf = np.cumsum(rng.random(500))
    keys = rng.random(20_000) * cdf[-1]
    lookup = Lookup(cdf, float(cdf[-1]), "right")
    want = np.searchsorted(cdf, keys, side="right")
    assert np.all(lookup.start[(keys * lookup.scale).astype(int)] <= want)
    lookup.start[:] = 0
    assert np.array_equal(lookup(keys), want)
    lookup.start[:] = cdf.size
    assert not np.array_equal(lookup(keys), want)


@pytest.mark.parametrize("kind,params", [("canonical", {"eps0": 0.5}), ("laplace", {"scale": 1.0}),
                                         ("gaussian", {"sigma": 1.0, "sampling_rate": 0.3})])
def test_a_run_is_determined_by_its_attack_which_keys_the_pages_cache(kind, params):
    # the page caches build/alice by the Attack alone (views.attack.RESULT_KEY): two runs of one
    # attack must agree in every number shown, and another seed must be another key
    from dataclasses import replace

    from dpviz.attack import make_attack, run_attack
    from dpviz.attack.run import AttackResult
    from dpviz.views import attack as av

    a = make_attack(kind, k=5, trials=4000, seed=2, delta=1e-3, **params)
    one = run_attack(a)
    forget_trials()  # two draws, not one kept
    two = run_attack(a)
    key = av.RESULT_KEY[AttackResult]
    assert key(one) == key(two) == a and key(run_attack(replace(a, seed=3))) != key(one)
    for name in ("thresholds", "false_alarms", "misses"):
        assert np.array_equal(getattr(one.curve, name), getattr(two.curve, name))
    assert one.certificate == two.certificate
    assert replace(one.proven, seconds=0.0) == replace(two.proven, seconds=0.0)  # timings may differ
    assert np.array_equal(one.preview_in, two.preview_in) and np.array_equal(one.boxes, two.boxes)
    assert av.build(one).summary == av.build(two).summary


@pytest.mark.parametrize("kind,params", [("canonical", {"eps0": 0.5}), ("laplace", {"scale": 1.0}),
                                         ("gaussian", {"sigma": 1.0}),
                                         ("canonical", {"eps0": 0.4, "prior": "uniform"})])
def test_the_theory_is_computed_once_for_every_seed_n_and_confidence(kind, params):
    from dataclasses import replace

    from dpviz.attack import make_attack, run_attack, theory
    from dpviz.attack.run import theory_of

    a = make_attack(kind, k=6, trials=3000, seed=1, delta=1e-3, **params)
    first = run_attack(a)
    hits = theory_of.cache_info().hits
    for other in (replace(a, seed=9), replace(a, trials=5000), replace(a, confidence=0.9)):
        r = run_attack(other)
        direct = theory.proven(other)
        assert replace(r.proven, seconds=0.0) == replace(direct, seconds=0.0)
        want = theory.tradeoff(other, proven_epsilon=direct.upper if direct.feasible else None).boundary
        got = r.tradeoff.boundary
        assert (got is None) == (want is None)
        if got is not None and want is not None:
            assert np.array_equal(got.p_fa, want.p_fa) and np.array_equal(got.p_md, want.p_md)
    assert theory_of.cache_info().hits == hits + 3  # answered from the first run's entry
    assert run_attack(replace(a, delta=1e-2)).proven.upper != first.proven.upper  # δ is part of the key


def forget_trials() -> None:
    """Drop the trials ``run.trials_of`` keeps: the next run draws afresh."""
    from dpviz.attack import run as R

    with R._TRIALS_LOCK:
        R._TRIALS.clear()


def _same_numbers(one, two) -> None:
    """Two results show the same numbers (every array, the certificate, the proven ε, the view)."""
    from dataclasses import replace

    from dpviz.views import attack as av

    for name in ("thresholds", "false_alarms", "misses"):
        assert np.array_equal(getattr(one.curve, name), getattr(two.curve, name))
    assert one.certificate == two.certificate
    assert replace(one.proven, seconds=0.0) == replace(two.proven, seconds=0.0)
    for name in ("preview_in", "preview_out", "boxes"):
        assert np.array_equal(getattr(one, name), getattr(two, name))
    assert (one.draws, one.law_error, one.per_step) == (two.draws, two.law_error, two.per_step)
    assert av.build(one).summary == av.build(two).summary
    assert np.array_equal(one.columns()["P_FA_upper"], two.columns()["P_FA_upper"])


@pytest.mark.parametrize("kind,params", [("canonical", {"eps0": 0.5}), ("laplace", {"scale": 1.0}),
                                         ("gaussian", {"sigma": 1.0, "sampling_rate": 0.3}),
                                         ("canonical", {"eps0": 0.4, "prior": "uniform"})])
def test_a_change_of_delta_or_confidence_draws_no_trial_again(kind, params, monkeypatch):
    """Issue 20: the trials and their error curve do not depend on δ or on the confidence, so a run
    that changes only those reads the kept trials (``run.trials_of``), and shows the numbers of a
    run that draws them afresh."""
    from dataclasses import replace

    from dpviz.attack import make_attack
    from dpviz.attack import run as R

    drawn: list[int] = []
    sample = R.sample
    monkeypatch.setattr(R, "sample", lambda *args, **kwargs: drawn.append(1) or sample(*args, **kwargs))
    a = make_attack(kind, k=5, trials=4000, seed=4, delta=1e-3, **params)
    for other in (replace(a, delta=1e-2), replace(a, confidence=0.9), replace(a, delta=0.0, confidence=0.99)):
        forget_trials()
        R.run_attack(a)
        before = len(drawn)
        kept = R.run_attack(other)
        assert len(drawn) == before, "δ and the confidence draw nothing"
        forget_trials()
        fresh = R.run_attack(other)
        assert len(drawn) == before + 1
        _same_numbers(kept, fresh)
    R.run_attack(replace(a, seed=5))  # another seed, another N: drawn
    R.run_attack(replace(a, trials=5000))
    assert len(drawn) == 3 * 2 + 2
    monkeypatch.setattr(R, "TRIALS_KEPT_BYTES", 0)  # too large to keep: drawn every time
    forget_trials()
    R.run_attack(a), R.run_attack(replace(a, delta=1e-2))
    assert len(drawn) == 3 * 2 + 2 + 2


@pytest.mark.parametrize("kind,params", [("laplace", {"scale": 1.0}),
                                         ("gaussian", {"sigma": 1.0, "sampling_rate": 0.3}),
                                         ("canonical", {"eps0": 0.5}), ("gaussian", {"sigma": 1.0})])
def test_a_sampler_is_made_once_per_law_and_draws_as_a_new_one(kind, params):
    """Issue 20: the seed, N, δ and the confidence do not change what is sampled, so a setting's
    sampler (a binned law's composition for Laplace and subsampled mechanisms) is made once and
    shared; it draws only from the generator it is given, as one made afresh draws."""
    from dataclasses import replace

    from dpviz.attack import make_attack
    from dpviz.attack import run as R

    a = make_attack(kind, k=7, trials=3000, seed=1, delta=1e-3, **params)
    first = R.sampler_for(a)
    for other in (replace(a, seed=8), replace(a, trials=5000), replace(a, delta=0.0, confidence=0.9)):
        assert R.sampler_for(other) is first
    assert R.sampler_for(replace(a, k=8)) is not first
    fresh = R._sampler.__wrapped__(a, False)
    assert fresh is not first
    for under_p in (True, False):
        one, two = np.random.default_rng(5), np.random.default_rng(5)
        assert np.array_equal(first.draw(one, 2000, under_p), fresh.draw(two, 2000, under_p))
        assert np.array_equal(first.draw(one, 100, under_p), fresh.draw(two, 100, under_p))  # no state kept
    assert (first.per_step, first.k, first.law_error) == (fresh.per_step, fresh.k, fresh.law_error)
