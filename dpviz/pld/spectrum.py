"""One step's transform for the composition, with its error bound per frequency (docs/MATH.md §17.4).

``compose_power`` raises each step's transform φ to the k-th power, so the error of φ̂ at each
frequency is what the power amplifies. A real FFT of the masses w ≥ 0 has |φ̂(f) − φ(f)| ≤ κ‖w‖₁ at
every f (κ = C·u·log2 N, ``dpviz.pld.fft``). For a step whose mass sits in a few bins (a subsampled
law at a small rate: at q = 1.3e-4, σ = 0.65, 16 bins hold 97.5 % of it) most of that is the few
heavy bins' share; their transform is summed directly instead,

    φ(f) = Σ_{j ∈ head} w_j ω^{jf} + FFT(w without the head)(f),

with ω^{jf} read from one table of ω^m, m = (j·f) mod N (an exact integer), so each term errs by
at most the table's error plus one rounding. Per frequency the error is then

    e∞ ≤ (|head| + TWIDDLE_ULPS + 2)·u·‖head‖₁ + (κ + u)·‖rest‖₁,

against κ‖w‖₁ for the plain transform (first order; the sum of |head| terms is Higham's γ_|head|).
The head is used where that is at most a quarter of κ‖w‖₁ and below κ‖w‖₂ (so the per-frequency
bound improves fourfold and the uniform one, √N·e∞ against κ√N‖w‖₂, does not get worse); its size
is the best of 1, 2, 4, 8, 16 bins.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sfft

from dpviz.pld import fft

U = fft.UNIT_ROUNDOFF

TWIDDLE_ULPS = 32.0
"""Bound on |ω̂^m − ω^m| in units of u for the table (angle 2π·m/N: three roundings of a number
≤ 2π, ≤ 3u·2π ≈ 19u, then cos and sin within an ulp each); checked against long-double values in
``tests/pld/test_spectrum.py``."""

HEADS = (1, 2, 4, 8, 16)
"""Head sizes tried (bins, heaviest first)."""

SPLIT_GAIN = 4.0
"""The head is summed directly only where it makes the per-frequency bound this many times smaller
than the plain transform's κ‖w‖₁ (the direct sums cost |head| + 1 passes over the spectrum)."""


def sum_bound(x: NDArray[np.float64]) -> float:
    """An upper bound of ‖x‖₁ for x ≥ 0: the computed sum, up by its round-off (≤ 2·size·u relative)."""
    return float(x.sum()) * (1.0 + 2.0 * x.size * U)


def twiddles(n: int) -> NDArray[np.complex128]:
    """ω^m = e^{−2πi·m/n}, m = 0 … n − 1, each within ``TWIDDLE_ULPS``·u."""
    angle = (2.0 * math.pi) * np.arange(n, dtype=np.float64) / n
    return np.asarray(np.cos(angle) - 1j * np.sin(angle), dtype=np.complex128)


SPLIT_MAX_BINS = 1 << 20
"""Longest transform whose heavy bins are summed directly: its twiddle table (16 bytes a bin, and
as much again while it is made) is memory the cost estimate does not count. Longer transforms come
from many steps, where the per-frequency bound decays anyway (``power.compose_power``)."""


def _head_size(w: NDArray[np.float64], kappa: float) -> tuple[int, NDArray[np.intp]] | None:
    """The head (size, indices) minimising the per-frequency bound, or None where the plain
    transform's bound is within ``SPLIT_GAIN`` of it."""
    order = np.argsort(w)[::-1][: HEADS[-1]]
    total = float(w.sum())
    heads = np.cumsum(w[order])
    best: tuple[float, int] | None = None
    for n in HEADS:
        if n > order.size:
            break
        s = float(heads[n - 1])
        e = (n + TWIDDLE_ULPS + 2.0) * U * s + (kappa + U) * max(total - s, 0.0)
        if best is None or e < best[0]:
            best = (e, n)
    if best is None or best[0] * SPLIT_GAIN > kappa * total or best[0] > kappa * fft.norm(w):
        return None
    return best[1], np.sort(order[: best[1]])


