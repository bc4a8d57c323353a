"""Exact worst-case hypothesis-DP curve for two priors (beyond HBW; see docs/MATH.md §5.5).

Every (ε0, δ0)-DP mechanism is a post-processing of the canonical pair
(P~, Q~) on outcomes {A, B, C, D} (KOV eq. 16), so the worst case over all
mechanisms for hypotheses (p0, p1) is the privacy curve of
``Mix_π = Σ_b π(b) ⊗_i (b_i ? P~ : Q~)`` for π = p1 against π = p0, both
directions (HBW Def. 3 asks for both). The classes of outcomes and their masses come from
``dpviz.gce.classes`` (exchangeable priors) and ``dpviz.gce.explicit_classes`` (explicit ones); this
module turns them into loss atoms, curves and the region, estimates the cost and caches pairs.

Cost. ``cost`` counts classes, recursion cells and threshold steps before anything is
built, and ``exact_pair`` refuses (:class:`TooLargeError`, with the reason in words) when
that estimate is above the ``Budget`` (``dpviz.budget``); the callers then answer with the
best bound that applies.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np
from numpy.typing import NDArray

from dpviz import budget as budgets
from dpviz.bounded_cache import BoundedStore
from dpviz.budget import Budget, Cost, OverBudget, cost_of
from dpviz.composition.atoms import LossAtoms
from dpviz.gce.class_loops import split_finite
from dpviz.gce.classes import ClassTable, class_count, exchangeable_table
from dpviz.gce.explicit_classes import explicit_table, group_count, patterns
from dpviz.gce.hypotheses import Exchangeable, Hypothesis, to_explicit
from dpviz.numerics import logsumexp, lower_hull
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
        return replace(self.forward, p_inf=min(self.table.only1, 1.0))

    @cached_property
    def reverse_lower(self) -> LossAtoms:
        return replace(self.reverse, p_inf=min(self.table.only0, 1.0))

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
        the trade-off curve of (Mix1, Mix0) and its mirror image (the reverse pair). Computed once
        per pair (a change of the target δ draws the same region)."""
        return self._region

    @cached_property
    def _region(self) -> Boundary:
        x, y = _tradeoff(self.table.log_m1, self.table.log_m0, only_q=self.table.only0)
        x, y = np.round(x, 15), np.round(y, 15)  # rounded once: the mirror image holds the same values
        hull = _lower_hull(np.concatenate([x, y, [1.0]]), np.concatenate([y, x, [0.0]]))
        hull.p_fa.flags.writeable = hull.p_md.flags.writeable = False  # shared by every caller
        return hull


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
    key = _cache_key(p0, p1, eps0, delta0)
    kept = _CACHE.get(key)
    if kept is not None:
        return kept
    if isinstance(p0, Exchangeable) and isinstance(p1, Exchangeable):
        pair = ExactPair(exchangeable_table(p0, p1, eps0, delta0))
    else:
        pair = ExactPair(explicit_table(to_explicit(p0), to_explicit(p1), eps0, delta0))
    _CACHE.put(key, pair)
    return pair


CACHE_ENTRIES = 64
"""Exact pairs kept (least recently used dropped): the priors page asks for the same pair for its
table, its ε-against-k curve (about 20 k) and its region (issue 10 item 8), and again for the table
and the curve when only the target δ changes."""

CACHE_BYTES = 64e6
"""The pairs kept hold at most about this much (``_held``): a pair of two composite priors at
k = 200 and δ0 = 1e-6 lists 287,330 classes (about 9 MB with its loss atoms)."""


def _held(pair: ExactPair) -> float:
    """Bytes a pair holds, estimated from above: its two class columns, and as much again for the
    loss atoms of each direction (sorted copies, at most one atom per class)."""
    return 2.0 * (pair.table.log_m0.nbytes + pair.table.log_m1.nbytes)


_CACHE: BoundedStore[tuple, ExactPair] = BoundedStore(entries=CACHE_ENTRIES, max_bytes=CACHE_BYTES,
                                                      held=_held)


def _cache_key(p0: Hypothesis, p1: Hypothesis, eps0: float, delta0: float) -> tuple:
    """What determines the pair: each prior (an exchangeable one by k, family, k' and a digest of
    its level weights; an explicit one by its support), ε0 and δ0."""
    return (_prior_key(p0), _prior_key(p1), eps0, delta0)


def _prior_key(p: Hypothesis) -> tuple:
    if isinstance(p, Exchangeable):
        digest = hashlib.blake2b(np.ascontiguousarray(p.log_w).tobytes(), digest_size=32).digest()
        return ("exchangeable", p.k, p.family, p.threshold, digest)
    return ("explicit", p.k, p.support)


