"""One step's transform with its per-frequency error bound (``dpviz.pld.spectrum``, docs/MATH.md
§17.4). Independent routes: long-double twiddles and a long-double DFT (64-bit mantissa, 2^11 times
finer than the doubles checked), and exact integer compositions."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest

from dpviz.pld import fft, power, spectrum
from dpviz.pld.grid import GridPLD

U = fft.UNIT_ROUNDOFF


@pytest.mark.parametrize("n", [7, 1000, 4096, 60_000, 196_608])
def test_twiddles_within_their_bound(n: int) -> None:
    m = np.arange(n, dtype=np.longdouble)
    exact_pi = np.longdouble("3.14159265358979323846264338327950288")
    angle = 2 * exact_pi * m / n
    ref_re, ref_im = np.cos(angle), -np.sin(angle)
    got = spectrum.twiddles(n)
    err = np.hypot((got.real - ref_re).astype(float), (got.imag - ref_im).astype(float))
    assert float(err.max()) <= spectrum.TWIDDLE_ULPS * U


def _spiky(n: int, seed: int) -> np.ndarray:
    """A few heavy bins and a thin spread remainder, as a subsampled law at a small rate."""
    rng = np.random.default_rng(seed)
    w = rng.random(n) * 1e-4
    w[n // 2 - 2: n // 2 + 2] = [0.1, 0.5, 0.3, 0.05]
    return w / w.sum()


@pytest.mark.parametrize(("n", "n_fft"), [(300, 2048), (1000, 4000), (64, 1536)])
def test_split_transform_within_its_per_frequency_bound(n: int, n_fft: int) -> None:
    """|φ̂(f) − φ(f)| ≤ e∞ at every frequency, φ the DFT in long double."""
    w = _spiky(n, n)
    kappa = fft.FFT_C * U * math.log2(n_fft)
    assert spectrum._head_size(w, kappa) is not None  # the head is summed directly here
    phi, e_inf, e_2 = spectrum.transform(w, n_fft, kappa, {})
    f = np.arange(n_fft // 2 + 1, dtype=np.longdouble)
    exact_pi = np.longdouble("3.14159265358979323846264338327950288")
    ref_re = np.zeros(f.size, dtype=np.longdouble)
    ref_im = np.zeros(f.size, dtype=np.longdouble)
    for j in range(n):
        ang = 2 * exact_pi * ((j * f) % n_fft) / n_fft
        ref_re += np.longdouble(w[j]) * np.cos(ang)
        ref_im -= np.longdouble(w[j]) * np.sin(ang)
    err = np.hypot((phi.real - ref_re).astype(float), (phi.imag - ref_im).astype(float))
    assert float(err.max()) <= e_inf
    assert math.sqrt(2.0) * float(np.sqrt((err * err).sum())) <= e_2
    # and the bound is well below the plain transform's κ‖w‖₁
    assert e_inf < kappa / 4


def test_spiky_composition_against_exact_integers(monkeypatch) -> None:
    """A step with three heavy bins and a thin remainder (integers, the heavy ones 2^20), 80
    factors: the composed masses in Python integers; Σ|ĉ − c| ≤ err, which the direct head sums
    make several times smaller than the plain transform's bound (the same composition with the
    head split switched off)."""
    ints = np.ones(40, dtype=np.int64)
    ints[18:21] = [2**19, 2**20, 2**19]
    scale = 1.0 / float(ints.sum())
    g = GridPLD(h=0.01, lo=-20, mass=ints * scale, p_inf=0.0, pessimistic=True)
    k = 80
    got = power.compose_power([(g, k)], tail=1e-300)
    exact = [1]
    a = [int(v) for v in ints]
    for _ in range(k):
        res = [0] * (len(exact) + len(a) - 1)
        for i, u in enumerate(exact):
            for j, v in enumerate(a):
                res[i + j] += u * v
        exact = res
    denom = int(ints.sum()) ** k

    def l1(r: GridPLD) -> float:
        idx = r.lo + 20 * k + np.arange(r.mass.size)
        return float(np.abs(r.mass - np.array([exact[int(i)] / denom for i in idx])).sum())

    assert l1(got) <= got.err
    unsplit = power.compose_power([(g, k)], tail=1e-300, split=False)  # as a spared direction is
    assert l1(unsplit) <= unsplit.err
    monkeypatch.setattr(spectrum, "SPLIT_GAIN", math.inf)
    plain = power.compose_power([(g, k)], tail=1e-300)
    assert l1(plain) <= plain.err
    assert got.err < plain.err / 3
    assert np.array_equal(unsplit.mass, plain.mass) and unsplit.err == plain.err  # the plain transform


def _binomial_grids() -> list[tuple[GridPLD, int]]:
    """(1/4, 1/2, 1/4)^{*8000} ∗ (1/2, 1/2)^{*4000}: Binomial(20000, 1/2), exact as C(20000, j)/2^20000."""
    return [(GridPLD(h=0.01, lo=0, mass=np.array([0.25, 0.5, 0.25]), p_inf=0.0, pessimistic=True), 8000),
            (GridPLD(h=0.01, lo=0, mass=np.array([0.5, 0.5]), p_inf=0.0, pessimistic=True), 4000)]


@functools.cache
def _binomial_masses() -> np.ndarray:
    """C(20000, j)/2^20000 for every j (Python integers, each quotient rounded correctly)."""
    c, scale, out = 1, 2**20000, []
    for j in range(20001):
        out.append(c / scale)
        c = c * (20000 - j) // (j + 1)
    return np.array(out)


def _binomial_error(got: GridPLD) -> float:
    """Σ_j |ĉ_j − c_j|·e^{θ·loss_j} over the whole support (masses the grid does not hold count as 0)."""
    exact = _binomial_masses()
    mass = np.zeros(exact.size)
    mass[got.lo + np.arange(got.mass.size)] = got.mass
    return float((np.abs(mass - exact) * np.exp(got.tilt * 0.01 * np.arange(exact.size))).sum())


def test_banded_product_keeps_the_entries_and_bounds_the_rest() -> None:
    """The kept frequencies hold the same floats as the power over the whole spectrum; the others
    are 0, and the exact product of the transforms there (in log space) is within the cut charged."""
    rng = np.random.default_rng(5)
    n = 4001
    decay = np.exp(-np.linspace(0.0, 0.5, n))  # |φ| falls away from f = 0, as a smooth step's
    phis = [(decay * np.exp(1j * rng.random(n)), 3000), (decay**2 * np.exp(1j * rng.random(n)), 700)]
    e_inf = 1e-15
    log_m = sum(k * np.log(np.abs(phi) + e_inf) for phi, k in phis)
    got, cut = spectrum.banded_product(phis, log_m)
    whole = spectrum.powered(phis[0][0], 3000) * spectrum.powered(phis[1][0], 700)
    keep = log_m >= spectrum.NEGLIGIBLE_LOG
    assert 0 < keep.sum() < n  # both kinds of frequency occur
    assert np.array_equal(got[keep], whole[keep]) and not np.any(got[~keep])
    log_exact = sum(k * np.log(np.abs(phi)) for phi, k in phis)[~keep]
    top = float(log_exact.max())
    log_norm = 0.5 * (math.log(2.0) + 2 * top + math.log(float(np.exp(2 * (log_exact - top)).sum())))
    assert cut > 0.0 and log_norm <= math.log(cut)


@pytest.mark.parametrize("threshold", [spectrum.NEGLIGIBLE_LOG, -15.0])
def test_banded_product_charges_what_it_drops(monkeypatch: pytest.MonkeyPatch, threshold: float) -> None:
    """Binomial(20000, 1/2) from 12,000 factors: the round-off bound holds against the exact masses
    over the whole support, with the band in use (something dropped) at the default threshold and at
    e^{−15}, where the products dropped matter: without their charge that composition is off by
    2.4e-7 against a bound of 1.1e-9."""
    cuts: list[float] = []
    banded = spectrum.banded_product

    def spy(phis, log_m):  # type: ignore[no-untyped-def]
        out = banded(phis, log_m)
        cuts.append(out[1])
        return out

    monkeypatch.setattr(power, "banded_product", spy)
    monkeypatch.setattr(spectrum, "NEGLIGIBLE_LOG", threshold)
    got = power.compose_power(_binomial_grids(), tail=1e-300)
    assert cuts and cuts[-1] > 0.0
    assert _binomial_error(got) <= got.err


def test_banded_product_keeps_a_nan() -> None:
    """A frequency whose bound is not a number is powered as before (its NaN reaches the round-off
    bound, which then says nothing), never dropped as negligible."""
    phi = np.full(spectrum.BAND_MIN_BINS, 1e-300 + 0j)
    phi[:3] = [1.0, 0.5, np.nan]
    log_m = 1000 * np.log(np.abs(phi) + 1e-16)
    got, cut = spectrum.banded_product([(phi, 1000)], log_m)
    assert np.isnan(got[2]) and got[3] == 0 and cut > 0.0


def test_a_spared_direction_is_composed_by_plain_transforms(monkeypatch) -> None:
    """The add direction of q = 8.7e-4, σ = 2.68, 6,458 steps, δ = 5.1e-12 is composed at a coarser
    width (it only has to read below the lead's upper end): by plain transforms there, the lead's
    grids with the heavy bins split off; the interval is the one of splitting everywhere, bit for bit."""
    from dpviz.mechanisms import gaussian
    from dpviz.mechanisms.subsampling import subsample_remove
    from dpviz.pld import composed, refine

    law = subsample_remove(gaussian.loss_law(sigma=2.683), rate=0.00087)
    calls: list[tuple[float, bool]] = []
    orig = composed.compose_power

    def spy(grids, **kw):
        calls.append((grids[0][0].h, kw.get("split", True)))
        return orig(grids, **kw)

    monkeypatch.setattr(composed, "compose_power", spy)
    c = refine.composition([(law, 6458)], delta=5.1e-12)
    assert {split for h, split in calls if h == c.h} == {True}
    assert {split for h, split in calls if h != c.h} == {False}  # the spared direction
    monkeypatch.setattr(composed, "compose_power", lambda grids, **kw: orig(grids, **{**kw, "split": True}))
    composed.discretized.cache_clear()
    every = refine.composition([(law, 6458)], delta=5.1e-12)
    assert c.epsilon(5.1e-12) == every.epsilon(5.1e-12)
