"""The exact optimum's largest k, found with two exact evaluations (issue 9; KOV Thm 3.3).

The generic integer search (``search.largest_int``) asks δ_opt(ε) about ten times; when the
answer is k in the millions each exact evaluation builds ≈ 50,000 binomial weights, and the
answer's forward check ε(δ) and the next k's build all ≈ 107,000 (docs/MATH.md §3). Here:

1. a Gaussian guess: the k-fold loss of the canonical pair (±ε0, mean kμ, variance kv) read as a
   Gaussian privacy loss, whose δ(ε) is in closed form (Steinke seed 001, Prop. 7);
2. an approximate search on δ(ε) summed over the binomial atoms that matter (a Hoeffding window
   of the weights around the mode, ≈ 8,000 atoms at k = 7·10^6), which places the boundary;
3. the exact decision at that k and at k + 1 (``optimal.delta_for_epsilon_once``'s number, bit for
   bit), which proves it: the exact score is monotone in k, so "k fits and k + 1 does not" is the
   answer the generic search finds. If the exact values disagree with the guess, the generic
   search runs (with the evaluations made so far remembered).

The forward checks ε(δ) at k and k + 1 come from the same atoms (those with loss > a for an a
below the answer): ``LossAtoms.epsilon`` only reads atoms with loss ≥ its crossing, so once the
crossing is seen to lie inside the kept atoms the number is the full set's, bit for bit; if not,
the full forward check runs. Approximations only choose where to look; every reported value and
every decision is an exact evaluation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from scipy.special import log_ndtr

from dpviz import budget as budgets
from dpviz.budget import Budget
from dpviz.composition import homogeneous, optimal
from dpviz.composition.atoms import LossAtoms
from dpviz.composition.binomial_atoms import binomial_log_weights
from dpviz.guarantee import Guarantee, Kind
from dpviz.numerics import bisect_int, log1mexp, logsumexp
from dpviz.planner.search import narrow

SMALLEST_ANSWER = 1_000
"""Below this guessed answer the generic search is already fast (a few ms): no shortcut."""
WINDOW_LOG_MASS = 20.0
"""The approximate sum leaves out binomial tails whose Hoeffding bound, exp(−2t²/k), is below
δ·e^−20/2: a relative error of at most 1e-9 in δ, far below the change from k to k + 1 where the
answer is large (≈ 1e-6 at k = 7·10^6)."""


def _moments(eps0: float) -> tuple[float, float]:
    """Mean and variance of one canonical pair's finite loss ±ε0 (P-probability e^ε0/(1 + e^ε0) of +ε0)."""
    mu = eps0 * math.tanh(eps0 / 2.0)
    return mu, max(eps0 * eps0 - mu * mu, 0.0)


def gaussian_log_delta(k: float, eps: float, eps0: float) -> float:
    """ln of the finite part of δ(ε) for a Gaussian loss with the k-fold mean and variance:
    ln[Φ((M − ε)/S) − e^{ε − M + S²/2} Φ((M − ε − S²)/S)] (a guess only, never reported)."""
    mu, v = _moments(eps0)
    m, s = k * mu, math.sqrt(k * v)
    if s <= 0:
        return 0.0 if m > eps else -math.inf
    t1 = float(log_ndtr((m - eps) / s))
    t2 = eps - m + s * s / 2.0 + float(log_ndtr((m - eps - s * s) / s))
    if t2 >= t1:
        return t1 - 40.0  # rounding: the difference is far below the first term
    return t1 + float(log1mexp(t2 - t1))


def gaussian_k(*, eps0: float, epsilon: float, log_target: float, top: int) -> int:
    """The k at which the Gaussian guess of δ(ε) reaches the target (bisection on ln k)."""
    lo, hi = 0.0, math.log(top)
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if gaussian_log_delta(math.exp(mid), epsilon, eps0) <= log_target:
            lo = mid
        else:
            hi = mid
    return min(max(round(math.exp(lo)), 1), top)