def cost(p0: Hypothesis, p1: Hypothesis, *, delta0: float, region: bool = False) -> Cost:
    """Estimated time and memory of ``exact_pair`` (and of its region), from the counts of
    classes, recursion cells and threshold steps (``dpviz.budget`` units)."""
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
    classes = float(np.prod([group_count(n, delta0) for n in patterns(e0, e1).values()]))
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
    classes = class_count(k, delta0, anchored="zero" in families)
    generic = sum(1 for f in families if f not in closed)
    threshold = sum(1 for f in families if top and f in ("at-least", "below"))
    cells = generic * (k + 1.0) * (k + 2.0) * (k + 3.0) / 6.0
    terms = (k + 1.0) if threshold else 0.0  # both families from one O(k) walk (gce/threshold.py)
    widest = (k + 2.0) ** 2 / 4.0 if generic else 0.0  # cells of the widest recursion layer
    work = (cost_of("gce_class", classes) + cost_of("gce_cell", cells, memory_units=2 * widest)
            + cost_of("gce_threshold_term", terms, memory_units=0))
    if region:
        work = work + cost_of("gce_hull_point", 2.0 * classes, memory_units=0)
    what = f"{classes:,.0f} count classes" + (f", {cells:,.0f} recursion cells" if cells else "") \
        + (f", {terms:,.0f} threshold steps" if terms else "")
    return Cost(work.seconds, work.bytes, what), classes + cells + terms


# ---------------------------------------------------------------- atoms and regions

def _atoms(log_p: NDArray[np.float64], log_q: NDArray[np.float64], only_p: float) -> LossAtoms:
    """Loss atoms of P against Q; P-mass where Q = 0 goes to the infinite-loss atom."""
    loss, log_pf, log_only = split_finite(log_p, log_q)  # one pass over the classes (``class_loops``)
    p_inf = only_p + (float(np.exp(logsumexp(log_only))) if log_only.size else 0.0)
    return LossAtoms.from_masses(loss, log_pf, p_inf=min(p_inf, 1.0))


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
    order = _stable_order(loss[keep])
    p = np.exp(log_p[keep][order])
    q = np.exp(log_q[keep][order])
    p_fa = np.concatenate([[0.0, 0.0], np.cumsum(p)])
    p_md = np.concatenate([[1.0, 1.0 - only_q], 1.0 - only_q - np.cumsum(q)])
    return np.clip(p_fa, 0.0, 1.0), np.clip(p_md, 0.0, 1.0)


def _stable_order(loss: NDArray[np.float64]) -> NDArray[np.intp]:
    """``np.argsort(loss, kind="stable")`` of losses without NaN: the −∞ first and the +∞ last, each
    in their order, and only the finite ones sorted (a stable sort keeps equal keys in their order),
    the same permutation; most classes of a threshold pair are +∞ (U{|b| < k'} cannot have them)."""
    low, high = np.flatnonzero(loss == -np.inf), np.flatnonzero(loss == np.inf)
    finite = np.flatnonzero(np.isfinite(loss))
    return np.concatenate([low, finite[np.argsort(loss[finite], kind="stable")], high])


def _lower_hull(x: NDArray[np.float64], y: NDArray[np.float64]) -> Boundary:
    """Lower convex hull of points in [0,1]² (rounded to 15 decimals by the caller, (1, 0) among
    them); a Boundary from x = 0. The points are taken once each, in lexicographic order
    (``_distinct``), then walked by Andrew's monotone chain (``numerics.lower_hull``)."""
    px, py = _distinct(x, y)
    keep = lower_hull(px, py)
    return Boundary(p_fa=px[keep], p_md=np.minimum.accumulate(py[keep]))


def _distinct(x: NDArray[np.float64], y: NDArray[np.float64]
              ) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The distinct points (x_i, y_i), sorted by x then y: ``sorted(set(zip(x, y)))`` without a
    Python tuple per point. A trade-off curve has hundreds of thousands of classes whose rounded
    points repeat in runs (its coordinates are monotone), so runs of equal neighbours are dropped
    first, then the rest sorted (``np.lexsort``) and its repeats dropped."""
    x, y = x + 0.0, y + 0.0  # −0.0 as 0.0, as a set of floats takes them
    run = np.ones(x.size, dtype=bool)
    run[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    x, y = x[run], y[run]
    order = np.lexsort((y, x))
    x, y = x[order], y[order]
    new = np.ones(x.size, dtype=bool)
    new[1:] = (x[1:] != x[:-1]) | (y[1:] != y[:-1])
    return x[new], y[new]
