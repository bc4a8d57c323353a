"""A composition's entries outside its transforms (``dpviz.pld.power``, docs/MATH.md §17): the kept
entries as one run, their untilting, direct sums of small compositions and trimmed zero ends."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from dpviz.pld import fft
from dpviz.pld.grid import GridPLD

U = fft.UNIT_ROUNDOFF


def kept_run(kept: NDArray[np.bool_]) -> NDArray[np.intp] | tuple[int, int]:
    """The indices of the true entries of ``kept``: (a, b) where they are the one run a … b − 1 (the
    usual case, no index array), else ``np.flatnonzero(kept)``."""
    n = int(np.count_nonzero(kept))
    if n:
        a = int(np.argmax(kept))  # the first true entry: the run holds all n if a … a + n − 1 do
        if int(np.count_nonzero(kept[a:a + n])) == n:
            return a, a + n
    return np.flatnonzero(kept)


def untilt(out: NDArray[np.float64], nz: NDArray[np.intp] | tuple[int, int], mass: NDArray[np.float64], *,
            s_lo: int, h: float, offset: float, theta: float, norm: float, log_total: float,
            scratch: bool = False) -> float:
    """mass[nz] = min(ĉ·e^{norm − θ·loss}, total) in log space, loss = (s_lo + nz)·h + offset (module
    docstring), and the relative rounding ζ of the untilting; ``nz`` the kept indices or the run
    (a, b) of them (``kept_run``). On a run the same operations run on slices, in place (``scratch``: in
    ``out`` itself, which is then overwritten): the same floats with fewer copies."""
    if not isinstance(nz, tuple) and nz.size and int(nz[-1]) - int(nz[0]) + 1 == nz.size:
        nz = (int(nz[0]), int(nz[-1]) + 1)
    if isinstance(nz, tuple):
        a, b = nz
        if a == b:
            return 2.0 * U * (abs(norm) + 3.0)
        expo = mass[a:b]  # the exponent is built where the masses go
        expo[...] = np.arange(s_lo + a, s_lo + b, dtype=np.float64)  # exact integers, as (s_lo + nz)
        expo *= h
        expo += offset
        ends = max(abs(theta * float(expo[0])), abs(theta * float(expo[-1])))
        np.multiply(theta, expo, out=expo)
        np.subtract(norm, expo, out=expo)
        log_c = np.log(out[a:b], out=out[a:b] if scratch else None)
        log_c += expo
        np.minimum(log_c, log_total, out=log_c)
        np.exp(log_c, out=mass[a:b])
        return 2.0 * U * (abs(norm) + ends + 3.0)
    losses = (s_lo + nz) * h + offset  # increasing: |θ·loss| is largest at an end
    tilt_x = theta * losses
    expo_out = norm - tilt_x
    with np.errstate(divide="ignore"):
        log_c = np.minimum(np.log(out[nz]) + expo_out, log_total)
    mass[nz] = np.exp(log_c)
    return 2.0 * U * (abs(norm) + (max(abs(float(tilt_x[0])), abs(float(tilt_x[-1]))) if nz.size else 0.0)
                      + 3.0)


DIRECT_BINS = 2048
"""A composition whose whole support has fewer bins is summed directly (no transform): exact up to a
relative error, which matters for a finite pair read at δ near 1e-12 (randomized response: exact)."""


def direct_sum(grids: Sequence[tuple[GridPLD, int]], pessimistic: bool) -> NDArray[np.float64]:
    """Π_i g_i^{*k_i} by direct sums of non-negative products (powers by squaring). Each product's
    entries have relative error ≤ γ_m (m terms, Higham §3.1); through the K − 1 products of any power
    tree they compound to ≤ (1 + γ_m)^K − 1, absorbed by scaling towards the sound side."""
    out: NDArray[np.float64] | None = None
    m = 1
    for g, k in grids:
        result: NDArray[np.float64] | None = None
        base = g.mass
        while True:
            if k & 1:
                m = max(m, min(base.size, result.size) if result is not None else 1)
                result = base if result is None else np.convolve(result, base)
            k >>= 1
            if not k:
                break
            m = max(m, base.size)
            base = np.convolve(base, base)
        assert result is not None
        if out is not None:
            m = max(m, min(out.size, result.size))
        out = result if out is None else np.convolve(out, result)
    assert out is not None
    kk = sum(k for _, k in grids) + len(grids)
    gamma = (m + 2) * U / (1.0 - (m + 2) * U)
    nu = math.expm1(kk * math.log1p(gamma))
    return np.maximum(out, 0.0) * ((1.0 + nu) if pessimistic else 1.0 / (1.0 + nu))


def trimmed(g: GridPLD) -> GridPLD:
    """``g`` without zero bins at either end (they would only widen the transform)."""
    nz = np.flatnonzero(g.mass)
    if nz.size == 0 or (nz[0] == 0 and nz[-1] == g.mass.size - 1):
        return g
    return GridPLD(h=g.h, lo=g.lo + int(nz[0]), mass=g.mass[nz[0]:nz[-1] + 1], p_inf=g.p_inf,
                   pessimistic=g.pessimistic, err=g.err, top=g.top, tilt=g.tilt, offset=g.offset)
