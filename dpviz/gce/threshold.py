"""The threshold priors' class sums at δ0 = 0 in O(k), by two positive recurrences (docs/MATH.md §5.6).

For U{|b| ≥ k'} and U{|b| < k'} at δ0 = 0 the class n_B (n_C = k − n_B) needs, with x = e^{ε0},

    U(n_B) = Σ_{j ≥ k'} [y^j] (1 + xy)^{n_B} (1 + y/x)^{k − n_B},   D(n_B) = Σ_{j < k'} [y^j] (same),

(``dpviz.gce.classes``: the sums over s of a_s times a tail of c). Summed term by term that is O(k)
logaddexps per class, O(k²) per question (87 ms at k = 1,000). Moving one coordinate from the
(1 + y/x) factors to the (1 + xy) ones gives, for n = 0 … k − 1 (§5.6),

    U(n + 1) = x U(n) + (x − 1) φ_n,        D(n) = (D(n + 1) + (x − 1) φ_n) / x,
    φ_n = [y^{k'−1}] (1 + xy)^n (1 + y/x)^{k−1−n},

and φ obeys the three-term recurrence (N = k − 1, M = k' − 1, K = N − M)

    (N − n) φ_{n+1} = (x²(M − n) + (K − n)) φ_n + x² n φ_{n−1},

run upward below its turning point c = (x²M + K)/(1 + x²) and downward above it, so that every step
is a sum of positive terms: no cancellation, each step adds a few roundings to a relative error,
never multiplies one (§5.6 bounds the total; tests/gce/test_threshold.py measures it against 60-digit
sums). The start values U(0), D(k), φ_0 and φ_N are sums and points of C(n, j) x^{±j}, with ln C(n, j) in
Loader's form (``numerics.log_binom_pmf``). The walks keep each value as a mantissa and a power of
two (a double would overflow at k = 1,000), interpreted or compiled by Numba (``dpviz.jit``), the
same floats.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz import jit
from dpviz.numerics import LN2, log_binom_pmf, logsumexp

Buffer = Any
"""Python lists in the interpreter, NumPy arrays compiled (``threshold_sums`` makes them)."""

_BIG = 2.0**256
_SMALL = 2.0**-256
"""A walk's mantissa is renormalised (by a power of two, exactly) when it leaves [2^-256, 2^256]:
with ε0 ≤ 100 (x² ≤ 2^289) and n ≤ 10^7 no product of a step can overflow or underflow."""

EPS0_MAX = 100.0
"""Beyond this ε0 (``validation.EPSILON_MAX``) the walks' range argument does not hold:
``threshold_sums`` refuses (the callers check ε0 first)."""


def _split(v: float) -> tuple[float, int]:
    """(mantissa, exponent) with v = mantissa · 2^exponent, the mantissa in [0.5, 1) (v > 0)."""
    m, e = math.frexp(v)
    return m, e


def phi_walk(x2: float, big_n: int, m: int, split: int, up_start: float, up_exp: int, down_start: float,
             down_exp: int, mant: Buffer, expo: Buffer) -> None:
    """φ_0 … φ_N (N = ``big_n``) as mantissa · 2^expo into ``mant``, ``expo``: upward from φ_0 to the
    index ``split`` = ⌊c⌋, downward from φ_N above it (module docstring); ``m`` = k' − 1."""
    k_rest = big_n - m
    mant[0] = up_start
    expo[0] = up_exp
    prev, cur, e = 0.0, up_start, up_exp
    for n in range(split):  # c − n ≥ 1: both coefficients ≥ 0
        coef = x2 * (m - n) + (k_rest - n)
        new = (coef * cur + x2 * n * prev) / (big_n - n)
        prev, cur = cur, new
        if cur > _BIG or cur < _SMALL:
            cur, shift = _split(cur)
            prev = math.ldexp(prev, -shift)
            e += shift
        mant[n + 1] = cur
        expo[n + 1] = e
    if split == big_n:
        return
    mant[big_n] = down_start
    expo[big_n] = down_exp
    nxt, cur, e = 0.0, down_start, down_exp
    for n in range(big_n, split + 1, -1):  # n − c > 1: both coefficients ≥ 0
        coef = x2 * (n - m) + (n - k_rest)
        new = (coef * cur + (big_n - n) * nxt) / (x2 * n)
        nxt, cur = cur, new
        if cur > _BIG or cur < _SMALL:
            cur, shift = _split(cur)
            nxt = math.ldexp(nxt, -shift)
            e += shift
        mant[n - 1] = cur
        expo[n - 1] = e


