"""Exact hockey-stick divergence of a privacy loss distribution with finitely many atoms.

A pair (P, Q) is summarised by its privacy loss L = ln P(x)/Q(x) under x ~ P
(Steinke, seed 001, Prop. 7): ``δ(ε) = P(L = ∞) + E[(1 − e^{ε − L})_+]``.
The k-fold composition of the canonical (ε0, δ0) pair (KOV eq. 16) has binomial
atoms, so KOV Thm 3.3 is the special case ``LossAtoms.binomial``.

Numerics. Sorting atoms by decreasing loss, the sum over atoms with L > ε is
``A − e^ε B`` with prefix sums A = Σ p and B = Σ p e^{−L}. That difference cancels
badly for atoms with L close to ε, so atoms with L − ε ≤ ``WINDOW`` (``atom_batch``) are summed
term by term as p (1 − e^{ε−L}) in log space, and only the remaining prefix, where
e^{ε−L} ≤ e^{−WINDOW}, uses the prefix sums. Everything is in log space, so
δ down to 1e-300 and k = 10^7 neither underflow nor overflow.

The k-fold canonical pair's atoms (binomial, tails lumped soundly) are built in
``binomial_atoms``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from dpviz.composition.atom_batch import WINDOW, Steps, log_finite_parts, run
from dpviz.composition.binomial_atoms import binomial_atoms_many
from dpviz.numerics import log1mexp, log1mexp_float, logsumexp

_REMEMBERED = 64
"""Targets δ whose ε one atom set remembers (``LossAtoms.epsilon``)."""

_LISTED = 20_000
"""Atom sets of at most this many atoms keep −loss as a list too (``LossAtoms._neg_loss_list``)."""


@dataclass(frozen=True, eq=False)
class LossAtoms:
    """Privacy loss distribution: finite atoms ``loss`` (sorted decreasing) with
    P-masses ``exp(log_p)``, plus mass ``p_inf`` at L = +∞."""

    loss: NDArray[np.float64]
    log_p: NDArray[np.float64]
    p_inf: float = 0.0
    terms: int = 0
    """Number of atoms the error bound accounts for (≥ the stored ones; lumps count their tails)."""
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """ε(δ) already solved on this atom set (``epsilon``); a fresh one for every instance, also for
    a ``dataclasses.replace`` copy (another p_inf is another answer)."""
    _values: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """``log_finite_part`` at the ε last evaluated (up to ``_REMEMBERED``), one at a time or in a
    batch (``atom_batch.log_finite_parts`` reads and fills it too): a solve evaluates its answer twice
    (the last Newton step, then ``_round_up``'s check) and its caller asks δ(ε) there once more
    (``optimal.epsilons_for_delta``): two of a solve's seven or eight evaluations."""

    @classmethod
    def from_masses(cls, loss: NDArray[np.float64], log_p: NDArray[np.float64],
                    p_inf: float = 0.0) -> LossAtoms:
        """Sort by decreasing loss (ties kept as separate atoms: harmless)."""
        loss = np.asarray(loss, dtype=float)
        log_p = np.asarray(log_p, dtype=float)
        order = np.argsort(-loss, kind="stable")
        return cls(loss=loss[order], log_p=log_p[order], p_inf=float(p_inf))

    @classmethod
    def binomial(cls, *, k: int, eps0: float, delta0: float, above: float | None = None) -> LossAtoms:
        """k-fold product of the canonical (ε0, δ0) pair, KOV eq. 16 / Thm 3.3.

        Given no A-outcome (prob. (1−δ0)^k), the count l of "low" outcomes is
        Binomial(k, 1/(1+e^{ε0})) under P~ and the loss is (k − 2l)ε0; negligible tails
        are lumped soundly (``binomial_atoms``). ``above``: only the atoms with loss > ``above``,
        enough for ``delta(ε)`` at ε ≥ ``above`` (same value, bit for bit), not for the rest.
        """
        return cls.binomials([k], eps0=eps0, delta0=delta0, above=above)[0]

    @classmethod
    def binomials(cls, ks: Sequence[int], *, eps0: float, delta0: float,
                  above: float | None = None) -> list[LossAtoms]:
        """:meth:`binomial` for each k (one weight pass, ``binomial_atoms_many``: the same sets)."""
        return [cls.from_binomial(k, delta0, loss, log_w)
                for k, (loss, log_w) in zip(ks, binomial_atoms_many(ks, eps0, above=above), strict=True)]

    @classmethod
    def from_binomial(cls, k: int, delta0: float, loss: NDArray[np.float64],
                      log_w: NDArray[np.float64]) -> LossAtoms:
        """The k-fold canonical (ε0, δ0) pair from its binomial atoms given no A-outcome
        (``binomial_atoms``' (loss, ln weight)): masses scaled by (1 − δ0)^k, the rest at L = ∞."""
        log_free = k * math.log1p(-delta0)
        return cls(loss=loss, log_p=log_w + log_free, p_inf=-math.expm1(log_free), terms=k + 1)

    @cached_property
    def _prefix(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """ln Σ_{b≤a} p_b and ln Σ_{b≤a} p_b e^{−L_b}."""
        log_q = self.log_p - self.loss
        return np.logaddexp.accumulate(self.log_p), np.logaddexp.accumulate(log_q)

    @cached_property
    def _positive_prefix(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:attr:`_prefix` over the atoms with L > 0 only: the same floats (an accumulation runs in
        order, so its first entries do not depend on the rest), for less: Thm 3's and Cor. 6's 80 term
        sets at k = 400 in 2.3 ms instead of 3.2 ms (issue 20)."""
        n = self._positive
        log_p, loss = self.log_p[:n], self.loss[:n]
        return np.logaddexp.accumulate(log_p), np.logaddexp.accumulate(log_p - loss)

    def _prefix_to(self, n: int) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """:attr:`_prefix`'s arrays, or their first entries, at least ``n`` of them: a search at ε ≥ 0
        reads them only at atoms with L > 0 (:attr:`_positive_prefix`); the same floats either way."""
        if "_prefix" not in self.__dict__ and n <= self._positive:
            return self._positive_prefix
        return self._prefix

    @cached_property
    def _neg_loss(self) -> NDArray[np.float64]:
        """−loss (increasing), for ``searchsorted``: negating on every call would cost O(atoms)."""
        return -self.loss

    @cached_property
    def _positive(self) -> int:
        """Number of atoms with loss > 0."""
        return self._count_above(0.0)

    @cached_property
    def _neg_loss_list(self) -> list[float] | None:
        """−loss as a list, for ``bisect`` (``atom_batch._counts``), where there are at most ``_LISTED``
        atoms; ``None`` above (a list of millions of floats would cost more than it saves)."""
        return self._neg_loss.tolist() if self.loss.size <= _LISTED else None

    def _count_above(self, eps: float) -> int:
        """Number of atoms with loss > eps (atoms sorted decreasing)."""
        return int(np.searchsorted(self._neg_loss, -eps, side="left"))

    def log_finite_part(self, eps: float) -> float:
        """ln Σ_{L_a > ε} p_a (1 − e^{ε − L_a}) (−inf when empty); remembered (``_values``). Many pairs
        at once: ``atom_batch.log_finite_parts``, the same floats (tests/composition/test_atom_batch.py)."""
        value = self._values.get(eps)
        if value is None:
            value = self._log_finite_part(eps)
            self._remember(eps, value)
        return value

    def _remember(self, eps: float, value: float) -> None:
        """Keep ``log_finite_part``'s value at ε (``_values``; emptied when ``_REMEMBERED`` are kept)."""
        if len(self._values) >= _REMEMBERED:
            self._values.clear()
        self._values[eps] = value

    def _log_finite_part(self, eps: float) -> float:
        """``log_finite_part``, computed."""
        m = self._count_above(eps)
        if m == 0:
            return -math.inf
        j = int(np.searchsorted(self._neg_loss, -(eps + WINDOW), side="left"))  # atoms with L > ε + W
        parts = []
        if j < m:
            gaps = self.loss[j:m] - eps
            parts.append(logsumexp(self.log_p[j:m] + log1mexp(-gaps)))
        if j > 0:
            log_a, log_b = self._prefix_to(j)
            y = min(eps + log_b[j - 1] - log_a[j - 1], -WINDOW)  # ≤ −W by construction
            parts.append(float(log_a[j - 1] + log1mexp(y)))
        return logsumexp(np.asarray(parts, dtype=float))

    def delta(self, eps: float) -> float:
        """δ(ε) = P(L=∞) + Σ_{L>ε} p (1 − e^{ε−L}) (Steinke Prop. 7)."""
        return self.p_inf + math.exp(self.log_finite_part(eps))

    def deltas(self, epsilons: NDArray[np.float64]) -> list[float]:
        """:meth:`delta` at each ε (one batched sum: the same floats)."""
        return deltas_at([(self, float(e)) for e in np.asarray(epsilons, dtype=float).ravel()])

    def epsilon(self, delta: float) -> float | None:
        """Smallest ε ≥ 0 with δ(ε) ≤ delta; ``None`` when delta < P(L = ∞). Remembered per atom set
        (``_cache``, up to ``_REMEMBERED`` targets): the cached atom sets are asked the same δ by a
        page's table and its curves (the priors' classic row at each k of its series, again after a
        change of k' or of the scenario)."""
        return epsilons([(self, delta)])[0]

    def _steps(self, delta: float) -> Steps[float | None]:
        """``epsilon``'s search, as steps (``atom_batch.run``: it yields the ε at which it needs
        :meth:`log_finite_part`, a few at a time, and is sent their values).

        δ(ε) is linear in e^ε between consecutive atoms, so after a bisection over
        atom indices the crossing is solved in closed form and polished by Newton
        steps on the exact (windowed) evaluation; the result is then moved up,
        never down, until δ(ε) ≤ delta holds in floating point.
        """
        target = delta - self.p_inf
        if target < 0:
            return None
        if target == 0 or self.loss.size == 0:
            return max(0.0, float(self.loss[0])) if self.loss.size else 0.0
        log_t = math.log(target)
        positive = self._positive  # atoms with L > 0
        # S(L_i) increases with i; find the first i with S(L_i) ≥ target.
        # S(L_0) = 0 < target; S(0) > target
        guess = self._guess(log_t, positive)
        ends = [] if guess is None else [i for i in (guess - 1, guess) if 0 < i < positive]
        first = yield (0.0, *(float(self.loss[i]) for i in ends))  # δ(0), and the guess's two ends
        if self.p_inf + math.exp(first[0]) <= delta:  # δ(0) ≤ delta
            return 0.0
        lo, hi = yield from self._segment(log_t, positive, guess, dict(zip(ends, first[1:], strict=True)))
        left = max(float(self.loss[hi]), 0.0) if hi < positive else 0.0
        right = float(self.loss[lo])
        log_a, log_b = self._prefix_to(hi)
        la, lb = float(log_a[hi - 1]), float(log_b[hi - 1])  # atoms 0..hi-1 are above ε
        eps = self._solve_segment(la, lb, log_t, left, right)
        for _ in range(3):  # Newton in u = e^ε; S is linear in u on the segment
            # u_new / e^ε = 1 + (S − t) / (B e^ε), in log space: e^ε overflows past
            # ε ≈ 709 and B = e^lb underflows for tiny δ at large k.
            x_s = (yield (eps,))[0] - lb - eps
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
        return (yield from self._round_up(eps, delta, right))

    def _guess(self, log_t: float, positive: int) -> int | None:
        """The atom hi with S(L_{hi−1}) < t ≤ S(L_hi), located on the prefix sums
        S(L_i) = A_{i−1} − e^{L_i} B_{i−1} at once, which cancel and are only a guess (``_segment``
        confirms it); ``None`` with at most two atoms above 0."""
        if positive <= 2:
            return None
        reached = self._reach >= log_t  # at atoms 1 … positive − 1
        return 1 + int(np.argmax(reached)) if reached.any() else positive

    @cached_property
    def _reach(self) -> NDArray[np.float64]:
        """``_guess``'s ln S(L_i) = ln(A_{i−1} − e^{L_i} B_{i−1}) at atoms 1 … positive − 1, which
        does not depend on δ: once per atom set (for many sets at once, :func:`_fill_reaches`)."""
        positive = self._positive
        log_a, log_b = self._prefix_to(positive - 1)
        with np.errstate(invalid="ignore"):
            y = np.minimum(self.loss[1:positive] + log_b[: positive - 1] - log_a[: positive - 1], 0.0)
            return log_a[: positive - 1] + log1mexp(y)

    def _segment(self, log_t: float, positive: int, guess: int | None,
                 known: dict[int, float]) -> Steps[tuple[int, int]]:
        """The atoms lo, hi = lo + 1 with S(L_lo) < t ≤ S(L_hi) (a bisection over 0 … positive,
        neither end evaluated): the guess (``_guess``) where the exact (windowed) evaluations at its
        two ends (``known``: ln of δ's finite part at atom i's loss) confirm it, two evaluations
        instead of log₂(atoms); bisection where the guess fails."""
        if guess is not None:
            hi = guess
            if (hi == 1 or known[hi - 1] < log_t) and (hi == positive or not known[hi] < log_t):
                return hi - 1, hi
        lo, hi = 0, positive  # ``numerics.bisect_int`` with "S(L_i) < t" as the predicate
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if (yield (float(self.loss[mid]),))[0] < log_t:
                lo = mid
            else:
                hi = mid
        return lo, hi

    @staticmethod
    def _solve_segment(la: float, lb: float, log_t: float, left: float, right: float) -> float:
        """Solve A − e^ε B = t for ε on [left, right]."""
        if log_t >= la:
            return left
        eps = la + log1mexp_float(log_t - la) - lb
        return min(max(eps, left), right)

    @property
    def relative_error(self) -> float:
        """A conservative bound on the relative error of ``delta`` (measured against mpmath
        in tests/composition: ≤ 2e-13 at 10^6 binomial atoms, where this gives 1e-12)."""
        return 1e-15 * (16.0 + math.sqrt(max(self.loss.size, self.terms)))

    def _round_up(self, eps: float, delta: float, right: float) -> Steps[float]:
        """Move ε up until δ(ε), inflated by its error bound, is ≤ delta: the returned ε is
        sound even where floating point has rounded δ(ε) down."""
        step = max(abs(eps), 1e-300) * 2.0**-50
        inflate = 1.0 + self.relative_error
        for _ in range(64):
            part = (yield (eps,))[0]
            if (self.p_inf + math.exp(part)) * inflate <= delta or eps >= right:
                return min(eps, right)
            eps += step
            step *= 2.0
        return right

    def tradeoff(self) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Vertices of the lower boundary of the privacy region (KOV §2).

        Returns (P_FA, P_MD) of the Neyman-Pearson tests of H0: P against H1: Q
        that reject H0 on the outcomes of lowest loss first: first the outcomes with
        P = 0 (their Q-mass is what the finite atoms leave of 1), last those at
        L = +∞ (Q = 0). Linear between vertices (randomised tests).
        """
        p = np.exp(self.log_p[::-1])  # ascending loss: most Q-like first
        q = np.exp(self.log_p[::-1] - self.loss[::-1])
        q_neg_inf = max(0.0, 1.0 - float(q.sum()))
        p_fa = np.concatenate([[0.0, 0.0], np.cumsum(p), [1.0]])
        p_md = np.concatenate([[1.0, 1.0 - q_neg_inf], 1.0 - q_neg_inf - np.cumsum(q), [0.0]])
        return np.clip(p_fa, 0.0, 1.0), np.clip(p_md, 0.0, 1.0)


def epsilons(problems: Sequence[tuple[LossAtoms, float]]) -> list[float | None]:
    """:meth:`LossAtoms.epsilon` of each (atom set, δ), the searches run side by side
    (``atom_batch.run``: one batched evaluation per round, each search's own path, the same floats)
    and remembered per atom set as one at a time would be; the values the searches computed are
    remembered too (``LossAtoms._values``)."""
    out: list[float | None] = [None] * len(problems)
    searching: list[int] = []
    for i, (atoms, delta) in enumerate(problems):
        if delta in atoms._cache:
            out[i] = atoms._cache[delta]
        else:
            searching.append(i)
    _fill_reaches([problems[i][0] for i in searching])
    found = run([(problems[i][0], problems[i][0]._steps(problems[i][1])) for i in searching])
    for i, eps in zip(searching, found, strict=True):
        atoms, delta = problems[i]
        if len(atoms._cache) >= _REMEMBERED:
            atoms._cache.clear()
        atoms._cache[delta] = out[i] = eps
    return out


def deltas_at(requests: Sequence[tuple[LossAtoms, float]]) -> list[float]:
    """:meth:`LossAtoms.delta` of each (atom set, ε), the finite parts summed side by side
    (``atom_batch.log_finite_parts``: the floats of one at a time)."""
    parts = log_finite_parts(requests)
    return [atoms.p_inf + math.exp(v) for (atoms, _), v in zip(requests, parts, strict=True)]


def _fill_reaches(sets: Sequence[LossAtoms]) -> None:
    """``LossAtoms._reach`` of the atom sets that will need it and lack it, in one pass: each step is
    elementwise over their concatenation (numpy's ufuncs give each element the same float wherever it
    sits in an array), so each set's array is the float of its own (tests/composition/test_reach.py)."""
    todo = [a for a in dict.fromkeys(sets) if "_reach" not in a.__dict__ and a._positive > 2]
    if len(todo) < 2:
        return
    sizes = [a._positive - 1 for a in todo]
    prefixes = [a._prefix_to(n) for a, n in zip(todo, sizes, strict=True)]
    loss = np.concatenate([a.loss[1:n + 1] for a, n in zip(todo, sizes, strict=True)])
    log_a = np.concatenate([pa[:n] for (pa, _), n in zip(prefixes, sizes, strict=True)])
    log_b = np.concatenate([pb[:n] for (_, pb), n in zip(prefixes, sizes, strict=True)])
    with np.errstate(invalid="ignore"):
        reach = log_a + log1mexp(np.minimum(loss + log_b - log_a, 0.0))
    for a, part in zip(todo, np.split(reach, np.cumsum(sizes)[:-1]), strict=True):
        a.__dict__["_reach"] = part
