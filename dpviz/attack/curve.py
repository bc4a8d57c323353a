"""The likelihood-ratio test at every threshold, its error rates with Clopper–Pearson boxes, and the
ε the attack certifies (docs/MATH.md §14.2–§14.3).

The test "reject H0 (say: the target is out) when the statistic is below t" has
P_FA(t) = P(S < t | H0) and P_MD(t) = P(S ≥ t | H1) (KOV §2 vocabulary). By KOV Thm 2.1 an
(ε, δ)-DP mechanism keeps every test in R(ε, δ), i.e. P_FA + e^ε P_MD ≥ 1 − δ and
e^ε P_FA + P_MD ≥ 1 − δ. A test with error rates (α, β) therefore shows

    ε ≥ max( ln((1 − δ − β)/α),  ln((1 − δ − α)/β) ),

and replacing α, β by upper confidence bounds keeps the statement true with that confidence
(the right side decreases in both). Choosing the best of many thresholds on the same trials would
overstate it; dpviz picks the threshold on the first half of the trials and certifies it on the
second half, where one Clopper–Pearson upper bound per error rate at level 1 − (1 − c)/2 gives
confidence c for the pair (a union bound over the two rates).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray
from scipy.stats import beta

from dpviz.guarantee import Kind, Status, finite_or_none

METHOD = ("threshold chosen on the first half of the trials, Clopper-Pearson upper bounds of both error "
          "rates on the second half (union bound)")
"""How the certified ε is made (module docstring), in the CLI's words."""

SOURCE = "KOV Thm 2.1 on a tested threshold, Clopper-Pearson bounds (docs/MATH.md §14.3)"
"""Where a certified empirical ε comes from (the result protocol's ``source``)."""

CANDIDATES = 512
"""Thresholds examined on the selection half (quantiles of its pooled statistic)."""

MERGE_ABOVE = 2**18
"""``pooled_quantiles`` reads the order statistics out of the two sorted samples (``merged_at``,
about 1 ms for 2,000 levels whatever the size) only for pools larger than this; a smaller pool is
sorted (200,000 trials with a few distinct values sort in 0.9 ms, a continuous 800,000 in 10 ms)."""


@dataclass(frozen=True)
class ErrorCurve:
    """Empirical (P_FA, P_MD) of the threshold tests, counts out of ``trials`` per hypothesis."""

    thresholds: NDArray[np.float64]
    false_alarms: NDArray[np.int64]
    misses: NDArray[np.int64]
    trials: int

    @property
    def p_fa(self) -> NDArray[np.float64]:
        return self.false_alarms / self.trials

    @property
    def p_md(self) -> NDArray[np.float64]:
        return self.misses / self.trials


