"""Exact hockey-stick divergence of a privacy loss distribution with finitely many atoms.

A pair (P, Q) is summarised by its privacy loss L = ln P(x)/Q(x) under x ~ P
(Steinke, seed 001, Prop. 7): ``δ(ε) = P(L = ∞) + E[(1 − e^{ε − L})_+]``.
The k-fold composition of the canonical (ε0, δ0) pair (KOV eq. 16) has binomial
atoms, so KOV Thm 3.3 is the special case ``LossAtoms.binomial``.

Numerics. Sorting atoms by decreasing loss, the sum over atoms with L > ε is
``A − e^ε B`` with prefix sums A = Σ p and B = Σ p e^{−L}. That difference cancels
badly for atoms with L close to ε, so atoms with L − ε ≤ ``WINDOW`` (``atom_kernel``) are summed
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

from dpviz.composition import atom_kernel
from dpviz.composition.binomial_atoms import binomial_atoms_many

_REMEMBERED = 64
"""Targets δ whose ε one atom set remembers (``LossAtoms.epsilon``)."""


@dataclass(frozen=True, eq=False)
class LossAtoms:
    """Privacy loss distribution: finite atoms ``loss`` (sorted decreasing) with
    P-masses ``exp(log_p)``, plus mass ``p_inf`` at L = +∞."""

    loss: NDArray[np.float64]
    log_p: NDArray[np.float64]
    p_inf: float = 0.0
    terms: int = 0
    """Number of atoms the error bound accounts for (≥ the stored ones; lumps count their tails)."""
    mass_error: float = 0.0
    """A relative error bound of the masses from how they were made, added to ``relative_error``
    (the exact route's lattice recursion, ``dpviz.mechanisms.exact_route``)."""
    _cache: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """ε(δ) already solved on this atom set (``epsilon``); a fresh one for every instance, also for
    a ``dataclasses.replace`` copy (another p_inf is another answer)."""
    _values: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    """``log_finite_part`` at the ε last evaluated (up to ``_REMEMBERED``), and a search's value at
    its answer (``_solve``): its caller asks δ(ε) there (``optimal.epsilons_for_delta``) and gets the
    float the search accepted."""

    @classmethod
    def from_masses(cls, loss: NDArray[np.float64], log_p: NDArray[np.float64],
                    p_inf: float = 0.0, mass_error: float = 0.0) -> LossAtoms:
        """Sort by decreasing loss (ties kept as separate atoms: harmless)."""
        loss = np.asarray(loss, dtype=float)
        log_p = np.asarray(log_p, dtype=float)
        order = np.argsort(-loss, kind="stable")
        return cls(loss=loss[order], log_p=log_p[order], p_inf=float(p_inf), mass_error=float(mass_error))

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
    def _positive(self) -> int:
        """Number of atoms with loss > 0."""
        return atom_kernel.count_above(self.loss, 0.0)

    @cached_property
    def _scan(self) -> list:
        """The prefix sums ln Σ_{b≤a} p_b and ln Σ_{b≤a} p_b e^{−L_b}, filled as far as the queries
        have read them, and how far (``atom_kernel``)."""
        return [np.empty(self.loss.size), np.empty(self.loss.size), 0]

    def log_finite_part(self, eps: float) -> float:
        """ln Σ_{L_a > ε} p_a (1 − e^{ε − L_a}) (−inf when empty; ``atom_kernel.log_part``);
        remembered (``_values``)."""
        eps = float(eps)
        value = self._values.get(eps)
        if value is None:
            functions, compiled = atom_kernel.LOOPS.pick(self.loss.size)
            scan = self._scan
            if not compiled:  # the prefix this evaluation reads, by numpy (the same floats)
                j = atom_kernel.count_above(self.loss, eps + atom_kernel.WINDOW)
                scan[2] = atom_kernel.prefill(self.loss, self.log_p, scan[0], scan[1], scan[2], j)
            value, scan[2] = functions["log_part"](self.loss, self.log_p, scan[0], scan[1], scan[2], eps)
            value = float(value)
            self._remember(eps, value)
        return value

    def _remember(self, eps: float, value: float) -> None:
        """Keep ``log_finite_part``'s value at ε (``_values``; emptied when ``_REMEMBERED`` are kept)."""
        if len(self._values) >= _REMEMBERED:
            self._values.clear()
        self._values[eps] = value

    def delta(self, eps: float) -> float:
        """δ(ε) = P(L=∞) + Σ_{L>ε} p (1 − e^{ε−L}) (Steinke Prop. 7)."""
        return self.p_inf + math.exp(self.log_finite_part(eps))

    def deltas(self, epsilons: NDArray[np.float64]) -> list[float]:
        """:meth:`delta` at each ε."""
        return deltas_at([(self, float(e)) for e in np.asarray(epsilons, dtype=float).ravel()])

    def epsilon(self, delta: float) -> float | None:
        """Smallest ε ≥ 0 with δ(ε) ≤ delta; ``None`` when delta < P(L = ∞). Remembered per atom set
        (``_cache``, up to ``_REMEMBERED`` targets): the cached atom sets are asked the same δ by a
        page's table and its curves (the priors' classic row at each k of its series, again after a
        change of k' or of the scenario)."""
        return epsilons([(self, delta)])[0]

    def _solve(self, delta: float) -> float | None:
        """``epsilon``, solved (``atom_kernel.solve``, docs/MATH.md §2): the finite part's value at
        the answer is remembered, so a caller's δ(ε) there is the float the search accepted."""
        target = delta - self.p_inf
        if target < 0:
            return None
        if target == 0 or self.loss.size == 0:
            return max(0.0, float(self.loss[0])) if self.loss.size else 0.0
        functions, compiled = atom_kernel.LOOPS.pick(self.loss.size)
        scan, positive, guess = self._scan, self._positive, -2
        if not compiled:  # the prefix over the atoms above 0 and the guess by numpy: the same answer
            scan[2] = atom_kernel.prefill(self.loss, self.log_p, scan[0], scan[1], scan[2], positive)
            guess = atom_kernel.numpy_guess(self.loss, scan[0], scan[1], positive, math.log(target))
        eps, part, scan[2] = functions["solve"](self.loss, self.log_p, self.p_inf, float(delta),
                                                1.0 + self.relative_error, positive, scan[0], scan[1],
                                                scan[2], guess)
        eps = float(eps)
        if part == part:
            self._remember(eps, float(part))
        return eps

    @property
    def relative_error(self) -> float:
        """A conservative bound on the relative error of ``delta`` (measured against mpmath
        in tests/composition: ≤ 2e-13 at 10^6 binomial atoms, where this gives 1e-12)."""
        return 1e-15 * (16.0 + math.sqrt(max(self.loss.size, self.terms))) + self.mass_error

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
    """:meth:`LossAtoms.epsilon` of each (atom set, δ), remembered per atom set."""
    out: list[float | None] = []
    for atoms, delta in problems:
        cache = atoms._cache
        if delta in cache:
            out.append(cache[delta])
            continue
        eps = atoms._solve(delta)
        if len(cache) >= _REMEMBERED:
            cache.clear()
        cache[delta] = eps
        out.append(eps)
    return out


def deltas_at(requests: Sequence[tuple[LossAtoms, float]]) -> list[float]:
    """:meth:`LossAtoms.delta` of each (atom set, ε)."""
    return [atoms.p_inf + math.exp(atoms.log_finite_part(e)) for atoms, e in requests]
