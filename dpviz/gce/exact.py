"""Exact worst-case hypothesis-DP curve for two priors (beyond HBW; see docs/MATH.md §5.5).

Every (ε0, δ0)-DP mechanism is a post-processing of the canonical pair
(P~, Q~) on outcomes {A, B, C, D} (KOV eq. 16), so the worst case over all
mechanisms for hypotheses (p0, p1) is the privacy curve of
``Mix_π = Σ_b π(b) ⊗_i (b_i ? P~ : Q~)`` for π = p1 against π = p0, both
directions (HBW Def. 3 asks for both).

Count classes. For an outcome with counts (n_A, n_B, n_C, n_D), b must contain the
A positions and avoid the D positions, and with s (t) ones on B (C) positions the
product is ``δ0^{n_A+n_D} ((1−δ0)/(1+e^{ε0}))^{n_B+n_C} e^{ε0 n_C} e^{ε0(s−t)}``. For an
exchangeable π with v_j = π(b) at |b| = j this sums to that prefactor times
``g(n_B, n_C, n_A) = Σ_j v_{j+n_A} [x^j] (1 + e^{ε0}x)^{n_B} (1 + e^{−ε0}x)^{n_C}``, and
g obeys ``g(n_B+1, n_C, r) = g(n_B, n_C, r) + e^{ε0} g(n_B, n_C, r+1)`` (likewise for
n_C with e^{−ε0}), starting from g(0, 0, r) = v_r. Everything is in log space;
the recursion costs ~k³/6 cells, the closed forms for 0⃗ and U(B∖{0⃗}) cost nothing, and
for U{|b| ≥ k'} and U{|b| < k'} at δ0 = 0 the sum over j is a running tail (head) sum
of the (1 + x/e^{ε0})^{n_C} coefficients: O(k) per class.

Which classes are needed. δ0 = 0: only n_A = n_D = 0 (k + 1 classes). δ0 > 0 with
p0 = 0⃗: only n_A = 0 (Q~ has no A), the prior's mass on n_A > 0 goes to the
infinite-loss atom in closed form: Σ_j w_j (1 − (1 − δ0)^j). Otherwise all
(n_A, n_B, n_C) (~k³/6 classes). Explicit priors (k ≤ 16) group coordinates by
their column pattern across the support; coordinates in a group are exchangeable.

Cost. ``cost`` counts classes, recursion cells and threshold terms before anything is
built, and ``exact_pair`` refuses (:class:`TooLargeError`, with the reason in words) when
that estimate is above the ``Budget`` (``dpviz.budget``); the callers then answer with the
best bound that applies.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

import numpy as np
from numpy.typing import NDArray
from scipy.special import gammaln

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, OverBudget, cost_of
from dpviz.composition.atoms import LossAtoms
from dpviz.gce.hypotheses import Exchangeable, Explicit, Hypothesis, to_explicit
from dpviz.numerics import log1mexp, log_pow2_minus_1, logsumexp, logsumexp_rows, lower_hull, softplus
from dpviz.regions.boundary import Boundary
from dpviz.validation import ParameterError, check_delta, check_epsilon

SOURCE = "Exact worst case: canonical pair (KOV eq. 16) mixed over the prior (HBW Def. 3)"


class TooLargeError(OverBudget):
    """The exact method would need more time or memory than the budget allows (``reason``)."""

    def __init__(self, cost: Cost, budget: Budget, size: float) -> None:
        super().__init__(cost, budget)
        self.size = size  # classes + recursion cells + terms: the work counted
        self.limit = budget.seconds


@dataclass(frozen=True, eq=False)
class ClassTable:
    """Outcome classes of the pair: ln Mix0(class), ln Mix1(class) (−inf where zero),
    plus closed-form masses ``only0`` / ``only1`` on outcomes the other side cannot produce
    that are not listed as classes."""

    log_m0: NDArray[np.float64]
    log_m1: NDArray[np.float64]
    only0: float = 0.0
    only1: float = 0.0
    dropped: float = 0.0
    """A bound on each side's mass in classes not listed (outside the window of δ-outcomes,
    ``delta_window``): counted at infinite loss in both directions, so every value is an upper
    bound, and left out of the ``*_lower`` curves, which bound the truth from below."""


@dataclass(frozen=True, eq=False)
class ExactPair:
    """The exact curves of (p0, p1): forward = H(Mix1 ‖ Mix0), reverse = H(Mix0 ‖ Mix1).

    ``delta(ε)`` and ``epsilon(δ)`` are two-sided (the larger of the two directions).
    """

    table: ClassTable

    @cached_property
    def forward(self) -> LossAtoms:
        """Atoms of Mix1 against Mix0: forward direction, Mix1(S) ≤ e^ε Mix0(S) + δ."""
        return _atoms(self.table.log_m1, self.table.log_m0, self.table.only1 + self.table.dropped)

    @cached_property
    def reverse(self) -> LossAtoms:
        """Atoms of Mix0 against Mix1: reverse direction, Mix0(S) ≤ e^ε Mix1(S) + δ."""
        return _atoms(self.table.log_m0, self.table.log_m1, self.table.only0 + self.table.dropped)

    @property
    def dropped(self) -> float:
        """Bound on the mass left out (``ClassTable.dropped``); 0 when every class is listed."""
        return self.table.dropped

    def epsilon_lower(self, delta: float) -> float | None:
        """A lower bound on the two-sided ε at δ: the curves without the mass left out (equal to
        ``epsilon`` when nothing is left out). ``None`` below the infinite-loss mass."""
        if self.table.dropped == 0:
            return self.epsilon(delta)
        f = self.forward_lower.epsilon(delta)
        r = self.reverse_lower.epsilon(delta)
        return None if f is None or r is None else max(f, r)

    @cached_property
    def forward_lower(self) -> LossAtoms:
        """The listed classes only (a lower bound on the forward curve); shares ``forward``'s sort."""
        return replace(self.forward, p_inf=min(self.table.only1, 1.0), _cache={})

    @cached_property
    def reverse_lower(self) -> LossAtoms:
        return replace(self.reverse, p_inf=min(self.table.only0, 1.0), _cache={})

    def delta_forward(self, eps: float) -> float:
        return min(self.forward.delta(eps), 1.0)

    def delta_reverse(self, eps: float) -> float:
        return min(self.reverse.delta(eps), 1.0)

    def delta(self, eps: float) -> float:
        return max(self.delta_forward(eps), self.delta_reverse(eps))

    def epsilon_forward(self, delta: float) -> float | None:
        return self.forward.epsilon(delta)

    def epsilon_reverse(self, delta: float) -> float | None:
        return self.reverse.epsilon(delta)

    def epsilon(self, delta: float) -> float | None:
        """Smallest ε with both directions ≤ δ; ``None`` below the infinite-loss mass."""
        f, r = self.epsilon_forward(delta), self.epsilon_reverse(delta)
        return None if f is None or r is None else max(f, r)

    @property
    def delta_floor(self) -> float:
        """Smallest reachable δ: the larger infinite-loss mass of the two directions."""
        return max(self.forward.p_inf, self.reverse.p_inf)

    def region(self) -> Boundary:
        """Lower boundary of the privacy region of the pair (KOV §2): the convex hull of
        the trade-off curve of (Mix1, Mix0) and its mirror image (the reverse pair)."""
        x, y = _tradeoff(self.table.log_m1, self.table.log_m0, only_q=self.table.only0)
        xs = np.concatenate([x, y])
        ys = np.concatenate([y, x])
        return _lower_hull(xs, ys)


