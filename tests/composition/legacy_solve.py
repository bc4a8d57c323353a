"""``LossAtoms.epsilon``'s search as it was before issue 20 (then generators run side by side, now
loops, ``atom_kernel``), kept as functions of an atom set: the reference the searches must equal bit
for bit, given the same evaluations (tests/composition/test_atom_searches.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from dpviz.numerics import bisect_int, log1mexp


def solve(atoms: Any, delta: float) -> float | None:
    target = delta - atoms.p_inf
    if target < 0:
        return None
    if target == 0 or atoms.loss.size == 0:
        return max(0.0, float(atoms.loss[0])) if atoms.loss.size else 0.0
    if atoms.delta(0.0) <= delta:
        return 0.0
    log_t = math.log(target)
    positive = int(np.searchsorted(-atoms.loss, 0.0, side="left"))
    lo, hi = segment(atoms, log_t, positive)
    left = max(float(atoms.loss[hi]), 0.0) if hi < positive else 0.0
    right = float(atoms.loss[lo])
    log_a, log_b = prefix(atoms)
    la, lb = float(log_a[hi - 1]), float(log_b[hi - 1])
    eps = solve_segment(la, lb, log_t, left, right)
    for _ in range(3):
        x_s = atoms.log_finite_part(eps) - lb - eps
        x_t = log_t - lb - eps
        if max(x_s, x_t) > 700.0:
            break
        step = math.exp(x_s) - math.exp(x_t)
        if step <= -1.0:
            break
        new = min(max(eps + math.log1p(step), left), right)
        if new == eps:
            break
        eps = new
    return round_up(atoms, eps, delta, right)


def segment(atoms: Any, log_t: float, positive: int) -> tuple[int, int]:
    def above(i: int) -> bool:
        return atoms.log_finite_part(float(atoms.loss[i])) < log_t

    if positive > 2:
        log_a, log_b = prefix(atoms)
        with np.errstate(invalid="ignore"):
            y = np.minimum(atoms.loss[1:positive] + log_b[: positive - 1] - log_a[: positive - 1], 0.0)
            reached = log_a[: positive - 1] + log1mexp(y) >= log_t
        hi = 1 + int(np.argmax(reached)) if reached.any() else positive
        if (hi == 1 or above(hi - 1)) and (hi == positive or not above(hi)):
            return hi - 1, hi
    return bisect_int(above, 0, positive)


def prefix(atoms: Any) -> tuple[np.ndarray, np.ndarray]:
    """ln Σ_{b≤a} p_b and ln Σ_{b≤a} p_b e^{−L_b}, as the atom sets once kept them."""
    return np.logaddexp.accumulate(atoms.log_p), np.logaddexp.accumulate(atoms.log_p - atoms.loss)


def solve_segment(la: float, lb: float, log_t: float, left: float, right: float) -> float:
    if log_t >= la:
        return left
    eps = la + _log1mexp(log_t - la) - lb  # the C library's log, as the loops (numpy's may differ by an ulp)
    return min(max(eps, left), right)


def _log1mexp(x: float) -> float:
    if x == 0.0:
        return -math.inf
    return math.log(-math.expm1(x)) if x > -math.log(2.0) else math.log1p(-math.exp(x))


def round_up(atoms: Any, eps: float, delta: float, right: float) -> float:
    step = max(abs(eps), 1e-300) * 2.0**-50
    inflate = 1.0 + atoms.relative_error
    for _ in range(64):
        if atoms.delta(eps) * inflate <= delta or eps >= right:
            return min(eps, right)
        eps += step
        step *= 2.0
    return right
