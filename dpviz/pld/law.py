"""The exact privacy loss law of a pair (P, Q): finite atoms plus an optional continuous part.

The privacy loss is L = ln P(x)/Q(x). We keep its law under *both* P and Q, because
subsampling mixes them (``P' = (1−q)Q + qP``) and because swapping P and Q gives the
other direction of a neighbouring relation. For a proper pair dQ = e^{−L} dP on the
finite losses; mass with Q = 0 sits at L = +∞ (``p_inf``) and mass with P = 0 at
L = −∞ (``q_neg_inf``).

δ(ε) = P(L = ∞) + E_P[(1 − e^{ε−L})_+] = p_inf + P(L > ε) − e^ε Q(L > ε)
(Steinke, seed 001, Prop. 7; KOV's hockey-stick divergence).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from weakref import WeakKeyDictionary

import numpy as np
from numpy.typing import ArrayLike, NDArray

Tail = Callable[[NDArray[np.float64]], NDArray[np.float64]]


@dataclass(frozen=True, eq=False)
class ContinuousPart:
    """A continuous part of the loss law on the support [lo, hi].

    ``sf_p(x)`` = P(L > x, continuous part), ``cdf_p(x)`` = P(L ≤ x, continuous part); the
    same for Q. Both tails are kept so that small masses are never computed as 1 − (1 − m).
    """

    lo: float
    hi: float
    sf_p: Tail
    cdf_p: Tail
    sf_q: Tail
    cdf_q: Tail

    def mass(self, a: ArrayLike, b: ArrayLike, *, side: str) -> NDArray[np.float64]:
        """Mass of the open/closed-irrelevant interval (a, b] under P or Q (``side``)."""
        return self.mass_and_tail(a, b, side=side)[0]

    def mass_and_tail(self, a: ArrayLike, b: ArrayLike, *,
                      side: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``mass`` and the tail it was computed from, min(sf(a), cdf(a)): the mass is a difference
        of two tails, so its absolute round-off is ≈ u·(2·that tail + the mass), not u·mass."""
        sf, cdf = (self.sf_p, self.cdf_p) if side == "p" else (self.sf_q, self.cdf_q)
        x = np.asarray(a, dtype=np.float64)
        y = np.asarray(b, dtype=np.float64)
        return _from_tails(sf(x), cdf(x), sf(y), cdf(y))

    def cell_masses(self, edges: NDArray[np.float64], *,
                    side: str) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """``mass_and_tail(edges[:-1], edges[1:])`` with each tail evaluated once per edge (the
        cells share their edges: half the tail evaluations, the same values)."""
        return self.cell_masses_ends(edges, side=side)[:2]

    def cell_masses_ends(self, edges: NDArray[np.float64], *, side: str) -> tuple[
            NDArray[np.float64], NDArray[np.float64], float, float]:
        """``cell_masses`` and the tails it read at the ends, (cdf at the first edge, sf at the last):
        the mass below and above the grid, without asking the tails again (the same floats: the
        tails are elementwise)."""
        sf, cdf = (self.sf_p, self.cdf_p) if side == "p" else (self.sf_q, self.cdf_q)
        x = np.asarray(edges, dtype=np.float64)
        sf_e, cdf_e = sf(x), cdf(x)
        mass, tail = _from_tails(sf_e[:-1], cdf_e[:-1], sf_e[1:], cdf_e[1:])
        return mass, tail, float(cdf_e[0]), float(sf_e[-1])


