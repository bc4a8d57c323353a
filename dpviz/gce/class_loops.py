"""The class tables' loops, interpreted or compiled by Numba (``dpviz.jit``): the layer recursion of
g and the classes' multinomial prefactors (docs/MATH.md §5.5), the floats of the numpy steps they
replace, bit for bit.

``layer_walk`` runs ``g(n_B+1, n_C, r) = g(n_B, n_C, r) + e^{ε0} g(n_B, n_C, r+1)`` (and with
e^{−ε0} for n_C at n_B = 0) in log space over each layer's band of columns that can be positive
(``dpviz.gce.classes._recursion`` as arrays, one layer at a time), keeping two layers, and writes
the listed classes' ln g in the order of the class tables (layer m, then n_B, then r = n_A).
``assemble_walk`` adds each class's ln multinomial × prefactor in place, where the arrays took ~k³/6
(n_A, n_B, n_C) triples (issue 20: 883,300 classes at k = 200, δ0 = 1e-3). Each step is the one
IEEE operation numpy did (``np.logaddexp`` is numpy's ``npy_logaddexp``: libm's ``exp`` and
``log1p``, which the interpreter and Numba call too), so the three give the same floats
(tests/gce/test_class_loops.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from numpy.typing import NDArray

from dpviz import jit
from dpviz.numerics import logaddexp_float

Buffer = Any
"""Python lists in the interpreter, NumPy arrays compiled (the callers make them)."""

def _emit(layer: Buffer, a: int, b: int, tail: int, m: int, k: int, all_r: bool, out: Buffer,
          pos: int) -> int:
    """Write layer m's ln g(n_B, m − n_B, r) for n_B = 0 … m and r = 0 … k − m (``all_r``) or r = 0
    into ``out`` from ``pos``: −∞ outside the band a … b − 1, column ``tail``'s value past it
    (``layer_walk``). The next position."""
    w = min(b, tail + 1) - a
    cols = k - m + 1 if all_r else 1
    for n_b in range(m + 1):
        row = n_b * w - a
        for r in range(cols):
            out[pos] = layer[row + min(r, tail)] if a <= r < b else -math.inf
            pos += 1
    return pos


def layer_walk(log_v: Buffer, lo: int, hi: int, tail: int, k: int, eps0: float, m_lo: int, m_hi: int,
               all_r: bool, prev: Buffer, cur: Buffer, out: Buffer) -> int:
    """The recursion's layers m = 0 … ``m_hi`` (layer m: rows n_B = 0 … m of its band's columns
    a_m … b_m − 1, a_m = max(0, lo − m), b_m = max(a_m, min(hi, k − m) + 1), lo and hi the first
    and last |b| of positive weight, or k + 1 and −1 when there is none); layers ``m_lo`` … ``m_hi``
    written to ``out`` (``_emit``). ``prev`` and ``cur`` hold a layer each. Returns the count written.

    ``tail``: where ln v_j is the same float for every j from ``tail`` to hi = k (U{|b| ≥ k'}: from
    k'), every column r ≥ ``tail`` of a layer holds the same float in each row (by induction on m:
    column r ≤ k − m of layer m reads columns r and r + 1 of one row of layer m − 1, both ≥ ``tail``
    and inside its band, which ends at k − m + 1 when hi = k: the same two floats for every such r),
    so only column ``tail`` (and those before it) is computed and stored, and read for those beyond:
    ~(k' + 1)k²/2 cells instead of ~k³/6 for U{|b| ≥ k'}.
    ``k + 1`` where there is no such run."""
    pos = 0
    a_prev, b_prev = (lo, hi + 1) if lo <= hi else (0, 0)
    for c in range(a_prev, min(b_prev, tail + 1)):
        prev[c - a_prev] = log_v[c]
    if m_lo == 0:
        pos = _emit(prev, a_prev, b_prev, tail, 0, k, all_r, out, pos)
    for m in range(1, m_hi + 1):
        a = max(0, lo - m)
        b = max(a, min(hi, k - m) + 1)
        end = min(b, tail + 1)  # columns a … end − 1 computed (``tail`` and those before it)
        w, w_prev = end - a, min(b_prev, tail + 1) - a_prev
        for n_b in range(m + 1):  # row n_B of layer m from row n_B − 1 (a B outcome) or row 0 (a C one)
            src = (n_b - 1 if n_b > 0 else 0) * w_prev - a_prev
            step = eps0 if n_b > 0 else -eps0
            row = n_b * w - a
            for c in range(a, end):
                x = prev[src + min(c, tail)] if a_prev <= c < b_prev else -math.inf
                y = prev[src + min(c + 1, tail)] if a_prev <= c + 1 < b_prev else -math.inf
                cur[row + c] = logaddexp_float(x, step + y)
        prev, cur = cur, prev
        a_prev, b_prev = a, b
        if m >= m_lo:
            pos = _emit(prev, a, b, tail, m, k, all_r, out, pos)
    return pos


def assemble_walk(k: int, m_lo: int, m_hi: int, all_r: bool, log_k_fact: float, log_fact: Buffer,
                  per_bc: float, eps0: float, log_delta0: float, out0: Buffer, out1: Buffer) -> None:
    """Add each class's ln(multinomial × prefactor) to ln g in ``out0`` and ``out1`` (the classes of
    layers ``m_lo`` … ``m_hi`` in ``_emit``'s order): ln k! − ln n_A! − ln n_B! − ln n_C! − ln n_D!,
    plus (n_B + n_C)·``per_bc`` plus n_C ε0, plus (n_A + n_D) ln δ0 when ``log_delta0`` is finite
    (δ0 > 0), each sum in the order ``classes.assemble`` took it."""
    with_delta = log_delta0 > -math.inf
    pos = 0
    for m in range(m_lo, m_hi + 1):
        cols = k - m + 1 if all_r else 1
        for n_b in range(m + 1):
            n_c = m - n_b
            for n_a in range(cols):
                log_mult = log_k_fact - log_fact[n_a] - log_fact[n_b] - log_fact[n_c] - log_fact[k - m - n_a]
                base = log_mult + m * per_bc + n_c * eps0
                if with_delta:
                    base = base + (k - m) * log_delta0
                out0[pos] = base + out0[pos]
                out1[pos] = base + out1[pos]
                pos += 1


def split_walk(log_p: Buffer, log_q: Buffer, loss: Buffer, log_pf: Buffer, only: Buffer) -> tuple[int, int]:
    """The classes with ln P finite: where ln Q is finite too, their loss ln P − ln Q into ``loss`` and
    ln P into ``log_pf``; where it is not, ln P into ``only`` (both in the classes' order). Returns
    the two counts."""
    n_f = 0
    n_o = 0
    for i in range(len(log_p)):
        lp = log_p[i]
        if math.isfinite(lp):
            lq = log_q[i]
            if math.isfinite(lq):
                loss[n_f] = lp - lq
                log_pf[n_f] = lp
                n_f += 1
            else:
                only[n_o] = lp
                n_o += 1
    return n_f, n_o


COMPILE_STEPS = 100_000
"""Cells and classes a process walks in the interpreter (about 0.1 s) before it loads the compiled
loops."""


def _warm(functions: jit.Functions) -> None:
    """Both loops on a tiny input, compiled (Numba compiles or loads them at the first call)."""
    out0, out1 = np.zeros(7), np.zeros(7)
    functions["layer_walk"](np.array([-1.0, -0.5, -0.5]), 0, 2, 1, 2, 0.1, 1, 2, True, np.zeros(8),
                            np.zeros(8), out0)
    functions["assemble_walk"](2, 1, 2, True, 0.7, np.zeros(3), -0.5, 0.1, -3.0, out0, out1)
    functions["split_walk"](out0, out1, np.zeros(7), np.zeros(7), np.zeros(7))


LOOPS = jit.Loops(globals(), ("logaddexp_float", "_emit", "layer_walk", "assemble_walk", "split_walk"),
                  threshold=COMPILE_STEPS, what="the class-table loops", warm=_warm)


def level_classes(k: int, m_lo: int, m_hi: int, all_r: bool) -> int:
    """Classes of layers m_lo … m_hi: (m + 1)(k − m + 1) each, or m + 1 with r = 0 only."""
    m = np.arange(m_lo, m_hi + 1)
    return int(np.sum((m + 1) * ((k - m + 1) if all_r else 1)))


def band_cells(k: int, lo: int, hi: int, tail: int, m_hi: int) -> tuple[int, int]:
    """(cells of the recursion's layers 1 … m_hi, cells of its widest layer) for the band lo … hi
    with the columns past ``tail`` not computed (``layer_walk``)."""
    m = np.arange(m_hi + 1)
    a = np.maximum(0, lo - m)
    b = np.maximum(a, np.minimum(hi, k - m) + 1)
    cells = (m + 1) * (np.minimum(b, tail + 1) - a)
    cells[0] = max(0, min(hi, tail) - lo + 1)
    return int(cells[1:].sum()), int(cells.max())


def constant_tail(log_v: NDArray[np.float64], hi: int) -> int:
    """The first j of the run of ln v_j equal to ln v_k as floats (bit for bit) that reaches k, when
    the last positive weight is at k (``layer_walk``'s ``tail``); k + 1 otherwise."""
    k = log_v.size - 1
    if hi != k:
        return k + 1
    bits = log_v.view(np.int64)
    differs = np.flatnonzero(bits != bits[k])
    return int(differs[-1]) + 1 if differs.size else 0


def log_g_layers(log_v: NDArray[np.float64], k: int, eps0: float, levels: tuple[int, int], *,
                 all_r: bool) -> NDArray[np.float64]:
    """ln g of the classes of ``levels`` (``layer_walk``) for level weights ln v_j (j = 0 … k)."""
    log_v = np.ascontiguousarray(log_v, dtype=float)
    finite = np.flatnonzero(np.isfinite(log_v))
    lo, hi = (int(finite[0]), int(finite[-1])) if finite.size else (k + 1, -1)
    tail = constant_tail(log_v, hi)
    m_lo, m_hi = levels
    size = level_classes(k, m_lo, m_hi, all_r)
    cells, widest = band_cells(k, lo, hi, tail, m_hi)
    functions, compiled = LOOPS.pick(cells + size)
    prev, cur, out = np.empty(max(widest, 1)), np.empty(max(widest, 1)), np.empty(size)
    if compiled:
        functions["layer_walk"](log_v, lo, hi, tail, k, eps0, m_lo, m_hi, all_r, prev, cur, out)
        return out
    lists = [log_v.tolist(), prev.tolist(), cur.tolist(), out.tolist()]
    functions["layer_walk"](lists[0], lo, hi, tail, k, eps0, m_lo, m_hi, all_r, lists[1], lists[2], lists[3])
    return np.array(lists[3], dtype=float)


def assemble_in_place(k: int, levels: tuple[int, int], all_r: bool, log_k_fact: float,
                      log_fact: NDArray[np.float64], per_bc: float, eps0: float, log_delta0: float,
                      log_g: list[NDArray[np.float64]]) -> list[NDArray[np.float64]]:
    """``assemble_walk`` on both sides' ln g (arrays of ``level_classes`` entries): their ln masses."""
    m_lo, m_hi = levels
    # written in place: a copy of an array that is read-only (remembered), strided or both sides'
    out0, out1 = (np.array(g, dtype=float) if not (g.flags.writeable and g.flags.c_contiguous)
                  or (i and g is log_g[0]) else g for i, g in enumerate(log_g))
    functions, compiled = LOOPS.pick(out0.size)
    if compiled:
        functions["assemble_walk"](k, m_lo, m_hi, all_r, log_k_fact, log_fact, per_bc, eps0, log_delta0,
                                   out0, out1)
        return [out0, out1]
    lists = [log_fact.tolist(), out0.tolist(), out1.tolist()]
    functions["assemble_walk"](k, m_lo, m_hi, all_r, log_k_fact, lists[0], per_bc, eps0, log_delta0,
                               lists[1], lists[2])
    return [np.array(lists[1], dtype=float), np.array(lists[2], dtype=float)]


def split_finite(log_p: NDArray[np.float64], log_q: NDArray[np.float64]
                 ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(ln P − ln Q, ln P) of the classes where both are finite, and ln P where only it is
    (``split_walk``): the arrays ``log_p[m] − log_q[m]``, ``log_p[m]`` and ``log_p[only]`` of the
    masks, in one pass."""
    n = log_p.size
    functions, compiled = LOOPS.pick(n)
    if compiled:
        loss, log_pf, only = np.empty(n), np.empty(n), np.empty(n)
        n_f, n_o = functions["split_walk"](log_p, log_q, loss, log_pf, only)
        return loss[:n_f], log_pf[:n_f], only[:n_o]
    lists: list[list[float]] = [[0.0] * n for _ in range(3)]
    n_f, n_o = functions["split_walk"](log_p.tolist(), log_q.tolist(), *lists)
    return (np.array(lists[0][:n_f], dtype=float), np.array(lists[1][:n_f], dtype=float),
            np.array(lists[2][:n_o], dtype=float))