def sums_walk(x: float, xm1: float, k: int, phi_mant: Buffer, phi_exp: Buffer, u0: float, u0_exp: int,
              dk: float, dk_exp: int, u_mant: Buffer, u_exp: Buffer, d_mant: Buffer, d_exp: Buffer) -> None:
    """U(0 … k) upward and D(k … 0) downward (module docstring), as mantissa · 2^expo."""
    cur, e = u0, u0_exp
    u_mant[0] = cur
    u_exp[0] = e
    for n in range(k):  # U(n + 1) = x U(n) + (x − 1) φ_n
        cur = x * cur + xm1 * math.ldexp(phi_mant[n], phi_exp[n] - e)
        if cur > _BIG or cur < _SMALL:
            cur, shift = _split(cur)
            e += shift
        u_mant[n + 1] = cur
        u_exp[n + 1] = e
    cur, e = dk, dk_exp
    d_mant[k] = cur
    d_exp[k] = e
    for n in range(k - 1, -1, -1):  # D(n) = (D(n + 1) + (x − 1) φ_n) / x
        cur = (cur + xm1 * math.ldexp(phi_mant[n], phi_exp[n] - e)) / x
        if cur > _BIG or cur < _SMALL:
            cur, shift = _split(cur)
            e += shift
        d_mant[n] = cur
        d_exp[n] = e


COMPILE_STEPS = 50_000
"""Steps a process walks in the interpreter (about 0.1 s) before it loads the compiled walks."""


def _warm(functions: jit.Functions) -> None:
    """Both walks on a tiny input, compiled (Numba compiles or loads them at the first call)."""
    mant, expo = np.zeros(3), np.zeros(3, dtype=np.int64)
    functions["phi_walk"](1.5, 2, 1, 1, 0.5, 0, 0.75, 1, mant, expo)
    out = [np.zeros(4), np.zeros(4, dtype=np.int64), np.zeros(4), np.zeros(4, dtype=np.int64)]
    functions["sums_walk"](1.2, 0.2, 3, mant, expo, 0.5, 0, 0.5, 1, *out)


LOOPS = jit.Loops(globals(), ("_split", "phi_walk", "sums_walk"), threshold=COMPILE_STEPS,
                  what="the threshold walks", warm=_warm)


def _log_comb(n: int, j: NDArray[np.float64]) -> NDArray[np.float64]:
    """ln C(n, j): Loader's Bin(n, ½) log-probability plus n ln 2 (an error of a few ulps of n ln 2,
    where log-gamma differences lose ulps of ln n!); the tilted binomials of ε0 would cancel terms of
    size n ε0 in the far tails a threshold reaches (§5.6)."""
    return log_binom_pmf(n, j, log_p=-LN2, log_q=-LN2) + n * LN2


def _start(log_value: float) -> tuple[float, int]:
    """A start value given by its logarithm, as (mantissa, exponent): e^log_value = m · 2^e."""
    e = math.floor(log_value / LN2)
    return math.exp(log_value - e * LN2), int(e)


@lru_cache(maxsize=64)
def threshold_sums(k: int, k2: int, eps0: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(ln U(n), ln D(n)) for n = n_B = 0 … k, 1 ≤ k' = ``k2`` ≤ k (module docstring), O(k). The
    arrays are read-only; 64 are remembered (a series asks for one per k of its curve)."""
    if not (1 <= k2 <= k and 0.0 <= eps0 <= EPS0_MAX):
        raise ValueError(f"threshold sums need 1 ≤ k' ≤ k and 0 ≤ ε0 ≤ {EPS0_MAX:g}")
    x, xm1, x2 = math.exp(eps0), math.expm1(eps0), math.exp(2.0 * eps0)
    big_n, m = k - 1, k2 - 1
    # φ_0 = C(N, m) x^{−m}, φ_N = C(N, m) x^m, U(0) = Σ_{t ≥ k'} C(k, t) x^{−t}, D(k) = Σ_{s < k'} C(k, s) x^s
    phi0, phin = _log_comb(big_n, np.array([float(m)]))[0] + np.array([-m * eps0, m * eps0])
    t = np.arange(k + 1, dtype=float)
    terms = _log_comb(k, t)
    u0 = logsumexp(terms[k2:] - t[k2:] * eps0)
    dk = logsumexp(terms[:k2] + t[:k2] * eps0)
    functions, compiled = LOOPS.pick(2 * k)
    buffers: list[Buffer] = [np.zeros(k), np.zeros(k, dtype=np.int64)]
    out: list[Buffer] = [np.zeros(k + 1), np.zeros(k + 1, dtype=np.int64)]
    out += [np.zeros(k + 1), np.zeros(k + 1, dtype=np.int64)]
    if not compiled:  # Python lists: the interpreter's loops index them faster than arrays
        buffers = [b.tolist() for b in buffers]
        out = [b.tolist() for b in out]
    split = min(big_n, max(0, math.floor((x2 * m + (big_n - m)) / (1.0 + x2))))  # ⌊c⌋ in 0 … N
    functions["phi_walk"](x2, big_n, m, split, *_start(phi0), *_start(phin), *buffers)
    functions["sums_walk"](x, xm1, k, *buffers, *_start(u0), *_start(dk), *out)
    up = np.log(np.asarray(out[0], dtype=float)) + np.asarray(out[1], dtype=float) * LN2
    down = np.log(np.asarray(out[2], dtype=float)) + np.asarray(out[3], dtype=float) * LN2
    up.flags.writeable = False
    down.flags.writeable = False
    return up, down