def error_counts(s_in: NDArray[np.float64], s_out: NDArray[np.float64],
                 thresholds: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """#{S_in < t} (false alarms) and #{S_out ≥ t} (misses) at each threshold t."""
    return sorted_error_counts(np.sort(s_in), np.sort(s_out), thresholds)


def sorted_error_counts(a: NDArray[np.float64], b: NDArray[np.float64],
                        thresholds: NDArray[np.float64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``error_counts`` of samples already sorted (``a`` under H0, ``b`` under H1)."""
    fa = np.searchsorted(a, thresholds, side="left")
    md = b.size - np.searchsorted(b, thresholds, side="left")
    return fa.astype(np.int64), md.astype(np.int64)


def count_at(s_in: NDArray[np.float64], s_out: NDArray[np.float64], t: float) -> tuple[int, int]:
    """``error_counts`` at one threshold, by counting (no sort): #{S_in < t} and #{S_out ≥ t}."""
    return int(np.count_nonzero(s_in < t)), int(np.count_nonzero(s_out >= t))


def finite_quantiles(values: NDArray[np.float64], count: int) -> NDArray[np.float64]:
    """``np.quantile`` (linear, Hyndman–Fan 7) of the finite ``values`` at ``count`` equally spaced
    levels from 0 to 1, read off a sorted copy (``sorted_quantiles``): the same numbers, for a
    fifth of the cost (numpy partitions its input at every level; issue 20); none where no value is
    finite."""
    finite = values[np.isfinite(values)]
    return sorted_quantiles(np.sort(finite), np.linspace(0.0, 1.0, count)) if finite.size else np.zeros(0)


def sorted_quantiles(x: NDArray[np.float64], levels: NDArray[np.float64]) -> NDArray[np.float64]:
    """``np.quantile(x, levels)`` (method "linear") of a sorted, finite, non-empty ``x``, by numpy's own
    arithmetic (``numpy.lib._function_base_impl._quantile``: virtual index (n − 1)·q, its floor and
    the next order statistic, numpy's two-sided ``_lerp``) without the partition, which a sorted
    sample does not need. tests/attack/test_fast_paths.py holds it to np.quantile bit for bit."""
    lo, hi, gamma = _quantile_ranks(x.size, levels)
    return _lerp(x[lo], x[hi], gamma)


def pooled_quantiles(a: NDArray[np.float64], b: NDArray[np.float64], count: int) -> NDArray[np.float64]:
    """``finite_quantiles(np.concatenate([a, b]), count)`` of two sorted samples, the same floats,
    without sorting the pooled sample again: its order statistics at the ranks the quantiles read
    are found in ``a`` and ``b`` (``merged_at``)."""
    a, b = _finite(a), _finite(b)
    if a.size + b.size == 0:
        return np.zeros(0)  # every trial infinite (δ0 near 1): no finite quantile
    if a.size + b.size <= MERGE_ABOVE:
        return sorted_quantiles(np.sort(np.concatenate([a, b])), np.linspace(0.0, 1.0, count))
    lo, hi, gamma = _quantile_ranks(a.size + b.size, np.linspace(0.0, 1.0, count))
    both = merged_at(a, b, np.concatenate([lo, hi]))  # one bisection for both ranks of each level
    return _lerp(both[:lo.size], both[lo.size:], gamma)


def merged_at(a: NDArray[np.float64], b: NDArray[np.float64], ranks: NDArray[np.intp]) -> NDArray[np.float64]:
    """``np.sort(np.concatenate([a, b]))[ranks]`` of two sorted arrays, without the merge. The r + 1
    smallest of the merge (ties: ``a``'s first) take i from ``a`` and r + 1 − i from ``b``; i is the
    least in [max(0, r + 1 − |b|), min(r + 1, |a|)] at which ``a[i] > b[r − i]`` or either side is
    used up (the condition only turns true as i grows), found by bisection for every rank at once.
    The r-th smallest is then the larger of ``a[i − 1]`` and ``b[r − i]``."""
    n, m = a.size, b.size
    k = np.asarray(ranks, dtype=np.intp) + 1
    lo, hi = np.maximum(0, k - m), np.minimum(k, n)
    a_at = a if n else np.full(1, -np.inf)  # an empty side is never read: a stand-in to index
    b_at = b if m else np.full(1, -np.inf)
    last_a, last_b = max(n - 1, 0), max(m - 1, 0)
    while True:
        open_ = lo < hi
        if not open_.any():
            break
        i = (lo + hi) // 2
        j = k - i
        # more of a is needed while a[i] ≤ b[j − 1]: a[i] then precedes b's last one taken
        more = (i < n) & (j > 0) & (a_at[np.minimum(i, last_a)] <= b_at[np.clip(j - 1, 0, last_b)])
        lo = np.where(open_ & more, i + 1, lo)
        hi = np.where(open_ & ~more, i, hi)
    from_a = np.where(lo > 0, a_at[np.clip(lo - 1, 0, last_a)], -np.inf)
    from_b = np.where(k - lo > 0, b_at[np.clip(k - lo - 1, 0, last_b)], -np.inf)
    return np.maximum(from_a, from_b)


def _finite(x: NDArray[np.float64]) -> NDArray[np.float64]:
    """The finite part of a sorted sample (its ±∞ are at its ends)."""
    return x[np.searchsorted(x, -np.inf, side="right"):np.searchsorted(x, np.inf, side="left")]


def _quantile_ranks(n: int, levels: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.intp],
                                                                   NDArray[np.float64]]:
    """numpy's virtual index (n − 1)·q of each level: its floor, the next rank and the fraction."""
    virtual = (n - 1) * levels
    below = np.floor(virtual)
    last = virtual >= n - 1
    below[last] = n - 1
    lo = below.astype(np.intp)
    hi = np.minimum(lo + 1, n - 1)
    return lo, hi, virtual - lo


def _lerp(a: NDArray[np.float64], b: NDArray[np.float64], gamma: NDArray[np.float64]) -> NDArray[np.float64]:
    """numpy's two-sided linear interpolation (``_lerp``)."""
    diff = b - a
    out = a + diff * gamma
    np.subtract(b, diff * (1 - gamma), out=out, where=gamma >= 0.5)
    return out


def error_curve(s_in: NDArray[np.float64], s_out: NDArray[np.float64]) -> ErrorCurve:
    """The test at every threshold that changes it: each distinct observed value, and +∞ (always
    reject)."""
    if s_in.size != s_out.size:
        raise ValueError("both hypotheses need the same number of trials")
    t = np.unique(np.concatenate([s_in, s_out, [math.inf]]))
    fa, md = error_counts(s_in, s_out, t)
    return ErrorCurve(thresholds=t, false_alarms=fa, misses=md, trials=int(s_in.size))


def cp_upper(count: NDArray[np.int64] | int, n: int, level: float) -> NDArray[np.float64]:
    """One-sided Clopper–Pearson upper bound: P(true rate ≤ bound) ≥ ``level`` (exact binomial)."""
    x = np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        up = beta.ppf(level, x + 1.0, np.maximum(n - x, 1e-300))
    return np.where(x >= n, 1.0, up)


def cp_upper_each(count: NDArray[np.int64], n: int, level: float) -> NDArray[np.float64]:
    """``cp_upper`` of each count, each distinct count computed once (the same floats: scipy's beta
    quantile is computed element by element). A candidate threshold and the next float above it
    mostly count the same trials, so half of the quantiles were repeated (issue 20)."""
    distinct, where = np.unique(count, return_inverse=True)
    return cp_upper(distinct, n, level)[where]


def cp_lower(count: NDArray[np.int64] | int, n: int, level: float) -> NDArray[np.float64]:
    """One-sided Clopper–Pearson lower bound: P(true rate ≥ bound) ≥ ``level``."""
    x = np.asarray(count, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        lo = beta.ppf(1.0 - level, np.maximum(x, 1e-300), n - x + 1.0)
    return np.where(x <= 0, 0.0, lo)


def cp_box(count: NDArray[np.int64], n: int, confidence: float) -> tuple[NDArray[np.float64],
                                                                         NDArray[np.float64]]:
    """Two-sided Clopper–Pearson interval of level ``confidence`` (each side (1 − c)/2)."""
    side = 1.0 - (1.0 - confidence) / 2.0
    return cp_lower(count, n, side), cp_upper(count, n, side)


def box(false_alarms: NDArray[np.int64], misses: NDArray[np.int64], n: int, confidence: float
        ) -> dict[str, NDArray[np.float64]]:
    """Clopper–Pearson boxes that hold the true (P_FA, P_MD) with probability ≥ ``confidence``: each
    side a two-sided interval of level √c, the two samples independent (c = √c · √c)."""
    side = math.sqrt(confidence)
    fa_lo, fa_up = cp_box(false_alarms, n, side)
    md_lo, md_up = cp_box(misses, n, side)
    return {"p_fa_lower": fa_lo, "p_fa_upper": fa_up, "p_md_lower": md_lo, "p_md_upper": md_up}


def epsilon_shown(alpha: NDArray[np.float64] | float, beta_: NDArray[np.float64] | float,
                  delta: float) -> NDArray[np.float64]:
    """max(ln((1 − δ − β)/α), ln((1 − δ − α)/β), 0): the ε a test with these error rates shows
    (module docstring); 0 where it shows nothing, +∞ where a rate is 0 and the other < 1 − δ."""
    a = np.asarray(alpha, dtype=float)
    b = np.asarray(beta_, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        one = np.log(np.maximum(1.0 - delta - b, 0.0)) - np.log(a)
        two = np.log(np.maximum(1.0 - delta - a, 0.0)) - np.log(b)
    out = np.fmax(np.fmax(one, two), 0.0)
    return np.where(np.isnan(out), 0.0, out)


@dataclass(frozen=True)
class Certificate:
    """The ε a test certifies at confidence ``confidence`` and the trials it used."""

    epsilon: float
    threshold: float
    p_fa_upper: float
    p_md_upper: float
    false_alarms: int
    misses: int
    trials: int
    confidence: float
    estimate: float
    """The same threshold's point estimate (no confidence bound), for comparison."""

    # the result protocol (dpviz.results): a certified lower bound on ε at the stated confidence
    kind = Kind.LOWER
    status = Status.OK
    reason = None
    feasible = True
    source = SOURCE

    @property
    def value(self) -> float:
        return self.epsilon

    def to_json(self) -> dict[str, Any]:
        """The threshold, both error rates' upper bounds, the counts they come from and the point
        estimate (``None`` when no false alarm was seen: it is unbounded)."""
        return {"threshold": finite_or_none(self.threshold), "p_fa_upper": self.p_fa_upper,
                "p_md_upper": self.p_md_upper, "false_alarms": self.false_alarms, "misses": self.misses,
                "trials": self.trials, "point_estimate_epsilon": finite_or_none(self.estimate)}


def widened(b: dict[str, NDArray[np.float64]], slack: float) -> dict[str, NDArray[np.float64]]:
    """Boxes widened by ``slack`` on every side (a sampled law within ``slack`` of the true one)."""
    if slack <= 0:
        return b
    return {key: np.clip(v - slack if key.endswith("lower") else v + slack, 0.0, 1.0) for key, v in b.items()}


def certify(s_in: NDArray[np.float64], s_out: NDArray[np.float64], *, delta: float,
            confidence: float, slack: float = 0.0) -> Certificate:
    """Empirical ε lower bound (module docstring): threshold chosen on the first half of each
    sample, Clopper–Pearson upper bounds at level 1 − (1 − c)/2 on the second half, plus ``slack``
    when the samples come from a law within ``slack`` of the true one (any event's probability)."""
    half = s_in.size // 2
    level = 1.0 - (1.0 - confidence) / 2.0
    sel_in, sel_out = np.sort(s_in[:half]), np.sort(s_out[:half])  # each sorted once, pooled never
    finite = np.isfinite(sel_in).any() or np.isfinite(sel_out).any()
    cand = np.unique(pooled_quantiles(sel_in, sel_out, CANDIDATES)) if finite else np.zeros(0)
    cand = np.unique(np.concatenate([cand, np.nextafter(cand, math.inf), [math.inf]]))
    fa, md = sorted_error_counts(sel_in, sel_out, cand)
    score = epsilon_shown(cp_upper_each(fa, half, level), cp_upper_each(md, half, level), delta)
    best = int(np.argmax(score))
    t = float(cand[best])
    test_in, test_out = s_in[half:], s_out[half:]
    n = int(test_in.size)
    fa_b, md_b = count_at(test_in, test_out, t)
    a_up = min(1.0, float(cp_upper(fa_b, n, level)) + slack)
    b_up = min(1.0, float(cp_upper(md_b, n, level)) + slack)
    eps = float(epsilon_shown(a_up, b_up, delta))
    est = float(epsilon_shown(fa_b / n, md_b / n, delta))
    return Certificate(epsilon=eps, threshold=t, p_fa_upper=a_up, p_md_upper=b_up,
                       false_alarms=fa_b, misses=md_b, trials=n, confidence=confidence, estimate=est)


def thin_indices(curve: ErrorCurve, count: int) -> NDArray[np.int64]:
    """At most ``count`` thresholds spread along the curve (by arc length in (P_FA, P_MD)), first
    and last kept: what a figure draws boxes at."""
    n = curve.thresholds.size
    if n <= count:
        return np.arange(n)
    x, y = curve.p_fa, curve.p_md
    arc = np.concatenate([[0.0], np.cumsum(np.hypot(np.diff(x), np.diff(y)))])
    want = np.linspace(0.0, arc[-1], count)
    idx = np.unique(np.clip(np.searchsorted(arc, want), 0, n - 1))
    return idx.astype(np.int64)