def exact_pair(p0: Hypothesis, p1: Hypothesis, *, eps0: float, delta0: float,
               budget: Budget | None = None, region: bool = False) -> ExactPair:
    """The exact worst case of (p0, p1) for (ε0, δ0)-DP mechanisms; raises
    :class:`TooLargeError` rather than running beyond ``budget`` (``region``: the estimate
    includes the region's convex hull, for callers that will draw it)."""
    eps0 = check_epsilon(eps0, field="eps0")
    delta0 = check_delta(delta0, field="delta0")
    if p0.k != p1.k:
        raise ParameterError("k", f"{p0.k} vs {p1.k}", "the same k for both hypotheses")
    c, size = _cost_and_size(p0, p1, delta0=delta0, region=region)
    b = budgets.resolve(budget)
    if not b.admits(c):
        raise TooLargeError(c, b, size)
    key = _cache_key(p0, p1, eps0, delta0) if size <= CACHE_SIZE_MAX else None
    with _CACHE_LOCK:
        if key is not None and key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    if isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable):
        pair = ExactPair(_exchangeable_table(p0, p1, eps0, delta0))
    else:
        pair = ExactPair(_explicit_table(to_explicit(p0), to_explicit(p1), eps0, delta0))
    if key is not None:
        with _CACHE_LOCK:
            _CACHE[key] = pair
            while len(_CACHE) > CACHE_ENTRIES:
                _CACHE.popitem(last=False)
    return pair


