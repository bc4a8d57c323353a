"""The two scans of the optimistic (lower) grid (docs/MATH.md §16; ``dpviz.pld.postprocess``).

Each scan forms the lower grid's symbols one lattice point after the other, and each symbol takes a
fraction of a half-cell that depends on the balance the symbols before it left: a sequential,
data-dependent loop that array operations cannot express. The interpreter runs it at about 1 µs a
half-cell (on Python lists; σ = 0.646, q = 1.3e-4, 127 steps, δ = 1e-8 makes four scans of 50,000
half-cells); compiled by Numba it runs about 100 times faster. Numba costs a process about 0.3 s of
CPU and 150 MiB to load (3 s once per installation to compile), so the compiled scans are used once
a process has scanned ``COMPILE_CELLS`` half-cells (a long query, or a server, which loads them at
start: ``dpviz.jit.compile_all``); before, the interpreter runs the same functions. Both give the same masses
bit for bit (tested), so when the switch happens never shows.

Arguments: the half-cell terms of ``postprocess.HalfCells`` as lists or arrays (``cells``: p, b, a, b2, a2,
log_q, noise, noise_p, log_noise_q, in that order, NaN ``log_q`` where a Q-mass is imprecise), the
first lattice index ``lo``, the grid ``offset`` and the half-cell width ``g``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz import jit

Buffer = Any
"""A scan's arrays: Python lists in the interpreter (indexing a list is 2–3 times faster there than
indexing an array), NumPy arrays compiled (``masses`` makes them)."""

_CAP = 700.0
"""Exponents are capped here (e^{700} is finite): an imprecise far cell never overflows a balance."""


def _cost(cells: tuple, i: int, m: int, top: float) -> float:
    """e^{m·h}Q − P of piece i below the symbol's point m·h (``top``), plus its round-off: the
    half-cell terms |A| or |A2| for the two pieces next to it, else from ln Q (∞ where that is
    imprecise)."""
    pl, _bl, al, _b2l, a2l, lql, nl, npl, lnql = cells
    d = 2 * m - i  # distance in half-cells from the piece's lower end up to m·h
    if d == 1:
        return al[i] + nl[i]
    if d == 2:
        return a2l[i] + nl[i]
    if math.isnan(lql[i]):
        return math.inf
    return math.exp(min(top + lql[i], _CAP)) - pl[i] + npl[i] + math.exp(min(top + lnql[i], _CAP))


def downward(cells: tuple, lo: int, offset: float, g: float, margin: float, rem: Buffer, out: Buffer,
             stop: int) -> None:
    """Top-down scan (``postprocess.windowed_masses``), in place on ``rem`` (fraction of each
    half-cell not yet given to a symbol) and ``out`` (the masses of the symbols, lattice points
    from ``lo``), from the top lattice point down to ``stop``.

    Symbol m first takes what is left above m·h (each piece adds P − e^{mh}Q ≥ 0 to its balance),
    then, while the balance is positive, pieces below m·h (each adds P − e^{mh}Q < 0), the last one
    in the fraction that brings the balance to its margin. Where the pieces below run out or are
    imprecise the balance stays positive (loss above m·h, stored at m·h: sound). Every piece is
    charged its round-off (noise) plus ``margin``·P against the balance."""
    pl, bl, _al, b2l, _a2l, lql, nl, npl, lnql = cells
    n = len(out)
    j = len(pl) - 1  # next half-cell to consume (the cell above the grid first)
    for m in range(n - 1, stop - 1, -1):
        bal = 0.0
        pm = 0.0
        top = (lo + m) * 2.0 * g + offset  # m·h (+ offset) in absolute loss
        while j >= 2 * m:  # phase 1: pieces above m·h
            if j == 2 * m:
                term = bl[j] - nl[j]
            elif j == 2 * m + 1:
                term = b2l[j] - nl[j]
            else:  # not reached (symbol m + 1 took everything above (m + 1)h); kept for safety
                term = 0.0 if math.isnan(lql[j]) else pl[j] - math.exp(min(top + lql[j], _CAP))
                term -= npl[j] + math.exp(min(top + lnql[j], _CAP))
            bal += rem[j] * (term - margin * pl[j])
            pm += rem[j] * pl[j]
            rem[j] = 0.0
            j -= 1
        k = j
        while bal > 0.0 and k >= 0:  # phase 2: pieces below m·h while the balance allows
            if math.isnan(lql[k]):  # imprecise Q-mass: stop (positive balance left: sound)
                break
            cost = _cost(cells, k, m, top) + margin * pl[k]
            take = rem[k] if cost <= 0.0 else min(rem[k], bal / cost)
            bal -= take * cost
            pm += take * pl[k]
            rem[k] -= take
            if rem[k] > 0.0:
                break
            k -= 1
        out[m] += pm


def _below(cells: tuple, lo: int, offset: float, g: float, margin: float, rem: Buffer, m: int, j: int,
           touched_i: Buffer, touched_r: Buffer, count: int) -> tuple[float, float, int]:
    """Phase 1 of the upward symbol m: the pieces j..2m − 1 left, all taken; their balance, P-mass
    and the new count of (piece, fraction) pairs recorded in ``touched_*`` (to undo the symbol)."""
    pl = cells[0]
    bal = 0.0
    pm = 0.0
    top = (lo + m) * 2.0 * g + offset  # m·h (+ offset)
    for i in range(j, 2 * m):
        r = rem[i]
        if r > 0.0:
            cost = _cost(cells, i, m, top)
            if cost == math.inf:  # imprecise (|A| = ∞ marks it): no balance is possible
                bal = -math.inf
            else:
                bal -= r * (cost + margin * pl[i])
            pm += r * pl[i]
            touched_i[count] = i
            touched_r[count] = r
            count += 1
            rem[i] = 0.0
    return bal, pm, count


def upward(cells: tuple, lo: int, offset: float, g: float, margin: float, out: Buffer, rem: Buffer,
           touched_i: Buffer, touched_r: Buffer) -> None:
    """Bottom-up scan, the mirror of ``downward``, in place on ``out``. Symbol m first takes what is
    left below m·h, then pieces above m·h until the balance is back at 0, the last one in the
    fraction that does it. Where the pieces above run out (at the top) or are imprecise, the balance
    stays negative: the symbol is undone, the rest of the law is scanned from the top down to m
    (``downward``), and what is then left below m·h (loss ℓ with ℓ − m·h ≥ ln(P'/(P' − X)), X the
    balance) is stored at the lattice point below ℓ; a balance of −∞ (an imprecise Q-mass) drops
    the symbol (mass removed from a lower bound only lowers δ). ``rem`` starts at 1 for every
    half-cell; ``touched_i`` and ``touched_r`` are work space of the same length (``masses``)."""
    pl, bl, _al, b2l, _a2l, lql, nl, npl, lnql = cells
    n = len(out)
    h = 2.0 * g
    size = len(pl)
    j = 0  # next half-cell to consume (from the bottom)
    for m in range(n):
        j0 = j
        bal, pm, count = _below(cells, lo, offset, g, margin, rem, m, j, touched_i, touched_r, 0)
        j = max(j, 2 * m)
        top = (lo + m) * h + offset  # m·h (+ offset)
        k = j
        while bal < 0.0 and k < size:  # phase 2: pieces above m·h while the balance is negative
            if math.isnan(lql[k]) or bal == -math.inf:
                break
            if k == 2 * m:
                term = bl[k] - nl[k]
            elif k == 2 * m + 1:
                term = b2l[k] - nl[k]
            else:
                term = pl[k] - math.exp(min(top + lql[k], _CAP)) - npl[k] - math.exp(min(top + lnql[k], _CAP))
            term -= margin * pl[k]
            take = rem[k] if term <= 0.0 else min(rem[k], -bal / term)
            bal += take * term
            pm += take * pl[k]
            touched_i[count] = k
            touched_r[count] = rem[k]
            count += 1
            rem[k] -= take
            if rem[k] > 0.0:
                break
            k += 1
        if pm == 0.0:
            continue
        if bal >= -0.5 * margin * pm:  # balanced: the margins reserved (margin·P') cover the rest
            out[m] += pm
        elif bal == -math.inf:  # an imprecise piece below: the symbol is dropped
            continue
        else:
            # the pieces above ran out or are imprecise: a small σ's far tail cannot repay the spike
            # of a subsampled law, and would all be stored far below its loss (ε lower end 0 at
            # σ = 0.3, q = 1e-4). This symbol is undone, the rest is scanned from the top down to m,
            # and what that leaves below m·h goes below its loss.
            for t in range(count - 1, -1, -1):
                rem[touched_i[t]] = touched_r[t]
            downward(cells, lo, offset, g, margin, rem, out, m)
            bal, pm, _count = _below(cells, lo, offset, g, margin, rem, m, j0, touched_i, touched_r, 0)
            ratio = pm * (1.0 - 1e-12) / (pm - bal) if pm > 0.0 and bal > -math.inf else 0.0
            if ratio > 0.0:  # else dropped (P' − bal so large that the ratio underflows: no loss to use)
                # the balance is ≤ the true P' − e^{mh}Q' (noise and margins subtracted), so
                # ℓ − m·h ≥ ln(P'/(P' − bal)) < 0; rounded towards −∞
                shift = math.log(ratio) / h
                low = m + math.floor(shift - 1e-9 * (1.0 + abs(shift)))
                if low >= 0:
                    out[low] += pm
            break


COMPILE_CELLS = 300_000
"""Half-cells a process scans in the interpreter (about 0.3 s) before it loads the compiled scans
(about 0.3 s of CPU once, Numba's import included): a short command-line query never pays for
Numba, a long one or a server does once."""


def _warm(functions: jit.Functions) -> None:
    """Both scans on a tiny input, compiled (Numba compiles or loads them at the first call)."""
    cells = tuple(np.ones(3) for _ in range(9))
    functions["downward"](cells, 0, 0.0, 0.5, 1e-13, np.ones(3), np.zeros(2), 0)
    functions["upward"](cells, 0, 0.0, 0.5, 1e-13, np.zeros(2), np.ones(3), np.zeros(3, dtype=np.int64),
                        np.zeros(3))


LOOPS = jit.Loops(globals(), ("_cost", "_below", "downward", "upward"), threshold=COMPILE_CELLS,
                  what="the lower grid's scans", warm=_warm)


def masses(terms: tuple[NDArray[np.float64], ...], lo: int, offset: float, g: float, margin: float,
           on_p: NDArray[np.float64], *, upward: bool) -> NDArray[np.float64]:
    """The lower grid's masses at the lattice points from ``lo``: ``on_p`` (the atoms on them) plus
    the symbols of one scan (``upward``: bottom-up, else top-down), by the compiled or the
    interpreted scans (``LOOPS``), each with the buffers it runs fastest on."""
    n = terms[0].size
    functions, compiled = LOOPS.pick(n)
    cells: tuple
    out: Buffer
    rem: Buffer
    touched_i: Buffer
    touched_r: Buffer
    if not compiled:  # the interpreter: Python lists and floats
        cells = tuple(t.tolist() for t in terms)
        out, rem = on_p.tolist(), [1.0] * n
        touched_i, touched_r = [0] * n, [0.0] * n
    else:
        cells, out, rem = terms, on_p.copy(), np.ones(n)
        touched_i, touched_r = np.zeros(n, dtype=np.int64), np.zeros(n)
    if upward:
        functions["upward"](cells, lo, offset, g, margin, out, rem, touched_i, touched_r)
    else:
        functions["downward"](cells, lo, offset, g, margin, rem, out, 0)
    return np.asarray(out, dtype=np.float64)
