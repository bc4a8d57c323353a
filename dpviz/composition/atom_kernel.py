"""δ(ε) of a finite set of loss atoms and its inverse ε(δ), as loops over the atoms (``dpviz.jit``:
interpreted for a short run, compiled by Numba past a threshold, the same floats either way).

The atoms are sorted by decreasing loss L with P-masses p (``atoms.LossAtoms``). δ's finite part
(Steinke Prop. 7; KOV Thm 3.3 for the k-fold canonical pair) is

    ln Σ_{L_a > ε} p_a (1 − e^{ε − L_a}),

summed term by term in log space for the atoms within ``WINDOW`` above ε, and through the prefix
sums A = Σ p and B = Σ p e^{−L} of the atoms above ε + ``WINDOW``, as ln A + ln(1 − e^{ε + ln B −
ln A}), where e^{ε − L} ≤ e^{−WINDOW} and the difference cannot cancel. The prefix sums are
accumulated in order (each entry the ``np.logaddexp.accumulate`` float) and only as far as a query
reads them: a search stops at the atom where δ crosses its target, an evaluation at ε + WINDOW.

The search (docs/MATH.md §3.4, §10.4): δ(ε) is linear in e^ε between two atoms, so the atom bracketing the
target is located from the prefix sums (a guess confirmed by two exact evaluations, bisection where
it fails), the crossing solved in closed form, polished by Newton steps on the exact evaluation, and
moved up, never down, until δ(ε) inflated by its error bound (``LossAtoms.relative_error``) is at
most the target. Until issue 20 these were numpy calls on a few atoms each, driven by generators
(``atom_batch``); their overhead, not the arithmetic, was a page's cost. The floats may differ from
numpy's in the last bits (numpy's vectorised exp and log against the C library's): every value
here is within its error bound and every ε is rounded up against that bound.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.typing import NDArray

from dpviz import jit
from dpviz.numerics import log1mexp, logaddexp_float

WINDOW = 1.0
"""Atoms within this distance above ε are summed term by term (module docstring)."""

_LN2 = math.log(2.0)

Arr = NDArray[np.float64]


def _log1mexp(x: float) -> float:
    """ln(1 − e^x) for x ≤ 0 (Mächler 2012), −inf at 0, as ``numerics.log1mexp`` computes it."""
    if x == 0.0:
        return -math.inf
    if x > -_LN2:
        return math.log(-math.expm1(x))
    return math.log1p(-math.exp(x))


def count_above(loss: Arr, x: float) -> int:
    """The number of atoms with loss > x (loss sorted decreasing; 0 for a NaN)."""
    lo, hi = 0, loss.shape[0]
    while lo < hi:
        mid = (lo + hi) // 2
        if loss[mid] > x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _fill(loss: Arr, log_p: Arr, la: Arr, lb: Arr, filled: int, upto: int) -> int:
    """The prefix sums ln A and ln B up to entry ``upto`` − 1 (entries before ``filled`` are
    there already); the new number of entries filled."""
    i = filled
    if i >= upto:
        return filled
    if i == 0:
        la[0] = log_p[0]
        lb[0] = log_p[0] - loss[0]
        i = 1
    while i < upto:
        la[i] = logaddexp_float(la[i - 1], log_p[i])
        lb[i] = logaddexp_float(lb[i - 1], log_p[i] - loss[i])
        i += 1
    return i


def log_part(loss: Arr, log_p: Arr, la: Arr, lb: Arr, filled: int, eps: float) -> tuple[float, int]:
    """(ln Σ_{L_a > ε} p_a (1 − e^{ε − L_a}) (−inf when no atom is above ε), prefix entries filled)."""
    if eps != eps:
        return math.nan, filled
    m = count_above(loss, eps)
    if m == 0:
        return -math.inf, filled
    j = count_above(loss, eps + WINDOW)
    window = -math.inf
    if j < m:
        terms = np.empty(m - j)
        top = -math.inf
        for a in range(j, m):
            x = log_p[a] + _log1mexp(eps - loss[a])
            terms[a - j] = x
            if x > top:
                top = x
        if top > -math.inf:
            s, c = 0.0, 0.0  # Neumaier's compensated sum: an error of ~2 ulp whatever the count
            for i in range(m - j):
                t = math.exp(terms[i] - top)
                u = s + t
                if abs(s) >= abs(t):
                    c += (s - u) + t
                else:
                    c += (t - u) + s
                s = u
            window = top + math.log(s + c)
    if j == 0:
        return window, filled
    filled = _fill(loss, log_p, la, lb, filled, j)
    log_a, log_b = la[j - 1], lb[j - 1]
    prefix = log_a + _log1mexp(min(eps + log_b - log_a, -WINDOW))  # ≤ −WINDOW by construction
    if j < m:
        return logaddexp_float(window, prefix), filled
    return prefix, filled


def solve(loss: Arr, log_p: Arr, p_inf: float, delta: float, inflate: float, positive: int,
          la: Arr, lb: Arr, filled: int, guess: int) -> tuple[float, float, int]:
    """(smallest ε ≥ 0 with δ(ε) inflated by ``inflate`` ≤ delta, the finite part's log at that ε
    (NaN when not evaluated there), prefix entries filled), for delta − p_inf > 0 and at least one
    atom (module docstring; ``positive`` atoms have loss > 0). ``guess``: the bracket's guessed
    upper atom (``numpy_guess``), or −2 to locate it here; either way it is only confirmed or
    replaced by bisection, so the answer does not depend on it."""
    log_t = math.log(delta - p_inf)
    first, filled = log_part(loss, log_p, la, lb, filled, 0.0)
    if p_inf + math.exp(first) <= delta:
        return 0.0, first, filled
    # the atom hi with S(L_{hi−1}) < t ≤ S(L_hi), S(L_i) = A_{i−1} − e^{L_i} B_{i−1}: a guess
    # from the prefix sums (which cancel), confirmed by exact evaluations at its two ends
    lo, hi = -1, -1
    if positive > 2 and guess == -2:
        guess = positive
        for i in range(1, positive):
            filled = _fill(loss, log_p, la, lb, filled, i)
            y = min(loss[i] + lb[i - 1] - la[i - 1], 0.0)
            if la[i - 1] + _log1mexp(y) >= log_t:
                guess = i
                break
    if positive > 2 and guess > 0:
        ok = True
        if guess != 1:
            v, filled = log_part(loss, log_p, la, lb, filled, loss[guess - 1])
            ok = v < log_t
        if ok and guess != positive:
            v, filled = log_part(loss, log_p, la, lb, filled, loss[guess])
            ok = not v < log_t
        if ok:
            lo, hi = guess - 1, guess
    if lo < 0:  # bisection over 0 … positive, neither end evaluated
        lo, hi = 0, positive
        while hi - lo > 1:
            mid = (lo + hi) // 2
            v, filled = log_part(loss, log_p, la, lb, filled, loss[mid])
            if v < log_t:
                lo = mid
            else:
                hi = mid
    left = max(loss[hi], 0.0) if hi < positive else 0.0
    right = loss[lo]
    filled = _fill(loss, log_p, la, lb, filled, hi)
    log_a, log_b = la[hi - 1], lb[hi - 1]  # atoms 0 … hi − 1 are above ε
    # A − e^ε B = t on [left, right], in closed form
    eps = left if log_t >= log_a else min(max(log_a + _log1mexp(log_t - log_a) - log_b, left), right)
    part = math.nan
    for _ in range(3):  # Newton in u = e^ε: S is linear in u on the segment; in log space, as e^ε
        # overflows past ε ≈ 709 and B underflows for a tiny δ at large k
        part, filled = log_part(loss, log_p, la, lb, filled, eps)
        x_s = part - log_b - eps
        x_t = log_t - log_b - eps
        if max(x_s, x_t) > 700.0:
            break
        step = math.exp(x_s) - math.exp(x_t)
        if step <= -1.0:
            break
        new = min(max(eps + math.log1p(step), left), right)
        if new == eps:
            break
        eps = new
        part = math.nan
    # moved up until δ(ε), inflated by its error bound, is ≤ delta: sound where floating point
    # rounded δ(ε) down
    step = max(abs(eps), 1e-300) * 2.0**-50
    for _ in range(64):
        if part != part:
            part, filled = log_part(loss, log_p, la, lb, filled, eps)
        if (p_inf + math.exp(part)) * inflate <= delta or eps >= right:
            if eps > right:
                return right, math.nan, filled
            return eps, part, filled
        eps += step
        step *= 2.0
        part = math.nan
    return right, math.nan, filled


# --- The interpreter's shortcuts: numpy where a loop would be slow in Python, the same floats ---

def prefill(loss: Arr, log_p: Arr, la: Arr, lb: Arr, filled: int, upto: int) -> int:
    """``_fill`` by ``np.logaddexp.accumulate`` (the same floats: numpy's loop is the same
    sequence of ``npy_logaddexp`` steps, tests/composition/test_atom_kernel.py), continued from the
    last entry filled; for the interpreted loops, which would take a Python step per atom."""
    if filled >= upto:
        return filled
    if filled == 0:
        la[:upto] = np.logaddexp.accumulate(log_p[:upto])
        lb[:upto] = np.logaddexp.accumulate(log_p[:upto] - loss[:upto])
        return upto
    la[filled:upto] = np.logaddexp.accumulate(np.concatenate(([la[filled - 1]], log_p[filled:upto])))[1:]
    lb[filled:upto] = np.logaddexp.accumulate(
        np.concatenate(([lb[filled - 1]], log_p[filled:upto] - loss[filled:upto])))[1:]
    return upto


def numpy_guess(loss: Arr, la: Arr, lb: Arr, positive: int, log_t: float) -> int:
    """``solve``'s guess of the bracket from the prefix sums (filled up to ``positive`` − 1), by
    numpy over all atoms at once (−1 with at most two atoms above 0): numpy's vectorised log may
    differ from the C library's in the last bit, and so the guess at an edge, which ``solve``
    only confirms or replaces by bisection: the answer is the same float."""
    if positive <= 2:
        return -1
    with np.errstate(invalid="ignore"):
        y = np.minimum(loss[1:positive] + lb[: positive - 1] - la[: positive - 1], 0.0)
        reached = la[: positive - 1] + log1mexp(y) >= log_t
    return 1 + int(np.argmax(reached)) if reached.any() else positive


COMPILE_STEPS = 200_000
"""Atom visits a process makes in the interpreter (about 0.2 s) before it loads the compiled loops."""


def _warm(functions: jit.Functions) -> None:
    """An evaluation and a search on three atoms, compiled (Numba compiles or loads them)."""
    loss, log_p = np.array([2.0, 0.5, -1.0]), np.log(np.array([0.2, 0.5, 0.3]))
    la, lb = np.empty(3), np.empty(3)
    functions["log_part"](loss, log_p, la, lb, 0, 0.25)
    functions["solve"](loss, log_p, 0.0, 1e-3, 1.0 + 1e-14, 2, la, lb, 0, -2)


LOOPS = jit.Loops(globals(), ("_log1mexp", "logaddexp_float", "count_above", "_fill", "log_part",
                              "solve"),
                  threshold=COMPILE_STEPS, what="the loss atoms' sums and searches", warm=_warm)