CACHE_ENTRIES = 32
"""Exact pairs kept (least recently used dropped): the priors page asks for the same pair for its
table, its ε-against-k curve and its region (issue 10 item 8)."""

CACHE_SIZE_MAX = 200_000.0
"""Only pairs of at most this much counted work (classes + cells + terms) are kept: small ones."""

_CACHE: OrderedDict[tuple, ExactPair] = OrderedDict()
_CACHE_LOCK = threading.Lock()


def _cache_key(p0: Hypothesis, p1: Hypothesis, eps0: float, delta0: float) -> tuple | None:
    """A key for two named exchangeable families (their weights follow from k, family and k');
    ``None`` (not cached) for custom or explicit priors."""
    if not (isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable)):
        return None
    if "custom" in (p0.family, p1.family):
        return None
    return (p0.k, p0.family, p0.threshold, p1.family, p1.threshold, eps0, delta0)


def cost(p0: Hypothesis, p1: Hypothesis, *, delta0: float, region: bool = False) -> Cost:
    """Estimated time and memory of ``exact_pair`` (and of its region), from the counts of
    classes, recursion cells and threshold terms (``dpviz.budget`` units)."""
    return _cost_and_size(p0, p1, delta0=delta0, region=region)[0]


def family_cost(k: int, families: tuple[str, str], *, delta0: float, region: bool = False) -> Cost:
    """``cost`` for two named exchangeable families (``Exchangeable.family``: "zero",
    "uniform-nonzero", "at-least", "below", "custom") without building the priors, which at
    k = 10^7 take hundreds of MB themselves."""
    return _exchangeable_cost(k, families, delta0=delta0, region=region)[0]


def _cost_and_size(p0: Hypothesis, p1: Hypothesis, *, delta0: float, region: bool) -> tuple[Cost, float]:
    if isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable):
        families = tuple("zero" if p.is_zero else p.family for p in (p0, p1))
        return _exchangeable_cost(p0.k, families, delta0=delta0, region=region)  # type: ignore[arg-type]
    e0, e1 = to_explicit(p0), to_explicit(p1)
    support = len({b for b, _ in e0.support} | {b for b, _ in e1.support})
    classes = float(np.prod([_group_count(n, delta0) for n in _patterns(e0, e1).values()]))
    work = cost_of("gce_class", classes) + cost_of("gce_cell", 3.0 * classes * support,
                                                   memory_units=classes * support)
    if region:
        work = work + cost_of("gce_hull_point", 2.0 * classes, memory_units=0)
    return Cost(work.seconds, work.bytes, f"{classes:,.0f} count classes × {support} support vectors"), \
        classes * support


def _exchangeable_cost(k: int, families: tuple[str, str], *, delta0: float,
                       region: bool) -> tuple[Cost, float]:
    top = delta0 == 0
    closed = ("zero", "uniform-nonzero") + (("at-least", "below") if top else ())
    classes = _class_count(k, delta0, anchored="zero" in families)
    generic = sum(1 for f in families if f not in closed)
    threshold = sum(1 for f in families if top and f in ("at-least", "below"))
    cells = generic * (k + 1.0) * (k + 2.0) * (k + 3.0) / 6.0
    terms = threshold * (k + 1.0) * (k + 2.0) / 2.0
    widest = (k + 2.0) ** 2 / 4.0 if generic else 0.0  # cells of the widest recursion layer
    work = (cost_of("gce_class", classes) + cost_of("gce_cell", cells, memory_units=2 * widest)
            + cost_of("gce_threshold_term", terms, memory_units=0))
    if region:
        work = work + cost_of("gce_hull_point", 2.0 * classes, memory_units=0)
    what = f"{classes:,.0f} count classes" + (f", {cells:,.0f} recursion cells" if cells else "") \
        + (f", {terms:,.0f} threshold terms" if terms else "")
    return Cost(work.seconds, work.bytes, what), classes + cells + terms


# ---------------------------------------------------------------- exchangeable priors

WINDOW_TAIL = 1e-300
"""Mass of δ-outcomes counts left out of the exact sums (``delta_window``): below every δ a double
can state, so the values are exact to the last digit shown, and still a certified bound."""


