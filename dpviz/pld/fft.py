"""FFT convolution and its a-priori round-off bound, shared by the PLD grids and privacy buckets.

A linear convolution of real arrays through real FFTs of a fast length (a squaring transforms
once). Round-off: the computed product differs from the exact one by at most
``FFT_C``·u·log2(N)·‖a‖₂‖b‖₂ in every entry (u = 2^−53; a standard a-priori bound, Higham,
*Accuracy and Stability of Numerical Algorithms*, §24.1, with a generous constant), hence by
√N times that in L1. These are bounds assumed of the FFT library, not proved about it; they are
orders of magnitude below the widths we report.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray
from scipy import fft as sfft

FFT_C = 10.0
"""Constant in the round-off bound (generous; Higham §24.1)."""

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


def entry_error(n: int, norm_a: float, norm_b: float) -> float:
    """Bound on the round-off of each entry of an FFT convolution of length n."""
    return FFT_C * UNIT_ROUNDOFF * math.log2(max(n, 2)) * norm_a * norm_b


def l1_error(n: int, norm_a: float, norm_b: float) -> float:
    """Bound on the L1 norm of the round-off of an FFT convolution of length n (√n × per entry)."""
    return entry_error(n, norm_a, norm_b) * math.sqrt(n)
