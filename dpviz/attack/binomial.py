"""Binomial draws with the numbers of numpy's ``Generator.binomial`` from the same generator, four to
five times faster where numpy draws by inversion (issue 20: the finite laws' trials, docs/MATH.md
§14.1, were most of an attack-lab change).

numpy (``random_binomial`` in numpy/random/src/distributions/distributions.c) draws Bin(n, p) with
n·min(p, 1 − p) ≤ 30 by inversion: one uniform U = m·2^-53 (``next_double``), then X = 0, 1, … while
U > px_X, U −= px_X, px_{X+1} = ((n − X)·p·px_X)/((X + 1)·q) (p ≤ ½; for p > ½ it draws n − Bin(n,
1 − p)). Every step is a rounded subtraction, which is monotone in U, so the X it returns is a
non-decreasing step function of U: X(U) = #{j : U > t_j} with t_j the largest grid point at which
the walk has stopped by step j. dpviz finds these thresholds once per (n, p), with the same
floating-point steps as numpy, draws the uniforms with ``Generator.random`` (the same ``next_double``
calls, so the generator ends where numpy's leaves it) and counts the thresholds below each
(``dpviz.attack.lookup``). A walk
past its bound (numpy then draws a new U, probability about 10^-16) and every other case (an array n,
numpy's BTPE branch) are left to numpy itself. tests/attack/test_binomial.py holds the draws and the
generator's state to numpy's, bit for bit.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from numpy.typing import NDArray

from dpviz.attack.lookup import Lookup

GRID = 2.0 ** -53
"""numpy's uniforms are whole multiples of 2^-53 in [0, 1)."""

TOP = (2 ** 53 - 1) * GRID
"""The largest uniform numpy draws."""

WINDOW = 64
"""Grid points either side of a threshold's exact sum searched at once (the subtractions' rounding
moves it by at most half a grid point per step; a threshold outside is found by bisection)."""

INVERSION_MEAN = 30.0
"""numpy draws by inversion when n·min(p, 1 − p) is at most this (its ``random_binomial``)."""

CACHED = 64
"""(n, p) pairs whose thresholds are kept: a walk of the attack lab revisits a few."""


def binomial(rng: np.random.Generator, n: int, p: float, size: int) -> NDArray[np.int64]:
    """``rng.binomial(n, p, size)`` for an integer n and a probability p: the same numbers, and
    ``rng`` left in the same state (module docstring)."""
    flip = p > 0.5
    small = 1.0 - p if flip else p  # numpy's own q = 1.0 − p for p > ½
    if n <= 0 or p == 0.0 or small * n > INVERSION_MEAN or size <= 0:
        return rng.binomial(n, p, size=size)
    t, count_below = _thresholds(int(n), small)
    state = rng.bit_generator.state
    u = rng.random(size)
    x = count_below(u)  # #{j : t_j < u}
    if np.any(u > t[-1]):  # numpy's walk went past its bound and drew again: let numpy draw
        rng.bit_generator.state = state
        return rng.binomial(n, p, size=size)
    return n - x if flip else x


def inversion_steps(n: int, p: float) -> tuple[list[float], int]:
    """numpy's px_0 … px_bound and bound for Bin(n, p), p ≤ ½ (``random_binomial_inversion``),
    each computed as numpy computes it (C's exp and log are the ones ``math`` calls)."""
    q = 1.0 - p
    qn = math.exp(n * math.log(q))
    mean = n * p
    bound = int(min(n, mean + 10.0 * math.sqrt(mean * q + 1)))
    px = [qn]
    for x in range(1, bound + 1):
        px.append(((n - x + 1) * p * px[-1]) / (x * q))
    return px, bound


def _stopped(px: list[float], j: int, u: float) -> bool:
    """numpy's walk from ``u``: has it stopped at step j (its j subtractions, then U ≤ px_j)?"""
    for m in range(j):
        u -= px[m]
    return u <= px[j]


def _bisected(px: list[float], j: int) -> float:
    """The largest grid point u with ``_stopped(px, j, u)`` (−1 when there is none), by bisection."""
    if _stopped(px, j, TOP):
        return TOP
    if not _stopped(px, j, 0.0):
        return -1.0
    lo, hi = 0, 2 ** 53 - 1  # stopped at lo, not at hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if _stopped(px, j, mid * GRID) else (lo, mid)
    return lo * GRID


@functools.lru_cache(maxsize=CACHED)
def _thresholds(n: int, p: float) -> tuple[NDArray[np.float64], Lookup]:
    """t_j = the largest grid point whose walk stops by step j (a running maximum over the steps'
    own largest points, found in a window about the exact sum px_0 + … + px_j)."""
    px, bound = inversion_steps(n, p)
    steps = np.arange(bound + 1)
    sums = np.array([math.fsum(px[:j + 1]) for j in steps])
    m = np.floor(sums / GRID)[:, None] + np.arange(-WINDOW, WINDOW + 1)[None, :]
    u = np.clip(m, 0, 2 ** 53 - 1) * GRID
    w = u.copy()
    for i in range(bound):  # the walk's subtractions, in numpy's order, for every step at once
        w = np.where(i < steps[:, None], w - px[i], w)
    stopped = w <= np.asarray(px)[:, None]
    largest = u[steps, np.maximum(stopped.sum(axis=1) - 1, 0)]
    for j in np.flatnonzero(~stopped[:, 0] | stopped[:, -1]):  # not bracketed by the window
        largest[j] = _bisected(px, int(j))
    t = np.maximum.accumulate(largest)
    return t, Lookup(t, 1.0, "left")