@lru_cache(maxsize=64)
def delta_window(k: int, delta0: float, tail: float = WINDOW_TAIL) -> tuple[int, int, float]:
    """(r_lo, r_hi, dropped): the number r = n_A + n_D of δ-outcomes is Binomial(k, δ0) under every
    prior (each coordinate is A or D with probability δ0, whatever b), so only classes with
    r_lo ≤ r ≤ r_hi are listed (``tail``: the mass allowed outside); ``dropped`` bounds P(r outside)
    from above (each tail ≤ its first term / (1 − the ratio of consecutive terms there), a geometric
    bound, inflated by 1e-12 for the rounding of ``lgamma``). (0, k, 0) when δ0 = 0 or nothing is
    left out."""
    if delta0 == 0 or k == 0:
        return 0, k, 0.0
    ln_p, ln_q = math.log(delta0), math.log1p(-delta0)
    ln_k1 = math.lgamma(k + 1.0)

    def log_pmf(r: int) -> float:
        return ln_k1 - math.lgamma(r + 1.0) - math.lgamma(k - r + 1.0) + r * ln_p + (k - r) * ln_q

    target = math.log(tail / 2.0)
    mode = min(k, math.floor((k + 1) * delta0))
    hi, upper = k, 0.0
    for r in range(mode + 1, k + 1):  # P(X ≥ r) ≤ pmf(r) / (1 − ρ), ρ = pmf(r + 1)/pmf(r) ≤ ratio at r
        ratio = (k - r) / (r + 1.0) * delta0 / (1.0 - delta0)
        if ratio < 1.0:
            bound = log_pmf(r) - math.log1p(-ratio)
            if bound <= target:
                hi, upper = r - 1, math.exp(bound)
                break
    lo, lower = 0, 0.0
    for r in range(mode - 1, -1, -1):  # P(X ≤ r) ≤ pmf(r) / (1 − ρ'), ρ' = pmf(r − 1)/pmf(r)
        ratio = r / (k - r + 1.0) * (1.0 - delta0) / delta0
        if ratio < 1.0:
            bound = log_pmf(r) - math.log1p(-ratio)
            if bound <= target:
                lo, lower = r + 1, math.exp(bound)
                break
    return lo, hi, (upper + lower) * (1.0 + 1e-12)


def _class_count(k: int, delta0: float, *, anchored: bool) -> float:
    """Classes listed: δ0 = 0, n_B only; anchored (one side 0⃗), (n_B, n_C) with n_D = k − n_B − n_C
    in the window; otherwise (n_A, n_B, n_C) with n_A + n_D in the window."""
    if delta0 == 0:
        return k + 1.0
    lo, hi, _ = delta_window(k, delta0, WINDOW_TAIL)
    r = np.arange(lo, hi + 1, dtype=float)
    if anchored:
        return float(np.sum(k - r + 1.0))
    return float(np.sum((r + 1.0) * (k - r + 1.0)))


def _closed_form(p: Exchangeable, *, top: bool) -> bool:
    return p.is_zero or p.family == "uniform-nonzero" or (top and p.family in ("at-least", "below"))


def _exchangeable_table(p0: Exchangeable, p1: Exchangeable, eps0: float, delta0: float) -> ClassTable:
    k = p0.k
    if delta0 == 0:
        n_b = np.arange(k + 1, dtype=float)
        n_c = k - n_b
        n_a = np.zeros_like(n_b)
        logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="top") for p in (p0, p1)]
        return _assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
    lo, hi, dropped = delta_window(k, delta0, WINDOW_TAIL)
    levels = (k - hi, k - lo)  # m = n_B + n_C = k − (n_A + n_D)
    if p0.is_zero or p1.is_zero:
        n_b, n_c = _pairs(k, levels)
        n_a = np.zeros_like(n_b)
        logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="r0", levels=levels) for p in (p0, p1)]
        only = [_mass_with_a(p, delta0) for p in (p0, p1)]
        table = _assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
        # Each side's A-mass is "only" that side's if the other side is 0⃗ (no A under Q~).
        return ClassTable(table.log_m0, table.log_m1, only0=only[0] if p1.is_zero else 0.0,
                          only1=only[1] if p0.is_zero else 0.0, dropped=dropped)
    n_a, n_b, n_c = _triples(k, levels)
    logs = [_log_g(p, eps0, n_b, n_c, n_a, mode="all", levels=levels) for p in (p0, p1)]
    table = _assemble(k, eps0, delta0, n_a, n_b, n_c, logs)
    return ClassTable(table.log_m0, table.log_m1, dropped=dropped)