def transform(w: NDArray[np.float64], n_fft: int, kappa: float,
              table: dict[int, NDArray[np.complex128]], *,
              split: bool = True) -> tuple[NDArray[np.complex128], float, float]:
    """(φ̂ on the half spectrum rfft returns, e∞, e₂): the computed transform of the masses ``w``
    (≥ 0, zero-padded to ``n_fft``), a bound on |φ̂(f) − φ(f)| at every frequency, and one on
    ‖φ̂ − φ‖₂ over the full spectrum. ``table`` keeps the twiddles per length for the next part.
    ``split``: the heavy bins may be summed directly (else the plain transform and its bound)."""
    w1 = sum_bound(w)
    head = _head_size(w, kappa) if split and n_fft <= SPLIT_MAX_BINS else None
    if head is None:
        # Higham Thm 24.2 in ℓ2, and per entry κ‖w‖₁ (each input reaches each output on one path)
        return sfft.rfft(w, n_fft, workers=-1), kappa * w1, kappa * math.sqrt(n_fft) * fft.norm(w)
    size, idx = head
    rest = w.copy()
    rest[idx] = 0.0
    phi = sfft.rfft(rest, n_fft, workers=-1)
    if n_fft not in table:
        table.clear()
        table[n_fft] = twiddles(n_fft)
    omega = table[n_fft]
    f = np.arange(n_fft // 2 + 1, dtype=np.int64)
    direct = np.zeros(f.size, dtype=np.complex128)
    for j in idx:
        direct += w[j] * omega[(int(j) * f) % n_fft]
    phi += direct
    s1, r1 = sum_bound(w[idx]), sum_bound(rest)
    e_inf = ((size + TWIDDLE_ULPS + 2.0) * U * s1 + (kappa + U) * r1) * (1.0 + 1e-6)
    return phi, e_inf, math.sqrt(n_fft) * e_inf


NEGLIGIBLE_LOG = -700.0
"""Frequencies whose computed ln Π_i m_i(f)^{k_i} is below this are not powered (``banded_product``):
there the exact product of the computed transforms is below e^{−690} (docs/MATH.md §17.4, band)."""


BAND_MIN_BINS = 2048
"""Shorter half spectra are powered whole: there the band's gather and scatter cost what it saves."""


def powered(z: NDArray[np.complex128], k: int) -> NDArray[np.complex128]:
    """z^k by squaring and multiplying (k − 1 multiplications' worth of rounding, docs/MATH.md §17.4)."""
    result: NDArray[np.complex128] | None = None
    base = z.copy()
    while True:
        if k & 1:
            if result is None:
                result = base.copy()
            else:
                np.multiply(result, base, out=result)
        k >>= 1
        if not k:
            break
        np.multiply(base, base, out=base)
    assert result is not None
    return result


def banded_product(phis: list[tuple[NDArray[np.complex128], int]],
                   log_m: NDArray[np.float64]) -> tuple[NDArray[np.complex128], float]:
    """(ψ̂, cut): ψ̂ = Π_i φ̂_i^{k_i} (``powered``, then the product in the order given) at the
    frequencies f of the half spectrum where ``log_m`` = Σ_i k_i·ln m_i(f) is not below
    ``NEGLIGIBLE_LOG``, 0 elsewhere; cut ≥ the ℓ2 norm, over the full (Hermitian) spectrum, of the
    exact product of the φ̂_i at the frequencies set to 0 (each ≤ Π_i m_i^{k_i}, below
    e^{NEGLIGIBLE_LOG + 10}: the 10 covers the rounding of ``log_m``). Many steps make |φ|^K
    negligible away from f = 0 (about 100 of 14,000 frequencies remain at q = 9.8e-4, σ = 8.65,
    6,263 steps): the K − 1 products are taken there only. Each kept entry is computed by the same
    elementwise operations as over the whole spectrum."""
    negligible = log_m < NEGLIGIBLE_LOG  # a NaN is kept: it propagates as before
    whole = log_m.size < BAND_MIN_BINS or not negligible.any()
    keep = np.flatnonzero(~negligible) if not whole else np.zeros(0, dtype=np.intp)
    spectrum: NDArray[np.complex128] | None = None
    for phi, k in phis:
        part = powered(phi if whole else phi[keep], k)
        spectrum = part if spectrum is None else spectrum * part
    assert spectrum is not None
    if whole:
        return spectrum, 0.0
    out = np.zeros(log_m.size, dtype=np.complex128)
    out[keep] = spectrum
    dropped = log_m.size - keep.size
    return out, math.sqrt(2.0 * dropped) * math.exp(NEGLIGIBLE_LOG + 10.0)
