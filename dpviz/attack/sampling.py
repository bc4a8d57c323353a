"""Sampling the adversary's sufficient statistic: the k-fold privacy loss sum (docs/MATH.md §14.1).

By the Neyman–Pearson lemma (Steinke, seed 001, §3.2, Lemma 4) the privacy loss L = ln P(y)/Q(y)
of the whole output y = (y_1, …, y_k) is the optimal test statistic, and for k independent steps it
is the sum of the per-step losses. So the attack never draws outputs, only what the test reads:

- a finite law (the canonical pair, KOV eq. 16; randomized response): the multinomial counts of its
  atoms (``multinomial_counts``), one draw per trial whatever k is; the sum is counts · losses, on
  the law's lattice computed in whole units so that equal sums are equal floats (ties stay ties);
- the Gaussian: the sum itself, N(±kμ²/2, kμ²) (Steinke Prop. 3, Cor. 10), one draw per trial;
- Laplace: the counts of its two atoms ±ε0 (multinomial, one draw per trial) and one draw for each
  step whose loss falls in the continuous middle (−ε0, ε0), a fraction (1 − e^{−ε0})/2 of the steps;
- every Poisson-subsampled mechanism: each step's loss drawn and summed, in chunks of at most
  ``CHUNK_DRAWS`` draws (memory stays bounded whatever N·k is);
- the HBW prior "in at least one database, uniformly" against 0⃗ for the canonical pair with δ0 = 0
  (HBW §V-B; docs/MATH.md §5.5): the number of high outcomes n_B, which carries the mixture's
  likelihood ratio ((1 + e^{ε0})^{n_B}(1 + e^{−ε0})^{k−n_B} − 1)/(2^k − 1) (increasing in n_B).

Every sampler returns the statistic under H0 ("the target is in": P) or H1 ("it is not": Q); larger
values favour H0. Draws come from one ``numpy.random.Generator`` seeded by the caller.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from dpviz.attack.binned import BinnedPair
from dpviz.attack.binomial import binomial
from dpviz.attack.lookup import Lookup
from dpviz.mechanisms.base import LossDraw
from dpviz.pld.law import LossLaw

CHUNK_DRAWS = 1 << 22
"""Most per-step draws held in memory at once (32 MiB of float64)."""

StepDraw = LossDraw
"""(rng, n, under_p) → n independent one-step privacy losses under P (``under_p``) or Q."""


@dataclass(frozen=True)
class Sampler:
    """The statistic of ``k`` steps: ``draw(rng, n, under_p)`` gives n trials' values; ``per_step``
    says whether its cost grows with k (n·k draws) or not (n draws)."""

    draw: Callable[[np.random.Generator, int, bool], NDArray[np.float64]]
    per_step: bool
    k: int
    step_fraction: float = 1.0
    """Expected fraction of the k steps drawn one by one (``per_step`` samplers)."""
    law_error: float = 0.0
    """Bound on |sampled − true| probability of any event of the statistic (``binned_sum``: the
    floating-point error of its composed law; 0 for the exact samplers)."""

    def work(self, trials: int) -> int:
        """Expected draws for ``trials`` trials under one hypothesis."""
        return math.ceil(trials * (self.k * self.step_fraction if self.per_step else 1))


# ---------------------------------------------------------------------- one step
# One step's loss is drawn by the mechanism itself (``Mechanism.loss_draw``).

def subsampled_step(base: StepDraw, rate: float) -> StepDraw:
    """Poisson subsampling at rate q, remove direction (P' = (1 − q)Q + qP against Q): the loss is
    g(L) = ln(1 − q + q e^L) of the base loss (Steinke §6; ``dpviz.mechanisms.subsampling``)."""
    log_keep, log_q = (math.log1p(-rate) if rate < 1 else -math.inf), math.log(rate)

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
        if under_p:
            picked = rng.random(n) < rate
            base_loss = np.empty(n)
            base_loss[picked] = base(rng, int(picked.sum()), True)
            base_loss[~picked] = base(rng, int((~picked).sum()), False)
        else:
            base_loss = base(rng, n, False)
        with np.errstate(over="ignore"):
            return np.logaddexp(log_keep, log_q + base_loss)

    return draw


# ---------------------------------------------------------------------- k steps
def summed(step: StepDraw, k: int) -> Sampler:
    """k steps drawn and summed, chunked so that at most ``CHUNK_DRAWS`` are held at once."""
    rows = max(1, CHUNK_DRAWS // k)

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
        out = np.empty(n)
        for start in range(0, n, rows):
            m = min(rows, n - start)
            if k <= CHUNK_DRAWS:
                out[start:start + m] = step(rng, m * k, under_p).reshape(m, k).sum(axis=1)
            else:  # one trial is itself longer than a chunk
                total = 0.0
                for s in range(0, k, CHUNK_DRAWS):
                    total += float(step(rng, min(CHUNK_DRAWS, k - s), under_p).sum())
                out[start] = total
        return out

    return Sampler(draw=draw, per_step=True, k=k)


def multinomial_counts(rng: np.random.Generator, k: int, p: NDArray[np.float64], n: int) -> NDArray[np.int64]:
    """n draws of Multinomial(k, p) as an (n, len(p)) array, one category at a time by the chain
    rule: X_j ~ Bin(k − X_1 − … − X_{j−1}, p_j / (p_j + … + p_m)), the last category the remainder
    (numpy's ``multinomial`` does the same, row by row; vectorised over the rows it is 2–4× faster,
    issue 20). The first category's n is k in every row: ``binomial.binomial`` draws numpy's numbers
    for it, faster. Categories of probability 0 are never drawn (their count is 0)."""
    counts = np.zeros((n, p.size), dtype=np.int64)
    drawn = np.flatnonzero(p > 0)
    if drawn.size == 0:
        return counts
    tail = np.cumsum(p[::-1])[::-1]  # p_j + … + p_m
    left = np.full(n, k, dtype=np.int64)
    for i, j in enumerate(drawn[:-1]):
        share = min(1.0, p[j] / tail[j])
        c = binomial(rng, k, share, n) if i == 0 else rng.binomial(left, share)  # first: left is k
        counts[:, j] = c
        left -= c
    counts[:, drawn[-1]] = left
    return counts


def finite_sum(law: LossLaw, k: int, unit: float | None) -> Sampler:
    """k steps of a finite law by the multinomial counts of its atoms (one draw per trial); the sum
    counts · losses in whole multiples of ``unit`` when every atom is one (exact ties)."""
    loss = law.loss
    p = np.concatenate([law.p, [law.p_inf]])
    q = np.concatenate([law.q, [law.q_neg_inf]])
    p, q = p / p.sum(), q / q.sum()
    steps = None
    if unit is not None and unit > 0 and loss.size:
        s = np.rint(loss / unit)
        if np.all(np.abs(s * unit - loss) <= 1e-9 * np.maximum(np.abs(loss), unit)):
            steps = s.astype(np.int64)

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
        counts = multinomial_counts(rng, k, p if under_p else q, n)
        finite, infinite = counts[:, :-1], counts[:, -1] > 0
        total = (finite @ steps).astype(float) * unit if steps is not None and unit is not None \
            else finite @ loss
        total[infinite] = math.inf if under_p else -math.inf
        return total

    return Sampler(draw=draw, per_step=False, k=k)


def of_sum(fast: tuple[StepDraw, float], k: int) -> Sampler:
    """The sampler of a mechanism's own k-step sum (``Mechanism.loss_sum``): one draw per trial,
    or, when a fraction of the steps is still drawn one by one, that fraction per trial."""
    draw, fraction = fast
    return Sampler(draw=draw, per_step=fraction > 0, k=k, step_fraction=fraction if fraction > 0 else 1.0)


def uniform_prior_count(eps0: float, k: int) -> Sampler:
    """The canonical (ε0, 0) pair in k databases, H0: the target is in a uniformly drawn non-empty
    set of them (HBW §V-B), H1: in none. Statistic: n_B, the number of high outcomes. Under H0,
    |b| = j has weight C(k, j)/(2^k − 1): a Bin(k, ½) draw, redrawn while 0; then
    n_B = Bin(j, e^{ε0}/(1 + e^{ε0})) + Bin(k − j, 1/(1 + e^{ε0}))."""
    high = 1.0 / (1.0 + math.exp(-eps0))
    low = 1.0 / (1.0 + math.exp(eps0))

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
        if not under_p:
            return binomial(rng, k, low, n).astype(float)
        j = binomial(rng, k, 0.5, n)
        while np.any(j == 0):
            zero = j == 0
            j[zero] = binomial(rng, k, 0.5, int(zero.sum()))
        return (rng.binomial(j, high) + rng.binomial(k - j, low)).astype(float)

    return Sampler(draw=draw, per_step=False, k=k)


def binned_sum(pair: BinnedPair, k: int) -> Sampler:
    """h·T, T the clipped sum of k window indices of a binned post-processing, drawn from its
    composed laws (``dpviz.attack.binned``; docs/MATH.md §14.5): one draw per trial."""
    cdfs = {True: np.cumsum(pair.p), False: np.cumsum(pair.q)}
    lookups = {under_p: Lookup(cdf, float(cdf[-1]), "right") for under_p, cdf in cdfs.items()}

    def draw(rng: np.random.Generator, n: int, under_p: bool) -> NDArray[np.float64]:
        cdf = cdfs[under_p]
        idx = lookups[under_p](rng.random(n) * cdf[-1])  # np.searchsorted(cdf, …, side="right")
        return (pair.lo + np.minimum(idx, cdf.size - 1)) * pair.h

    return Sampler(draw=draw, per_step=False, k=k, law_error=max(pair.err_p, pair.err_q))