def _pairs(k: int, levels: tuple[int, int] | None = None) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """All (n_B, n_C) with n_B + n_C = m for m in ``levels`` (default 0..k), ordered by m, then n_B."""
    m_lo, m_hi = levels if levels is not None else (0, k)
    ms = np.arange(m_lo, m_hi + 1)
    m = np.repeat(ms, ms + 1)
    n_b = np.concatenate([np.arange(mm + 1) for mm in ms])
    return n_b.astype(float), (m - n_b).astype(float)


def _triples(k: int, levels: tuple[int, int] | None = None
             ) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """All (n_A, n_B, n_C) with sum ≤ k and m = n_B + n_C in ``levels`` (default 0..k), in the
    order the recursion emits them (level m, then n_B, then r = n_A)."""
    m_lo, m_hi = levels if levels is not None else (0, k)
    parts_a, parts_b = [], []
    for m in range(m_lo, m_hi + 1):
        nb = np.repeat(np.arange(m + 1), k - m + 1)
        na = np.tile(np.arange(k - m + 1), m + 1)
        parts_b.append(nb)
        parts_a.append(na)
    n_b = np.concatenate(parts_b).astype(float)
    n_a = np.concatenate(parts_a).astype(float)
    level = np.concatenate([np.full((mm + 1) * (k - mm + 1), mm)
                            for mm in range(m_lo, m_hi + 1)]).astype(float)
    return n_a, n_b, level - n_b


def _recursion(p: Exchangeable, eps0: float) -> Iterator[NDArray[np.float64]]:
    """Yield ln g(n_B, m − n_B, r) as arrays [n_B, r] (r ≤ k − m) for m = 0..k."""
    k = p.k
    g = p.log_v[np.newaxis, :]
    yield g
    for _ in range(k):
        new = np.empty((g.shape[0] + 1, g.shape[1] - 1))
        new[1:] = np.logaddexp(g[:, :-1], eps0 + g[:, 1:])  # add a B outcome
        new[0] = np.logaddexp(g[0, :-1], -eps0 + g[0, 1:])  # n_B = 0: add a C outcome
        g = new
        yield g


def _log_g(p: Exchangeable, eps0: float, n_b: NDArray[np.float64], n_c: NDArray[np.float64],
           n_a: NDArray[np.float64], *, mode: str, levels: tuple[int, int] | None = None
           ) -> NDArray[np.float64]:
    """ln g(n_B, n_C, n_A) for the given classes (see module docstring); the recursion keeps
    only the layers m = n_B + n_C in ``levels`` (default all), the classes listed."""
    k = p.k
    if p.is_zero:  # v_0 = 1 only: g = [r = 0]
        return np.where(n_a == 0, 0.0, -np.inf)
    if p.family == "uniform-nonzero":  # v_j = 1/(2^k − 1) for j ≥ 1
        a = n_b * float(softplus(eps0)) + n_c * float(softplus(-eps0))
        log_norm = log_pow2_minus_1(k)
        with np.errstate(divide="ignore"):
            tail = np.where(n_a == 0, a + log1mexp(-a), a)  # subtract h_0 = 1 when r = 0
        return tail - log_norm
    if mode == "top" and p.family in ("at-least", "below"):
        return _threshold_top(p, eps0)
    if mode == "top":
        *_, last = _recursion(p, eps0)
        return last[:, 0].copy()
    m_lo, m_hi = levels if levels is not None else (0, k)
    parts = []
    for m, g in enumerate(_recursion(p, eps0)):
        if m_lo <= m <= m_hi:  # a copy: a view keeps the layer alive
            parts.append(g[:, 0].copy() if mode == "r0" else g.ravel().copy())
    return np.concatenate(parts)


def _threshold_top(p: Exchangeable, eps0: float) -> NDArray[np.float64]:
    """ln g(n_B, k − n_B, 0) for v_j = v on j ≥ k' (at-least) or j < k' (below):
    v Σ_s a_s Σ_{t: s+t in range} c_t with a_s = C(n_B, s)e^{sε0}, c_t = C(n_C, t)e^{−tε0}."""
    at_least, below = _threshold_sums(p.k, p.threshold, eps0)
    if p.family == "at-least":
        return at_least + float(p.log_v[p.threshold])
    return below + float(p.log_v[0])


