"""Adversary hypotheses: distributions over membership vectors b ∈ {0,1}^k (HBW Def. 3).

b_i = 1 means the target's record is in database i. Two kinds of hypothesis:

* :class:`Exchangeable` — π(b) depends only on |b| (level weights w_j = π(|b| = j),
  uniform within a level). Covers the point masses 0⃗ and 1⃗, the uniform prior over
  nonzero b (HBW §V-B), U{|b| ≥ k'} and U{|b| < k'} (HBW §III-A Example 2) and any
  distribution over |b|. Exact computations run over outcome-count classes.
* :class:`Explicit` — a short list of (b, weight) for small k (≤ 16), e.g. a point
  mass at any b or the free/paid feature-column vectors (HBW §V-A Example 3).

Weights of exchangeable priors are kept in log space, so k = 10^5 is fine.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cached_property, lru_cache, wraps

import numpy as np
from numpy.typing import NDArray

from dpviz.numerics import log_comb, log_pow2_minus_1, logsumexp
from dpviz.validation import K_MAX, ParameterError, check_count

EXPLICIT_K_MAX = 16
"""Largest k for an explicit list of membership vectors."""

REMEMBERED_K = 10_000
"""The paper's priors of at most this many databases are made once per (k, k') and shared
(``_remembered``): a view asks for them about 70 times (each point of the ε-against-k series, its
cost, its search and its answer), and their cached ln π(b) with them."""

REMEMBERED = 32
"""Priors remembered per family (a series has 24 points): at most 32 · 3 arrays of 10^4 floats."""

_WEIGHT_TOL = 1e-9
"""Explicit weights must sum to 1 within this (they are then renormalised)."""


@dataclass(frozen=True, eq=False)
class Exchangeable:
    """π(b) = w_{|b|} / C(k, |b|): a distribution over |b|, uniform within each level.

    ``log_level_weights[j] = ln w_j`` (−inf for empty levels), kept as a read-only float array
    (a tuple of 10^7 Python floats took 320 MB); ``family`` names the closed-form special cases
    the exact method knows ("zero", "uniform-nonzero", …).
    """

    k: int
    log_level_weights: NDArray[np.float64]
    family: str = "custom"
    label: str = ""
    threshold: int = 0
    """k' for the "at-least" and "below" families (0 otherwise)."""

    def __post_init__(self) -> None:
        check_count(self.k, field="k")
        log_w = np.array(self.log_level_weights, dtype=float)
        if log_w.shape != (self.k + 1,):
            raise ParameterError("level_weights", f"{log_w.size} entries",
                                 f"k + 1 = {self.k + 1} entries (one per |b| = 0..k)")
        log_w.flags.writeable = False
        object.__setattr__(self, "log_level_weights", log_w)

    @property
    def log_w(self) -> NDArray[np.float64]:
        return self.log_level_weights

    @cached_property
    def log_v(self) -> NDArray[np.float64]:
        """ln π(b) for one b with |b| = j, i.e. ln w_j − ln C(k, j)."""
        j = np.arange(self.k + 1)
        out = self.log_w - log_comb(self.k, j)
        out.flags.writeable = False
        return out

    @cached_property
    def levels(self) -> NDArray[np.int64]:
        """The sizes |b| that have positive weight."""
        return np.flatnonzero(np.isfinite(self.log_w))

    @cached_property
    def is_zero(self) -> bool:
        """Point mass on 0⃗ (the "not in any database" hypothesis)."""
        return bool(np.isfinite(self.log_w[0]) and self.levels.size == 1)


@dataclass(frozen=True)
class Explicit:
    """An explicit prior: ``support`` is a tuple of (b, weight), b a tuple of 0/1 of length k."""

    k: int
    support: tuple[tuple[tuple[int, ...], float], ...]
    label: str = ""

    def __post_init__(self) -> None:
        check_count(self.k, field="k", maximum=EXPLICIT_K_MAX)
        if not self.support:
            raise ParameterError("prior", "[]", "a non-empty list of (b, weight)")
        merged: dict[tuple[int, ...], float] = {}
        for b, w in self.support:
            bits = tuple(int(x) for x in b)
            if len(bits) != self.k or any(x not in (0, 1) for x in bits):
                raise ParameterError("b", b, f"a vector of {self.k} entries, each 0 or 1")
            wf = float(w)
            if not (math.isfinite(wf) and wf > 0):
                raise ParameterError("weight", w, "a positive number")
            merged[bits] = merged.get(bits, 0.0) + wf
        total = math.fsum(merged.values())
        if abs(total - 1.0) > _WEIGHT_TOL:
            raise ParameterError("weights", f"sum {total:.12g}", "weights summing to 1")
        object.__setattr__(self, "support", tuple((b, w / total) for b, w in sorted(merged.items())))

    @property
    def is_point(self) -> bool:
        return len(self.support) == 1


Hypothesis = Exchangeable | Explicit


def _levels(k: int, log_w: NDArray[np.float64], family: str, label: str, threshold: int = 0) -> Exchangeable:
    return Exchangeable(k=k, log_level_weights=log_w, family=family, label=label,
                        threshold=threshold)


