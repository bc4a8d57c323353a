"""FFT convolution and its a-priori round-off bound, shared by the PLD grids and privacy buckets.

A linear convolution of real arrays through real FFTs of a fast length N (a squaring transforms
once). Round-off (review R5): Higham, *Accuracy and Stability of Numerical Algorithms* (2nd ed.),
§24.1, Thm 24.2: a computed FFT ŷ of x satisfies ‖ŷ − Fx‖₂ ≤ κ‖Fx‖₂ = κ√N‖x‖₂, with
κ = log2(N)·η/(1 − log2(N)·η), η = μ + γ₄(√2 + μ) ≈ 6.7u (u = 2^−53, μ ≈ u the twiddle error).
For c = F⁻¹(Fa ⊙ Fb), using ‖Fa‖₂ = √N‖a‖₂ and ‖Fb‖∞ ≤ ‖b‖₁:

- forward errors: ‖E_a ⊙ Fb‖₂ ≤ κ√N‖a‖₂‖b‖₁, ‖Fa ⊙ E_b‖₂ ≤ κ√N‖a‖₁‖b‖₂, ‖E_a ⊙ E_b‖₂ ≤ κ²N‖a‖₂‖b‖₂;
- the pointwise product adds ≤ √2γ₂ relative, the inverse FFT κ relative; F⁻¹ divides ‖·‖₂ by √N.

So ‖ĉ − a*b‖₂ ≤ (2κ + 3u)(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂) + κ²√N‖a‖₂‖b‖₂ (to first order in κ inside the
brackets): ``entry_error`` is C·u·log2N·(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂) + (C·u·log2N)²√N‖a‖₂‖b‖₂ with
C = ``FFT_C`` = 20 ≥ 2·6.7 + 3 (+ slack for the neglected second-order factors); it bounds every
entry (‖·‖∞ ≤ ‖·‖₂), and √n times it bounds the L1 norm of the n entries kept. The earlier
C·u·log2N·‖a‖₂‖b‖₂ is not Higham's bound and was exceeded (1.9× at 60,000 bins). The theorem is
for radix-2 Cooley–Tukey with accurate twiddles; that scipy's mixed-radix FFT obeys it with this
constant is an assumption about the library, checked against exact integer convolutions in
``tests/pld/test_fft_bound.py``.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sfft

FFT_C = 20.0
"""Constant C of the round-off bound (module docstring: 2·6.7 + 3, rounded up)."""

UNIT_ROUNDOFF = 2.0**-53


def convolve(a: NDArray[np.float64], b: NDArray[np.float64], *, same: bool = False) -> NDArray[np.float64]:
    """Linear convolution a * b (length a.size + b.size − 1); ``same``: b is a (transformed once)."""
    n = a.size + b.size - 1
    nfft = sfft.next_fast_len(n, real=True)
    fa = sfft.rfft(a, nfft, workers=-1)
    fb = fa if same else sfft.rfft(b, nfft, workers=-1)
    return np.asarray(sfft.irfft(fa * fb, nfft, workers=-1)[:n], dtype=np.float64)


def norm(x: NDArray[np.float64]) -> float:
    """‖x‖₂ (einsum: no BLAS thread start-up for the many small arrays)."""
    return math.sqrt(float(np.einsum("i,i->", x, x)))


def norm1(x: NDArray[np.float64]) -> float:
    """‖x‖₁."""
    return float(np.abs(x).sum())


def entry_error(n: int, a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Bound on ‖round-off‖₂ (so on every entry) of the FFT convolution a * b of length n
    (module docstring; the transform length is the fast length ≥ n that ``convolve`` uses)."""
    nfft = sfft.next_fast_len(max(n, 1), real=True)
    kappa = FFT_C * UNIT_ROUNDOFF * math.log2(max(nfft, 2))
    na, nb = norm(a), norm(b)
    return kappa * (na * norm1(b) + norm1(a) * nb) + kappa * kappa * math.sqrt(nfft) * na * nb


def l1_error(n: int, a: NDArray[np.float64], b: NDArray[np.float64]) -> float:
    """Bound on the L1 norm of the round-off of the n kept entries (√n × the ℓ2 bound)."""
    return entry_error(n, a, b) * math.sqrt(n)


def norm_c(z: NDArray[np.complex128]) -> float:
    """‖z‖₂ of a complex vector."""
    v = z.view(np.float64)
    return math.sqrt(float(np.einsum("i,i->", v, v)))