@lru_cache(maxsize=8)
def _threshold_sums(k: int, k2: int, eps0: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """ln Σ_s a_s Σ_{t ≥ k' − s} c_t and ln Σ_s a_s Σ_{t ≤ k' − 1 − s} c_t for n_B = 0..k: both
    families of a threshold question in one pass (they share a_s and c_t)."""
    up, down = np.empty(k + 1), np.empty(k + 1)
    lgam = gammaln(np.arange(k + 1, dtype=float) + 1.0)  # ln n!, looked up: the same floats as log_comb
    for n_b in range(k + 1):
        n_c = k - n_b
        s = np.arange(n_b + 1)
        t = np.arange(n_c + 1)
        la = (lgam[n_b] - lgam[s] - lgam[n_b - s]) + s * eps0
        lc = (lgam[n_c] - lgam[t] - lgam[n_c - t]) - t * eps0
        idx = np.clip(k2 - s, 0, n_c + 1)
        rows = np.empty((2, n_b + 1))
        rows[0] = la + np.concatenate([np.logaddexp.accumulate(lc[::-1])[::-1], [-np.inf]])[idx]
        rows[1] = la + np.concatenate([[-np.inf], np.logaddexp.accumulate(lc)])[idx]
        up[n_b], down[n_b] = logsumexp_rows(rows)  # −inf for a row without a finite term
    up.flags.writeable = False
    down.flags.writeable = False
    return up, down


def _mass_with_a(p: Exchangeable, delta0: float) -> float:
    """Mix_π(some A outcome) = Σ_j w_j (1 − (1 − δ0)^j)."""
    j = p.levels
    with np.errstate(divide="ignore"):
        terms = p.log_w[j] + np.log(-np.expm1(j * math.log1p(-delta0)))
    return float(np.exp(logsumexp(terms))) if j.size else 0.0


def _assemble(k: int, eps0: float, delta0: float, n_a: NDArray[np.float64], n_b: NDArray[np.float64],
              n_c: NDArray[np.float64], log_g: list[NDArray[np.float64]]) -> ClassTable:
    """Class masses: multinomial × per-outcome prefactor × g (module docstring)."""
    n_d = k - n_a - n_b - n_c
    log_mult = gammaln(k + 1.0) - gammaln(n_a + 1) - gammaln(n_b + 1) - gammaln(n_c + 1) - gammaln(n_d + 1)
    base = log_mult + (n_b + n_c) * (math.log1p(-delta0) - float(softplus(eps0))) + n_c * eps0
    if delta0 > 0:
        base = base + (n_a + n_d) * math.log(delta0)
    return ClassTable(log_m0=base + log_g[0], log_m1=base + log_g[1])


# ---------------------------------------------------------------- explicit priors

def _patterns(p0: Explicit, p1: Explicit) -> dict[tuple[bool, ...], int]:
    """Coordinates grouped by their column across the joint support: pattern → group size."""
    vectors = sorted({b for b, _ in p0.support} | {b for b, _ in p1.support})
    bits = np.array(vectors, dtype=bool)  # [support, coordinate]
    patterns: dict[tuple[bool, ...], int] = {}
    for i in range(p0.k):
        key = tuple(bits[:, i])
        patterns[key] = patterns.get(key, 0) + 1
    return patterns


def _group_count(n: int, delta0: float) -> float:
    """Number of (n_A, n_B, n_C, n_D) tuples ``_group_tuples`` lists for a group of n."""
    return n + 1.0 if delta0 == 0 else (n + 1.0) * (n + 2.0) * (n + 3.0) / 6.0


def _explicit_table(p0: Explicit, p1: Explicit, eps0: float, delta0: float) -> ClassTable:
    vectors = sorted({b for b, _ in p0.support} | {b for b, _ in p1.support})
    index = {b: i for i, b in enumerate(vectors)}
    log_pi = np.full((2, len(vectors)), -np.inf)
    for row, p in enumerate((p0, p1)):
        for b, w in p.support:
            log_pi[row, index[b]] = math.log(w)
    patterns = _patterns(p0, p1)
    log_p = _canonical_logs(eps0, delta0)
    ll = np.zeros((1, len(vectors)))
    log_mult = np.zeros(1)
    for key, n in patterns.items():
        counts = _group_tuples(n, delta0)  # [tuple, 4] counts of A, B, C, D
        with np.errstate(invalid="ignore"):
            lp = np.where(counts > 0, counts * log_p[0], 0.0).sum(axis=1)  # all from P~
            lq = np.where(counts > 0, counts * log_p[1], 0.0).sum(axis=1)  # all from Q~
        mult = gammaln(n + 1.0) - gammaln(counts + 1.0).sum(axis=1)
        group = np.where(np.array(key)[np.newaxis, :], lp[:, np.newaxis], lq[:, np.newaxis])
        ll = (ll[:, np.newaxis, :] + group[np.newaxis, :, :]).reshape(-1, len(vectors))
        log_mult = (log_mult[:, np.newaxis] + mult[np.newaxis, :]).ravel()
    log_m = [log_mult + logsumexp_rows(ll + log_pi[row]) for row in (0, 1)]
    return ClassTable(log_m0=log_m[0], log_m1=log_m[1])


def _canonical_logs(eps0: float, delta0: float) -> NDArray[np.float64]:
    """ln P~ and ln Q~ over (A, B, C, D) (KOV eq. 16); −inf for zero masses."""
    free = math.log1p(-delta0) - float(softplus(eps0))
    log_d = math.log(delta0) if delta0 > 0 else -math.inf
    return np.array([[log_d, free + eps0, free, -math.inf],
                     [-math.inf, free, free + eps0, log_d]])


def _group_tuples(n: int, delta0: float) -> NDArray[np.float64]:
    """All (n_A, n_B, n_C, n_D) summing to n (n_A = n_D = 0 when δ0 = 0)."""
    if delta0 == 0:
        nb = np.arange(n + 1)
        return np.stack([0 * nb, nb, n - nb, 0 * nb], axis=1).astype(float)
    rows = [(a, b, c, n - a - b - c) for a in range(n + 1) for b in range(n + 1 - a)
            for c in range(n + 1 - a - b)]
    return np.array(rows, dtype=float)


# ---------------------------------------------------------------- atoms and regions

def _atoms(log_p: NDArray[np.float64], log_q: NDArray[np.float64], only_p: float) -> LossAtoms:
    """Loss atoms of P against Q; P-mass where Q = 0 goes to the infinite-loss atom."""
    has_p = np.isfinite(log_p)
    finite = has_p & np.isfinite(log_q)
    p_only = has_p & ~finite
    p_inf = only_p + (float(np.exp(logsumexp(log_p[p_only]))) if p_only.any() else 0.0)
    loss = log_p[finite] - log_q[finite]
    return LossAtoms.from_masses(loss, log_p[finite], p_inf=min(p_inf, 1.0))


def _tradeoff(log_p: NDArray[np.float64], log_q: NDArray[np.float64], *,
              only_q: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Neyman-Pearson vertices (P_FA, P_MD) of H0: P vs H1: Q, rejecting H0 on the
    outcomes of lowest P/Q first: unlisted Q-only mass ``only_q`` first, then the classes
    by loss; unlisted P-only mass is never rejected (the curve ends at P_FA < 1, and the
    hull closes it at (1, 0))."""
    with np.errstate(invalid="ignore"):
        loss = np.where(np.isfinite(log_p), log_p - np.where(np.isfinite(log_q), log_q, -np.inf), -np.inf)
    loss = np.where(np.isfinite(log_q) | np.isfinite(log_p), loss, np.nan)
    keep = ~np.isnan(loss)
    order = np.argsort(loss[keep], kind="stable")
    p = np.exp(log_p[keep][order])
    q = np.exp(log_q[keep][order])
    p_fa = np.concatenate([[0.0, 0.0], np.cumsum(p)])
    p_md = np.concatenate([[1.0, 1.0 - only_q], 1.0 - only_q - np.cumsum(q)])
    return np.clip(p_fa, 0.0, 1.0), np.clip(p_md, 0.0, 1.0)


def _lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> Boundary:
    """Lower convex hull of points in [0,1]², extended to (1, 0); a Boundary from x = 0."""
    pts = sorted(set(zip(np.round(x, 15).tolist(), np.round(y, 15).tolist(), strict=True)) | {(1.0, 0.0)})
    px = np.array([p[0] for p in pts])
    py = np.array([p[1] for p in pts])
    keep = lower_hull(px, py)
    return Boundary(p_fa=px[keep], p_md=np.minimum.accumulate(py[keep]))