def _remembered(make: Callable[..., Exchangeable]) -> Callable[..., Exchangeable]:
    """``make`` whose result for a small k (an ``int`` up to ``REMEMBERED_K``) is made once and
    shared: an ``Exchangeable`` is immutable (read-only arrays), so every caller reads the same
    floats as from a new one. Other arguments go to ``make`` as given (it validates them)."""
    remembered = lru_cache(maxsize=REMEMBERED)(make)

    @wraps(make)
    def prior(*, k: int, **kwargs: int) -> Exchangeable:
        small = type(k) is int and 0 < k <= REMEMBERED_K and all(type(v) is int for v in kwargs.values())
        return remembered(k=k, **kwargs) if small else make(k=k, **kwargs)
    return prior


@_remembered
def point_zero(*, k: int) -> Exchangeable:
    """p(0⃗) = 1: the record is in no database (classic H0)."""
    k = check_count(k, field="k")
    log_w = np.full(k + 1, -np.inf)
    log_w[0] = 0.0
    return _levels(k, log_w, "zero", "0⃗ (in no database)")


def point_one(*, k: int) -> Exchangeable:
    """p(1⃗) = 1: the record is in every database (classic H1)."""
    k = check_count(k, field="k")
    log_w = np.full(k + 1, -np.inf)
    log_w[k] = 0.0
    return _levels(k, log_w, "one", "1⃗ (in every database)")


@_remembered
def uniform_nonzero(*, k: int) -> Exchangeable:
    """U(B ∖ {0⃗}): in at least one database, no further knowledge (HBW §V-B example)."""
    k = check_count(k, field="k", maximum=K_MAX)
    j = np.arange(k + 1)
    log_w = log_comb(k, j) - log_pow2_minus_1(k)
    log_w[0] = -np.inf
    return _levels(k, log_w, "uniform-nonzero", "uniform over b ≠ 0⃗")


def _uniform_levels(k: int, mask: NDArray[np.bool_]) -> NDArray[np.float64]:
    j = np.arange(k + 1)
    log_c = np.where(mask, log_comb(k, j), -np.inf)
    return log_c - float(logsumexp(log_c[mask]))


@_remembered
def at_least(*, k: int, k2: int) -> Exchangeable:
    """U{b : |b| ≥ k'} (HBW §III-A Example 2, the "many doctors" hypothesis)."""
    k = check_count(k, field="k")
    k2 = check_count(k2, field="k2", minimum=1, maximum=k)
    return _levels(k, _uniform_levels(k, np.arange(k + 1) >= k2), "at-least", f"uniform over |b| ≥ {k2}",
                   threshold=k2)


@_remembered
def below(*, k: int, k2: int) -> Exchangeable:
    """U{b : |b| < k'} (the null hypothesis of HBW Example 2)."""
    k = check_count(k, field="k")
    k2 = check_count(k2, field="k2", minimum=1, maximum=k)
    return _levels(k, _uniform_levels(k, np.arange(k + 1) < k2), "below", f"uniform over |b| < {k2}",
                   threshold=k2)


def exchangeable(*, k: int, level_weights: Sequence[float] | NDArray[np.float64],
                 label: str = "") -> Exchangeable:
    """A prior given by the distribution of |b| (weights for |b| = 0..k, summing to 1)."""
    k = check_count(k, field="k")
    try:
        w = np.asarray(level_weights, dtype=float).reshape(-1)  # an array of 10^7 is not copied
    except (TypeError, ValueError):
        w = np.full(1, np.nan)
    if w.size != k + 1 or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ParameterError("level_weights", list(level_weights[:5]),
                             f"k + 1 = {k + 1} non-negative numbers (weights of |b| = 0..k)")
    total = math.fsum(w)
    if abs(total - 1.0) > _WEIGHT_TOL:
        raise ParameterError("level_weights", f"sum {total:.12g}", "weights summing to 1")
    with np.errstate(divide="ignore"):
        log_w = np.log(w / total)
    return _levels(k, log_w, "custom", label or "distribution over |b|")


def point(b: Sequence[int]) -> Explicit:
    """A point mass on one membership vector b (k ≤ 16)."""
    bits = tuple(int(x) for x in b)
    return Explicit(k=len(bits), support=((bits, 1.0),), label="b = " + "".join(map(str, bits)))


def explicit(support: Sequence[tuple[Sequence[int], float]], *, label: str = "") -> Explicit:
    """An explicit prior from (b, weight) pairs (k ≤ 16)."""
    if not support:
        raise ParameterError("prior", "[]", "a non-empty list of (b, weight)")
    k = len(support[0][0])
    return Explicit(k=k, support=tuple((tuple(b), w) for b, w in support), label=label)


def to_explicit(h: Hypothesis) -> Explicit:
    """Enumerate an exchangeable prior (k ≤ 16) as an explicit list."""
    if isinstance(h, Explicit):
        return h
    check_count(h.k, field="k", maximum=EXPLICIT_K_MAX)
    log_v = h.log_v
    rows = []
    for code in range(2 ** h.k):
        bits = tuple((code >> (h.k - 1 - i)) & 1 for i in range(h.k))
        lv = log_v[sum(bits)]
        if np.isfinite(lv):
            rows.append((bits, math.exp(lv)))
    return Explicit(k=h.k, support=tuple(rows), label=h.label)