def gaussian_epsilon(*, k: int, eps0: float, log_target: float) -> float:
    """The ε at which the Gaussian guess of δ(ε) at k reaches the target (bisection)."""
    lo, hi = 0.0, k * eps0
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if gaussian_log_delta(k, mid, eps0) > log_target:
            lo = mid
        else:
            hi = mid
    return hi


def delta_score(d: float | None, delta: float) -> float:
    """The planner's score of an exact δ(ε_target) = ``d`` against the target δ (≤ 0: fits):
    z(δ) − z(d) with z(δ) = √(−2 ln δ), nearly linear in ε0 and in √k."""
    if d is None:
        return math.inf
    if d <= delta:  # fits (z(δ) − z(δ′) ≤ 0; both infinite at δ = δ′ = 0)
        return min(0.0, _z(delta) - _z(d)) if d > 0 else 0.0
    return _z(delta) - _z(d)


def _z(d: float) -> float:
    """√(−2 ln δ) (``inf`` at δ = 0, 0 at δ ≥ 1): decreasing in δ."""
    if d <= 0:
        return math.inf
    return math.sqrt(-2.0 * math.log(d)) if d < 1 else 0.0


@dataclass
class LargestK:
    """The largest k of (ε0, δ0)-DP steps whose exact optimum fits (ε, δ): exact evaluations made
    from one atom set per k, remembered, plus the approximate search that places the answer."""

    eps0: float
    delta0: float
    epsilon: float
    delta: float
    budget: Budget | None
    top: int
    fallback_score: Callable[[int], float]
    """The generic exact score at k (``optimal.delta_for_epsilon_once`` or its over-budget stand-in)."""
    fallback_forward: Callable[[int], Guarantee]
    """The generic forward check at k (``optimal.epsilon_for_delta``)."""
    _atoms: dict[int, LossAtoms | None] = field(default_factory=dict)

    # -- exact evaluations ------------------------------------------------------------------------

    def _admitted(self, k: int) -> bool:
        levels = homogeneous(k=k, eps0=self.eps0, delta0=self.delta0)
        return budgets.resolve(self.budget).admits(optimal.cost(levels))

    def atoms(self, k: int) -> LossAtoms | None:
        """The atoms with loss > a at k (a below both ε_target and the guessed ε(δ)), or None when
        the budget sends the optimum to its closed-form stand-in (the generic route answers)."""
        if k not in self._atoms:
            if self.delta <= 0 or self.eps0 <= 0 or not self._admitted(k):
                self._atoms[k] = None
            else:
                log_t = math.log(self.delta)
                guess = gaussian_epsilon(k=k, eps0=self.eps0, log_target=log_t)
                _, v = _moments(self.eps0)
                margin = 0.5 * math.sqrt(k * v) + 8.0 * self.eps0
                a = max(0.0, min(self.epsilon, guess) - margin)
                self._atoms[k] = LossAtoms.binomial(k=k, eps0=self.eps0, delta0=self.delta0, above=a)
        return self._atoms[k]

    def score(self, k: int) -> float:
        """The exact score at k: δ(ε_target) of the kept atoms is the optimum's, bit for bit."""
        t = self.atoms(k)
        if t is None:
            return self.fallback_score(k)
        return delta_score(min(t.delta(self.epsilon), 1.0), self.delta)

    def forward(self, k: int) -> Guarantee:
        """``optimal.epsilon_for_delta`` at k (equal as a value), from the kept atoms when its
        crossing is among them."""
        t = self.atoms(k)
        if t is None or t.loss.size == 0 or self.delta - t.p_inf <= 0:
            return self.fallback_forward(k)
        log_t = math.log(self.delta - t.p_inf)
        # the crossing lies inside when even the smallest kept loss leaves more than the target
        # above it; then neither the early "δ(0) ≤ δ" exit nor the atom bisection can tell the kept
        # atoms from the full set (``LossAtoms.epsilon``)
        if not t.log_finite_part(float(t.loss[-1])) > log_t + 1e-12 or float(t.loss[-1]) < 0:
            return self.fallback_forward(k)
        eps = t.epsilon(self.delta)
        if eps is None:
            return self.fallback_forward(k)
        return Guarantee(epsilon=eps, delta=min(t.delta(eps), 1.0), kind=Kind.EXACT,
                         source=optimal.SOURCE_HOMOGENEOUS)

    # -- approximate placement --------------------------------------------------------------------

    def approx_score(self, k: int) -> float:
        """The score of δ(ε_target) summed over the atoms inside a Hoeffding window only."""
        eps0, eps = self.eps0, self.epsilon
        mode = k / (1.0 + math.exp(eps0))
        t = math.sqrt(k / 2.0 * (WINDOW_LOG_MASS + math.log(2.0) - math.log(self.delta)))
        first = max(0, int(mode - t))
        # atoms with loss (k − 2i)·ε0 > ε: i < (k − ε/ε0)/2, none once ε/ε0 ≥ 2k (capped there:
        # ε/ε0 is +inf for a subnormal ε0 such as 1e-310, issue 21 item 16)
        last = min(k, math.ceil((k - min(eps / eps0, 2.0 * k)) / 2.0))
        log_free = k * math.log1p(-self.delta0)
        p_inf = -math.expm1(log_free)
        finite = 0.0
        if last >= first:
            idx = np.arange(first, last + 1, dtype=float)
            loss = (k - 2.0 * idx) * eps0
            keep = loss > eps
            if keep.any():
                log_w = binomial_log_weights(k, eps0, idx[keep])
                finite = math.exp(logsumexp(log_w + log1mexp(eps - loss[keep])) + log_free)
        return delta_score(min(p_inf + finite, 1.0), self.delta)

    def place(self, start: int) -> tuple[int, int] | None:
        """(lo, lo + 1) with the approximate score fitting at lo and not at lo + 1; (top, top + 1)
        when it fits at the top; None when it fits nowhere (the generic search decides)."""
        f, top = self.approx_score, self.top
        k0 = min(max(start, 1), top)
        s0 = f(k0)
        step = max(1, k0 >> 10)
        if s0 <= 0:
            lo, s_lo = k0, s0
            while True:
                if lo >= top:
                    return top, top + 1
                hi = min(top, lo + step)
                s_hi = f(hi)
                if s_hi > 0:
                    break
                lo, s_lo, step = hi, s_hi, step * 4
        else:
            hi, s_hi = k0, s0
            while True:
                if hi <= 1:
                    return None
                lo = max(1, hi - step)
                s_lo = f(lo)
                if s_lo <= 0:
                    break
                hi, s_hi, step = lo, s_lo, step * 4
        if hi - lo > 1:
            flo, fhi = narrow(lambda x: f(int(x)), float(lo), float(hi), s_lo, s_hi, steps=8, rtol=0.0,
                              snap=lambda x: float(round(x)))
            lo, hi = bisect_int(lambda n: f(n) <= 0, int(flo), int(fhi))
        return lo, hi

    def search(self) -> tuple[int, int] | None:
        """(lo, hi = lo + 1) as ``search.largest_int`` finds them on the exact score, proved by the
        exact score at lo and hi (hi not evaluated at the top); None: run the generic search.

        The generic search evaluates only k ≤ min(top, 2·hi) (doubling from a start below the
        answer); when the budget admits the exact sum at all of those (1 % margin: the atom count
        moves by a few atoms between neighbouring k), its score is the exact one, monotone in k,
        and its answer is the unique boundary found here. Otherwise it runs, as before."""
        if self.delta <= 0 or self.eps0 <= 0:
            return None
        guess = gaussian_k(eps0=self.eps0, epsilon=self.epsilon, log_target=math.log(self.delta),
                           top=self.top)
        if guess < SMALLEST_ANSWER:
            return None
        placed = self.place(guess)
        if placed is None:
            return None
        lo, hi = placed
        reach = optimal.cost(homogeneous(k=min(self.top, 2 * hi), eps0=self.eps0, delta0=self.delta0))
        if not budgets.resolve(self.budget).allows(1.01 * reach.seconds, 1.01 * reach.bytes):
            return None
        if self.score(lo) > 0:
            return None
        if lo >= self.top:
            return self.top, self.top + 1
        return (lo, hi) if self.score(hi) > 0 else None