def _from_tails(sf_a: NDArray[np.float64], cdf_a: NDArray[np.float64], sf_b: NDArray[np.float64],
                cdf_b: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The mass of (a, b] and the tail it comes from, min(sf(a), cdf(a)), from both tails at a and b:
    the difference of whichever tail is small at a, which carries the relative precision."""
    use_upper = sf_a < cdf_a
    mass = np.maximum(np.where(use_upper, sf_a - sf_b, cdf_b - cdf_a), 0.0)
    return mass, np.minimum(sf_a, cdf_a)


@dataclass(frozen=True, eq=False)
class LossLaw:
    """Privacy loss law of a pair (P, Q); ``name`` says which pair, e.g. ``"Gaussian μ=1"``."""

    name: str
    loss: NDArray[np.float64]
    p: NDArray[np.float64]
    q: NDArray[np.float64]
    p_inf: float = 0.0
    q_neg_inf: float = 0.0
    continuous: ContinuousPart | None = None
    symmetric: bool = False
    """True when (Q, P) has the same loss law as (P, Q) (Gaussian, Laplace, RR, geometric)."""

    @classmethod
    def from_atoms(cls, name: str, loss: ArrayLike, p: ArrayLike, q: ArrayLike, *, p_inf: float = 0.0,
                   q_neg_inf: float = 0.0, symmetric: bool = False) -> LossLaw:
        return cls(name=name, loss=np.asarray(loss, dtype=float), p=np.asarray(p, dtype=float),
                   q=np.asarray(q, dtype=float), p_inf=float(p_inf), q_neg_inf=float(q_neg_inf),
                   symmetric=symmetric)

    # ------------------------------------------------------------------ tails
    def p_above(self, x: ArrayLike) -> NDArray[np.float64]:
        """P(x < L < ∞) for each x (atoms exactly at x excluded)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = (self.p[None, :] * (self.loss[None, :] > x[:, None])).sum(axis=1)
        if self.continuous is not None:
            out = out + self.continuous.sf_p(np.clip(x, self.continuous.lo, self.continuous.hi))
        return out

    def q_above(self, x: ArrayLike) -> NDArray[np.float64]:
        """Q(x < L < ∞) for each x."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        out = (self.q[None, :] * (self.loss[None, :] > x[:, None])).sum(axis=1)
        if self.continuous is not None:
            out = out + self.continuous.sf_q(np.clip(x, self.continuous.lo, self.continuous.hi))
        return out

    def delta(self, epsilon: ArrayLike) -> NDArray[np.float64]:
        """δ(ε) = p_inf + P(L > ε) − e^ε Q(L > ε) (Steinke Prop. 7), any real ε; exact up to
        rounding, except where Q(L > ε) underflows (ε ≳ 700): the term then drops out, which
        can only over-state δ."""
        eps = np.atleast_1d(np.asarray(epsilon, dtype=float))
        q = self.q_above(eps)
        log_q = np.log(q, out=np.full_like(q, -np.inf), where=q > 0)
        e_q = np.exp(np.minimum(eps + log_q, 700.0))  # e^ε Q(L > ε) ≤ P(L > ε): no overflow
        return np.clip(self.p_inf + self.p_above(eps) - e_q, 0.0, 1.0)

    def support(self, tail: float) -> tuple[float, float]:
        """An interval outside which each tail of the finite loss has P- and Q-mass ≤ ``tail``
        (a few vector evaluations of each tail, ``_bisect_tail``: kept per law and tail, the law being
        immutable)."""
        return _support(self, float(tail))

    def _support(self, tail: float) -> tuple[float, float]:
        lo, hi = _atom_support(self.loss, self.p, self.q, tail)
        c = self.continuous
        if c is not None:
            clo, chi = c.lo, c.hi
            if not math.isfinite(chi):
                chi = _bisect_tail(self._tail(True), tail, up=True, probed=_probed(self, True))
            if not math.isfinite(clo):
                clo = _bisect_tail(self._tail(False), tail, up=False, probed=_probed(self, False))
            lo, hi = min(lo, clo), max(hi, chi)
        if not math.isfinite(lo):
            lo = hi = 0.0
        return lo, hi

    def _tail(self, up: bool) -> Callable[[NDArray[np.float64]], NDArray[np.float64]]:
        """The larger of the P- and Q-tails of the continuous part above (``up``) or below x."""
        c = self.continuous
        assert c is not None
        if up:
            return lambda x: np.fmax(c.sf_p(x), c.sf_q(x))
        return lambda x: np.fmax(c.cdf_p(x), c.cdf_q(x))

    def max_loss(self) -> float:
        """The largest finite loss carrying P-mass, rounded up; ``math.inf`` when there is mass at
        +∞ or the continuous part is unbounded above (then δ(ε) > 0 for every ε)."""
        if self.p_inf > 0 or (self.continuous is not None and not math.isfinite(self.continuous.hi)):
            return math.inf
        top = -math.inf
        if self.loss.size and np.any(self.p > 0):
            top = float(self.loss[self.p > 0].max())
        if self.continuous is not None:
            top = max(top, self.continuous.hi)
        return float(np.nextafter(top, math.inf)) if math.isfinite(top) else 0.0

    def reversed(self) -> LossLaw:
        """The law of the swapped pair (Q, P): loss −L, P and Q exchanged."""
        if self.symmetric:
            return self
        c = self.continuous
        rc = None
        if c is not None:
            neg = _Negated()
            rc = ContinuousPart(lo=-c.hi, hi=-c.lo,
                                sf_p=lambda x: c.cdf_q(neg(x)), cdf_p=lambda x: c.sf_q(neg(x)),
                                sf_q=lambda x: c.cdf_p(neg(x)), cdf_q=lambda x: c.sf_p(neg(x)))
        out = LossLaw(name=f"{self.name} (reversed)", loss=-self.loss[::-1], p=self.q[::-1],
                      q=self.p[::-1], p_inf=self.q_neg_inf, q_neg_inf=self.p_inf, continuous=rc)
        _MIRRORS[out] = self
        return out

    def both_directions(self) -> tuple[LossLaw, ...]:
        """(P, Q) and (Q, P): one law when symmetric. ε of a mechanism is the max over both."""
        return (self,) if self.symmetric else (self, self.reversed())


class _Negated:
    """−x for the tails of a reversed law, the same array while x is the same array with the same
    values. The four tails are asked at the same points (a grid's cell edges, a support probe), and a
    law computed through an inverse keeps the inverse of the last array asked (a subsampled law:
    ``subsampling.subsample_remove``), which a fresh −x per tail defeated (four inversions instead of
    one; the values are the same either way). One (x, copy of x, −x) triple, written at once (threads
    sharing the law never pair one array with another's negation); an x changed in place is negated
    again."""

    def __init__(self) -> None:
        self.last: tuple[object, NDArray[np.float64], NDArray[np.float64]] | None = None

    def __call__(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        seen = self.last
        if seen is not None and seen[0] is x and np.array_equal(seen[1], x):
            return seen[2]
        out = -x
        self.last = (x, np.array(x, copy=True), out)
        return out


def _atom_support(loss: NDArray[np.float64], p: NDArray[np.float64], q: NDArray[np.float64],
                  tail: float) -> tuple[float, float]:
    """The smallest and largest atom loss once the extreme atoms are left out, from each end, while
    the P- and the Q-mass left out there are both at most ``tail`` ((∞, −∞) without atoms). A
    discrete Gaussian's atoms reach losses of ±(x_max·Δ/σ²) with masses far below any tail: the
    grid spanned them all (subsampled, q = 4.4e-4, σ = 1: ±31.8 for a law whose δ is made below 1)."""
    carries = (p > 0) | (q > 0)
    if not np.any(carries):
        return math.inf, -math.inf
    order = np.argsort(loss[carries], kind="stable")
    x, pp, qq = loss[carries][order], p[carries][order], q[carries][order]
    up = np.flatnonzero((np.cumsum(pp) > tail) | (np.cumsum(qq) > tail))
    down = np.flatnonzero((np.cumsum(pp[::-1]) > tail) | (np.cumsum(qq[::-1]) > tail))
    first = int(up[0]) if up.size else x.size - 1
    last = x.size - 1 - int(down[0]) if down.size else 0
    if first > last:  # every atom is in one tail or the other: keep them all
        return float(x[0]), float(x[-1])
    return float(x[first]), float(x[last])


_MIRRORS: WeakKeyDictionary[LossLaw, LossLaw] = WeakKeyDictionary()
"""A reversed law (``LossLaw.reversed``) → the law it reverses."""


@lru_cache(maxsize=256)
def _support(law: LossLaw, tail: float) -> tuple[float, float]:
    """``law._support(tail)``; for a reversed law its original's support mirrored, (−hi, −lo): its
    tails are the original's other tails at −x, so the search finds the mirrored points, bit for
    bit (tested), and one law's supports serve both directions (0.0 − x: no −0.0)."""
    mirror = _MIRRORS.get(law)
    if mirror is not None:
        lo, hi = _support(mirror, tail)
        return 0.0 - hi, 0.0 - lo
    return law._support(tail)


_POWERS = 2.0 ** np.arange(-40, 61)
_PROBES = np.concatenate([-_POWERS[::-1], [0.0], _POWERS])
"""The points ``_bisect_tail`` evaluates its tail on first: ±2^j, j = −40 … 60, and 0 (increasing)."""


@lru_cache(maxsize=256)
def _probed(law: LossLaw, up: bool) -> NDArray[np.float64]:
    """``law``'s tail (``LossLaw._tail``) at the probe points (``_PROBES`` in the direction of ``up``),
    kept per law: the supports at several tails (the width prediction's and the single steps') start
    from the same values."""
    with np.errstate(all="ignore"):
        return np.asarray(law._tail(up)((1.0 if up else -1.0) * _PROBES))


def _bisect_tail(f: Callable[[NDArray[np.float64]], NDArray[np.float64]], tail: float, *,
                 up: bool, probed: NDArray[np.float64] | None = None) -> float:
    """A point beyond which the monotone tail function f (of an array) is ≤ ``tail``, near the
    smallest such point.

    f is evaluated on ±2^j, j = −40 … 60, and 0 at once (up to 2^60 ≈ 1.2e18: a Gaussian of μ = 1e6
    has its losses near μ²/2 = 5e11); the bracket where it crosses ``tail`` is then cut into 64 equal
    parts, again at once, until it is within 1e-3 of its end (or 1e-12). The point 1 alone spanned a
    subsampled law of width ≈ q (q = 1e-4: losses up to 0.005 at tail 1e-14) over 200 times its
    extent, and every grid cell beyond was discretised and convolved. A few vector evaluations, where
    a bisection made a hundred of one point each. Any point with f ≤ tail is sound: callers account
    for the tail mass beyond it. A NaN of f counts as ≤ tail, as a comparison with it is false.
    ``probed``: f at those points already (``_probed``, the same values)."""
    s = 1.0 if up else -1.0
    v = _PROBES  # increasing in the direction of s

    def above(v: NDArray[np.float64]) -> NDArray[np.bool_]:
        with np.errstate(all="ignore"):
            return np.asarray(f(s * v) > tail)

    over = np.flatnonzero(above(v) if probed is None else probed > tail)
    if over.size == 0:
        return float(s * v[0])
    i = int(over[-1])  # f is monotone: every later point is ≤ tail
    if i == v.size - 1:
        return float(s * v[-1])
    a, x = float(v[i]), float(v[i + 1])  # f(s·a) > tail ≥ f(s·x)
    while x - a > max(1e-3 * max(abs(x), abs(a)), 1e-12):
        cut = np.linspace(a, x, 65)[1:-1]
        over = np.flatnonzero(above(cut))
        last = int(over[-1]) if over.size else -1  # the last cut point above tail (−1: none)
        if last >= 0:
            a = float(cut[last])
        if last + 1 < cut.size:  # the point after it is not above tail (a NaN of f may sit before)
            x = float(cut[last + 1])
    return s * x
