"""PLD accounting with certified error bars: ε(δ) and δ(ε) as intervals [lower, upper].

A composition is a list of (loss law, count) parts. For each direction of the neighbouring
relation (the laws as given, and all of them reversed) we discretise every law twice
(``dpviz.pld.discretize``), compose by FFT with repeated squaring (``GridPLD``) and read off
δ or ε exactly from the composed grid (``LossAtoms``). The mechanism's δ(ε) is the larger of
the two directions (Steinke Prop. 7 applied to both (P, Q) and (Q, P)), so

    lower = max_dir lower_dir ≤ truth ≤ max_dir upper_dir = upper.

The cost is checked before any convolution: ``plan`` returns the a-priori grid size, and
requests above ``MAX_BINS`` raise ``ParameterError`` with that number; ``cost`` turns the
same counts (cells discretised, bins × log2 bins of every FFT) into an estimated time and
memory (``dpviz.budget``). ``compose`` refuses a composition above its ``Budget``
(:class:`~dpviz.budget.OverBudget`); ``compose_within_limits`` first coarsens the grid (a
wider interval, still certified) until it fits.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import TypeVar

import numpy as np
from numpy.typing import NDArray
from scipy.special import logsumexp

from dpviz import budget as budgets
from dpviz.budget import Budget, Cost, OverBudget, cost_of
from dpviz.guarantee import DeltaCurve, Guarantee, Kind, Status
from dpviz.pld import discretize
from dpviz.pld.grid import DEFAULT_TAIL, MAX_BINS, GridPLD, composed_bins, loss_span
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError, check_count, check_delta, check_epsilon, check_positive

T = TypeVar("T")

Parts = Sequence[tuple[LossLaw, int]]

DEFAULT_H = 2e-4
"""Grid width used when none is given. Twice dp-accounting's default value_discretization_interval:
our errors are second order in h, so for DP-SGD (q = 0.01, σ = 1.1, 10⁴ steps) this gives a
certified interval of relative width 2e-4 in less time than dp-accounting's default run
(``benchmarks/results/mechanisms.md``)."""


@dataclass(frozen=True)
class Composed:
    """Composed pessimistic and optimistic grids, one pair per direction."""

    upper: tuple[GridPLD, ...]
    lower: tuple[GridPLD, ...]
    h: float
    seconds: float
    single: GridPLD | None = None
    """One step of the first part, pessimistic (``compose_many`` keeps it for the histogram)."""
    tail: float = DEFAULT_TAIL
    note: str = ""
    singles: tuple[GridPLD, ...] = ()
    """The single-step grids composed (both kinds, every direction): their span caps the tilt."""

    def describe(self) -> str:
        """The grid in a few words: width, bins, truncation tail (the time is ``seconds``)."""
        bins = max(g.mass.size for g in self.upper + self.lower)
        note = f"; {self.note}" if self.note else ""
        return f"h={self.h:.3g}, {bins:,} bins, tail={self.tail:.3g}{note}"  # no time: detail is data

    def delta(self, epsilon: float) -> tuple[float, float]:
        return (max(g.delta(epsilon) for g in self.lower), max(g.delta(epsilon) for g in self.upper))

    def delta_upper(self, epsilon: float) -> float:
        """The upper end of ``delta`` alone (half the work)."""
        return max(g.delta(epsilon) for g in self.upper)

    def epsilon(self, delta: float) -> tuple[float | None, float | None]:
        lows = [g.epsilon(delta) for g in self.lower]
        ups = [g.epsilon(delta) for g in self.upper]
        lo = None if any(v is None for v in lows) else max(lows)  # type: ignore[type-var]
        up = None if any(v is None for v in ups) else max(ups)  # type: ignore[type-var]
        return lo, up


def directions(parts: Parts) -> list[list[tuple[LossLaw, int]]]:
    """The parts as given and all reversed (one list when every law is symmetric)."""
    if all(law.symmetric for law, _ in parts):
        return [list(parts)]
    return [list(parts), [(_reversed(law), k) for law, k in parts]]


@lru_cache(maxsize=16)
def _reversed(law: LossLaw) -> LossLaw:
    """``law.reversed()``, the same object for the same law (so plans can reuse discretisations)."""
    return law.reversed()


@lru_cache(maxsize=32)
def _coarse_grid(law: LossLaw, h: float, tail: float) -> GridPLD:
    """A pessimistic discretisation for planning, reused while ``choose_h`` tries widths."""
    return discretize.pessimistic(law, h=h, tail=tail)


@lru_cache(maxsize=16)
def _discretized(law: LossLaw, h: float, tail: float, pessimistic: bool, offset: float = 0.0) -> GridPLD:
    """One law's single-step grid, kept while ``composition`` reruns a width (tilted after the pilot)."""
    if pessimistic:
        return discretize.pessimistic(law, h=h, tail=tail, offset=offset)
    return discretize.optimistic(law, h=h, tail=tail, offset=offset)


def _law_offset(law: LossLaw, h: float) -> float:
    """The grid shift putting the law's heaviest atom (by P-mass) on a grid point: a heavy atom off
    the grid is rounded down by the lower grid, an error of order h per step (the post-processing
    cannot raise a lone atom's loss), where on the grid it is exact."""
    if not law.loss.size or not np.any(law.p > 0):
        return 0.0
    a = float(law.loss[int(np.argmax(law.p))])
    return a - math.floor(a / h) * h


PLAN_CELLS = 1 << 16
"""``plan`` discretises a law on at most this many cells: the spread it needs hardly depends on
the width, while a fine discretisation is itself the expensive step (seconds for a subsampled
law spanning 10^6 cells)."""


def plan(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> int:
    """Largest grid (bins) the composition will need; raises ``ParameterError`` above MAX_BINS.

    Discretises each law once, on at most ``PLAN_CELLS`` cells, and sizes the composed grid
    from the single-step spreads and ranges at width h, before any convolution is run.
    """
    return _check_bins(max(_planned_bins(d, h=h, tail=tail) for d in directions(parts)), h)


COST_CELLS = 1 << 12
"""``cost`` sizes the composed grid from discretisations this coarse (a rough count is enough)."""


def _planned_bins(parts: Parts, *, h: float, tail: float, cells: int = PLAN_CELLS) -> int:
    """``composed_bins`` for the grids at width h, from discretisations at most ``cells`` wide."""
    for law, _ in parts:
        discretize.grid_range(law, h=h, tail=tail)  # the law fits a grid of width h at all
    grids = []
    for law, k in parts:
        lo, hi = law.support(tail)
        coarse = max(h, (hi - lo) / cells)
        grids.append((_coarse_grid(law, coarse, tail), k))
    if all(g.h == h for g, _ in grids):
        return composed_bins(grids)
    # rescale to width h: ranges in bins grow by g.h / h, spreads are the coarse grids' (a little
    # wider than at h: the connect-the-dots split spreads mass over a wider cell)
    z, var, spread, full, first = 12.0, 0.0, 0.0, 0, 0
    for g, k in grids:
        _mu, sd = g.mean_sd()
        size = math.ceil(g.mass.size * g.h / h)
        var += k * sd * sd
        spread += size * h
        full += k * size
        first = max(first, 2 * size - 1 if k > 1 else size)
    total = 2 * z * math.sqrt(var) + 2 * spread
    return int(min(full, max(total / h + 1, first)))


def _plan_grids(grids: list[list[tuple[GridPLD, int]]], h: float) -> int:
    return _check_bins(max(composed_bins(single) for single in grids), h)


def _check_bins(worst: int, h: float) -> int:
    if worst > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough that the composed grid stays below {MAX_BINS:,} "
                                     f"bins (needs ≈{worst:,}; increase h or reduce k)")
    return worst


def cost(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> Cost:
    """Estimated time and memory of ``compose`` at width h (``dpviz.budget`` units): every
    law discretised twice per direction, and per direction and bound ⌊log2 k⌋ squarings +
    popcount(k) − 1 products per part (+ one per extra part), each an FFT of at most the
    planned composed grid."""
    ffts = sum(_squarings(k) + _products(k) for _, k in parts) + len(parts) - 1
    return _cost(parts, ffts=ffts, h=h, tail=tail)


def cell_unit(law: LossLaw) -> str:
    """The ``dpviz.budget`` unit of one discretised cell of ``law``."""
    if not law.symmetric:
        return "pld_cell_asymmetric"
    return "pld_cell" if law.continuous is not None else "pld_atom_cell"


def _squarings(k: int) -> int:
    return max(k.bit_length() - 1, 0)


def _products(k: int) -> int:
    return bin(k).count("1") - 1


def _cost(parts: Parts, *, ffts: int, h: float, tail: float) -> Cost:
    dirs = directions(parts)
    bins = max(_planned_bins(d, h=h, tail=tail, cells=COST_CELLS) for d in dirs)
    n = 2 * len(dirs)  # pessimistic and optimistic, per direction
    work = cost_of("fft_bin_log", n * ffts * bins * math.log2(max(bins, 2)), memory_units=0) \
        + Cost(0.0, budgets.UNIT_BYTES["fft_bin"] * bins)
    for law, _ in parts:
        lo, hi = law.support(tail)
        work = work + cost_of(cell_unit(law), n * ((hi - lo) / h + 3), memory_units=(hi - lo) / h + 3)
    return Cost(work.seconds, work.bytes, f"PLD grid of about {bins:,} bins, h = {h:.3g}")


def compose(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL,
            budget: Budget | None = None, total: bool = False, tilt: float = 0.0,
            offsets: bool = False) -> Composed:
    """Upper and lower composed grids for every direction (see module docstring); raises
    :class:`~dpviz.budget.OverBudget` when the estimated ``cost`` is above ``budget``. With ``total``,
    ``tail`` bounds the mass all truncations and discretisations move together (a third per part
    to the single steps, to the squarings and to joining the parts), else each truncation's."""
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list")
    for _, k in parts:
        check_count(k, field="k")
    budgets.check(cost(parts, h=h, tail=tail), budget)
    t0 = time.perf_counter()
    dirs = directions(parts)
    share = tail / (3 * len(parts)) if total else tail
    # a single step may leave share/k beyond its grid: its k steps then leave at most ``share``
    def single(law: LossLaw, k: int, up: bool) -> GridPLD:
        off = _law_offset(law, h) if offsets else 0.0
        return _discretized(law, h, share / k if total else tail, up, off)

    pess = [[(single(law, k, True), k) for law, k in d] for d in dirs]
    _plan_grids(pess, h)
    opt = [[(single(law, k, False), k) for law, k in d] for d in dirs]
    ups: list[GridPLD] = []
    lows: list[GridPLD] = []
    for grids, out in ((pess, ups), (opt, lows)):
        for dgrids in grids:
            acc: GridPLD | None = None
            for g1, k in dgrids:
                g = g1.self_compose(k, tail=share, total=total, tilt=tilt)
                acc = g if acc is None else acc.compose(g, tail=share, tilt=tilt)
            assert acc is not None  # parts is not empty
            out.append(acc)
    singles = tuple(g for grids in (pess, opt) for dgrids in grids for g, _ in dgrids)
    return Composed(upper=tuple(ups), lower=tuple(lows), h=h, seconds=time.perf_counter() - t0, tail=tail,
                    singles=singles)


COARSENINGS = 4
"""How many times ``compose_within_limits`` may double h before giving up on ``MAX_BINS``."""

BUDGET_COARSENINGS = 4
"""How many more times it may double h to fit the time and memory budget (h × 16 at most): coarser
grids give intervals too wide to be worth showing; the route is then not computed."""


def compose_within_limits(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL,
                          budget: Budget | None = None) -> Composed:
    """``compose``, doubling h (coarser grid, wider but still certified interval) when a
    composition step would exceed ``MAX_BINS`` or the estimate is above ``budget``; the h
    actually used is ``Composed.h``. Raises ``OverBudget`` when even the coarsest grid is."""
    return _coarsening(h, lambda hh: compose(parts, h=hh, tail=tail, budget=budget))


def _coarsening(h: float, run: Callable[[float], T]) -> T:
    """``run(h)``, doubling h after each ``MAX_BINS`` refusal (at most ``COARSENINGS`` times) or
    estimate above the budget (``BUDGET_COARSENINGS`` more); the last refusal is raised."""
    over_budget, attempt = False, 0
    while True:
        try:
            return run(h * 2**attempt)
        except OverBudget:
            over_budget = True
            if attempt >= COARSENINGS + BUDGET_COARSENINGS:
                raise
        except ParameterError as exc:  # MAX_BINS
            if exc.field != "h" or attempt >= COARSENINGS + (BUDGET_COARSENINGS if over_budget else 0):
                raise
        attempt += 1


def compose_many(law: LossLaw, ks: Sequence[int], *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL,
                 budget: Budget | None = None) -> dict[int, Composed]:
    """``compose([(law, k)], h=…)`` for every k in ``ks`` on one grid, sharing the work: the law
    is discretised once per direction and bound, and the squarings are shared. Each result is
    the one ``compose`` gives (the same products in the same order as ``GridPLD.self_compose``).

    Like ``compose_within_limits``, h is doubled while the estimate is above ``budget`` (or a
    grid above ``MAX_BINS``); every result then uses the same, coarser h.
    """
    ks = sorted({check_count(k, field="k") for k in ks})
    top = ks[-1]
    ffts = _squarings(top) + sum(_products(k) for k in ks)

    def run(hh: float) -> dict[int, Composed]:
        budgets.check(_cost([(law, top)], ffts=ffts, h=hh, tail=tail), budget)
        return _compose_many(law, ks, h=hh, tail=tail)

    return _coarsening(h, run)


def _compose_many(law: LossLaw, ks: list[int], *, h: float, tail: float) -> dict[int, Composed]:
    t0 = time.perf_counter()
    dirs = [d[0][0] for d in directions([(law, 1)])]
    pess = [discretize.pessimistic(dlaw, h=h, tail=tail) for dlaw in dirs]
    _plan_grids([[(g, ks[-1])] for g in pess], h)  # MAX_BINS, before any convolution
    out: dict[str, dict[int, list[GridPLD]]] = {"upper": {k: [] for k in ks}, "lower": {k: [] for k in ks}}
    for key, bases in (("upper", pess), ("lower", [discretize.optimistic(d, h=h, tail=tail) for d in dirs])):
        for base in bases:
            powers = [base]  # powers[i]: the 2^i-fold grid, squared exactly as self_compose does
            for k in ks:
                result: GridPLD | None = None
                i, rest = 0, k
                while True:
                    if rest & 1:
                        result = powers[i] if result is None else result.compose(powers[i], tail=tail)
                    rest >>= 1
                    if not rest:
                        break
                    i += 1
                    if i == len(powers):
                        powers.append(powers[-1].compose(powers[-1], tail=tail))
                out[key][k].append(result)  # type: ignore[arg-type]
    seconds = time.perf_counter() - t0
    return {k: Composed(upper=tuple(out["upper"][k]), lower=tuple(out["lower"][k]), h=h, seconds=seconds,
                        single=pess[0]) for k in ks}


# ====================================================================== the Guarantee API (issue 8)

DEFAULT_ACCURACY = 1e-3
"""Relative width of the certified interval aimed for when no grid width is given (and 1e-4
absolute where ε < 0.1)."""

SOURCE = "PLD grid (connect-the-dots upper, Doroshenko et al.; post-processed lower)"


def max_loss(parts: Parts) -> float:
    """ε at δ = 0: the largest composed finite loss Σ k_i·max L_i, maximised over both directions;
    ``math.inf`` when some law has mass at +∞ (or −∞, for the reverse direction) or an unbounded
    continuous part (then no finite ε has δ = 0)."""
    worst = -math.inf
    for d in directions(parts):
        total = 0.0
        for law, k in d:
            total += k * law.max_loss()
        worst = max(worst, total)
    return max(worst, 0.0)


def _checked_parts(parts: Parts) -> list[tuple[LossLaw, int]]:
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list of (loss law, count) parts")
    return [(law, check_count(k, field="k")) for law, k in parts]


def epsilon_bounds(parts: Parts, *, delta: float, accuracy: float = DEFAULT_ACCURACY,
                   h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """ε at δ of the composition of ``parts``, certified: ``lower ≤ ε(δ) ≤ upper``.

    δ = 0 is answered exactly from the laws (Σ k·max loss, or IMPOSSIBLE when a loss is
    unbounded). Otherwise the grids of ``composition`` are read off (``Composed.epsilon``).
    """
    t0 = time.perf_counter()
    delta = check_delta(delta)
    parts = _checked_parts(parts)
    if delta == 0.0:
        top = max_loss(parts)
        if math.isinf(top):
            return Guarantee.impossible(source=SOURCE, delta=0.0, reason=(
                "ε at δ = 0 is infinite: the privacy loss is unbounded (a continuous tail or mass at +∞)"))
        return Guarantee(epsilon=top, delta=0.0, kind=Kind.EXACT, source="largest composed loss Σ k·max L",
                         seconds=time.perf_counter() - t0)
    try:
        c = composition(parts, delta=delta, accuracy=accuracy, h=h, budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        return Guarantee.not_computed(source=SOURCE, delta=delta, reason=str(exc))
    lo, up = c.epsilon(delta)
    detail = c.describe()
    seconds = time.perf_counter() - t0
    if lo is None:  # even the optimistic grid has δ(ε) > δ for every ε: ε = ∞
        return Guarantee.impossible(source=SOURCE, delta=delta, reason=(
            f"δ = {delta:g} is below the probability of infinite privacy loss: no finite ε"))
    if up is None:
        return Guarantee(epsilon=None, delta=delta, kind=Kind.INFEASIBLE, source=SOURCE,
                         status=Status.NOT_COMPUTED, lower=lo, detail=detail, seconds=seconds,
                         reason="δ is below the tail mass the grid sends to +∞ (a finer tail is needed)")
    up = max(min(up, max_loss(parts)), lo)  # ε(0) = Σ k·max L is an upper bound at every δ
    kind = Kind.EXACT if up == lo else Kind.UPPER
    return Guarantee(epsilon=up, delta=delta, kind=kind, source=SOURCE, lower=lo, upper=up,
                     detail=detail, seconds=seconds)


def delta_bounds(parts: Parts, *, epsilon: float, accuracy: float = DEFAULT_ACCURACY,
                 h: float | None = None, budget: Budget | None = None) -> Guarantee:
    """δ at ε of the composition of ``parts``, certified: ``lower ≤ δ(ε) ≤ upper``."""
    t0 = time.perf_counter()
    epsilon = check_epsilon(epsilon, maximum=EPSILON_COMPOSED_MAX)
    parts = _checked_parts(parts)
    top = max_loss(parts)
    if epsilon >= top:
        return Guarantee(epsilon=epsilon, delta=0.0, kind=Kind.EXACT, solved="delta",
                         source="largest composed loss Σ k·max L", seconds=time.perf_counter() - t0)
    try:
        c = composition(parts, epsilon=epsilon, accuracy=accuracy, h=h, budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        return Guarantee.not_computed(source=SOURCE, epsilon=epsilon, solved="delta", reason=str(exc))
    lo, up = c.delta(epsilon)
    up = max(up, lo)
    kind = Kind.EXACT if up == lo else Kind.UPPER
    return Guarantee(epsilon=epsilon, delta=up, kind=kind, source=SOURCE, lower=lo, upper=up,
                     solved="delta", detail=c.describe(), seconds=time.perf_counter() - t0)


def delta_curve(parts: Parts, *, epsilons: NDArray[np.float64], accuracy: float = DEFAULT_ACCURACY,
                h: float | None = None, budget: Budget | None = None) -> DeltaCurve:
    """δ(ε) over ``epsilons`` from one composition (NaN everywhere when it is not computed)."""
    eps = np.asarray(epsilons, dtype=float)
    parts = _checked_parts(parts)
    try:
        c = composition(parts, epsilon=float(eps.min()) if eps.size else 0.0, accuracy=accuracy, h=h,
                        budget=budget)
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, ParameterError) and not isinstance(exc, OverBudget) and exc.field != "h":
            raise
        nan = np.full(eps.shape, math.nan)
        return DeltaCurve(epsilon=eps, lower=nan, upper=nan.copy(), kind=Kind.UPPER, source=SOURCE,
                          reason=str(exc))
    lo = np.array([c.delta(float(e))[0] for e in eps.ravel()]).reshape(eps.shape)
    up = np.array([c.delta_upper(float(e)) for e in eps.ravel()]).reshape(eps.shape)
    return DeltaCurve(epsilon=eps, lower=lo, upper=np.maximum(up, lo), kind=Kind.UPPER, source=SOURCE)


EPSILON_COMPOSED_MAX = 1e6
"""Largest ε accepted by ``delta_bounds`` (a composed ε; per-step ε are checked elsewhere)."""


def composition(parts: Parts, *, delta: float | None = None, epsilon: float | None = None,
                accuracy: float = DEFAULT_ACCURACY, h: float | None = None,
                budget: Budget | None = None) -> Composed:
    """The composed upper and lower grids for a target δ (or ε), at width ``h`` or at one chosen
    from ``accuracy``; raises ``OverBudget`` / ``ParameterError`` (field "h") when they do not fit.

    Truncation: all truncations together may move ``target_tail`` mass (a small part of δ·accuracy),
    so the grids only cover the composed law where it matters. Width: atoms-only laws on a common
    lattice use that lattice (exact); otherwise a pilot at a width from the single steps' spread,
    refined by the second-order error law (width ∝ h²) until the interval is within ``accuracy``
    (relative; absolute accuracy/10 below ε = 0.1) or the next refinement is over ``budget`` (the
    last, wider but certified, grids are returned). FFT round-off: where the pilot's a-priori
    round-off is not negligible against δ, the convolutions are redone on masses tilted by the
    Chernoff θ of the target (``GridPLD.compose``), so that the round-off is relative to the tail
    δ is made of instead of to the peak of the law.
    """
    parts = _checked_parts(parts)
    accuracy = check_positive(accuracy, field="accuracy", maximum=1.0)
    tail = target_tail(parts, delta=delta, epsilon=epsilon, accuracy=accuracy)

    tilt = 0.0

    offsets = False

    def run(hh: float) -> Composed:
        return compose(parts, h=hh, tail=tail, budget=budget, total=True, tilt=tilt, offsets=offsets)

    def tilted(c: Composed) -> Composed:
        """``c`` recomputed with the round-off tilted towards the target, if that is narrower."""
        nonlocal tilt
        if _round_off_minor(c, delta=delta, epsilon=epsilon, accuracy=accuracy):
            return c
        tilt = _tilt(parts, c, delta=delta, epsilon=epsilon, accuracy=accuracy)
        if tilt == 0.0:
            return c
        t = run(c.h)
        # a tilted grid whose round-off bound is not finite says nothing (review R1): its [0, 0]
        # would look narrowest, so it is rejected before any width is compared
        if all(g.informative for g in t.upper + t.lower) and _width_ratio(
                t, delta=delta, epsilon=epsilon, accuracy=accuracy) <= _width_ratio(
                c, delta=delta, epsilon=epsilon, accuracy=accuracy):
            return t
        tilt = 0.0
        return c

    def late_tilt(c: Composed) -> Composed:
        """A finer grid carries more round-off than the pilot that decided against tilting: where the
        refinement stopped short of the accuracy, the last grid is recomputed tilted if that is
        narrower (q = 0.004, σ = 1, 10^5 steps, δ = 1e-6: 1.04e-3 wide untilted)."""
        if tilt != 0.0 or _width_ratio(c, delta=delta, epsilon=epsilon, accuracy=accuracy) <= 1.0:
            return c
        try:
            return tilted(c)
        except (OverBudget, ParameterError) as exc:
            if isinstance(exc, OverBudget) or exc.field == "h":
                return c
            raise

    if h is not None:
        return tilted(run(check_positive(h, field="h", maximum=10.0)))
    lattice = _lattice(parts)
    if lattice is not None and all(law.continuous is None for law, _ in parts):
        return tilted(_coarsening(lattice, run))
    if lattice is None:
        lattice = _anchor(parts)
        offsets = True
    hh = _pilot_h(parts, tail)
    if lattice is not None:
        hh = lattice / math.ceil(lattice / hh)
    h1 = hh
    try:
        c = tilted(run(hh))
    except (OverBudget, ParameterError) as exc:
        if isinstance(exc, OverBudget) or exc.field == "h":
            return tilted(_coarsening(hh * 2, run))
        raise
    best, best_ratio = c, _width_ratio(c, delta=delta, epsilon=epsilon, accuracy=accuracy)
    for i in range(REFINEMENTS + CHEAP_REFINEMENTS):
        accurate = best_ratio <= 1.0
        step = 1.0 / 4.0 if accurate else min(1.0, max(1.0 / 4.0, 0.8 / math.sqrt(best_ratio)))
        last, hh = hh, _on_lattice(hh * step, lattice)
        # cheap: the next grid's estimated cost (``cost``: counted work, not a measured time, so the
        # same question always gets the same grid) is below CHEAP_SECONDS; then refine even past the
        # accuracy target and the h1/8 floor, else only towards the target
        if cost(parts, h=hh, tail=tail).seconds > CHEAP_SECONDS:
            if accurate or i >= REFINEMENTS:
                break
            hh = _on_lattice(max(hh, h1 / 8.0), lattice)
        if hh >= 0.99 * last:  # no finer width allowed (h1/8 reached)
            break
        try:
            c = run(hh)
        except (OverBudget, ParameterError) as exc:
            if isinstance(exc, OverBudget) or exc.field == "h":
                return best if accurate else replace(best, note="accuracy not reached within the budget")
            raise
        ratio = _width_ratio(c, delta=delta, epsilon=epsilon, accuracy=accuracy)
        if ratio > 0.7 * best_ratio:  # the width is no longer set by h (round-off, tails)
            return late_tilt(c if ratio < best_ratio else best)
        best, best_ratio = c, ratio
    return late_tilt(best)


def _round_off_minor(c: Composed, *, delta: float | None, epsilon: float | None, accuracy: float) -> bool:
    """True when the round-off bound widens the interval by less than a fifth of the width aimed for
    (the same grids read without it): the refinements that follow shrink only the discretisation
    part, so a tilted rerun is not needed (q = 0.01, σ = 1, 10^5 steps: a 0.2 s rerun no narrower).
    Only decides whether to recompute; the grids returned keep their bound."""
    grids = c.upper + c.lower
    if all(g.err == 0.0 for g in grids) or not all(g.informative for g in grids):
        return all(g.err == 0.0 for g in grids)
    bare = replace(c, upper=tuple(replace(g, err=0.0, _cache={}) for g in c.upper),
                   lower=tuple(replace(g, err=0.0, _cache={}) for g in c.lower))
    with_err = _width_ratio(c, delta=delta, epsilon=epsilon, accuracy=accuracy)
    without = _width_ratio(bare, delta=delta, epsilon=epsilon, accuracy=accuracy)
    return math.isfinite(with_err) and with_err - without <= 0.2


def _on_lattice(h: float, lattice: float | None) -> float:
    """The largest divisor of ``lattice`` that is ≤ h (h itself without a lattice)."""
    return h if lattice is None else lattice / math.ceil(lattice / h)


def _tilt(parts: Parts, c: Composed, *, delta: float | None, epsilon: float | None,
          accuracy: float) -> float:
    """θ for the round-off bound: 0 when the untilted round-off is below accuracy/100 of δ at the
    target; else the Chernoff tilt of the composed law at the target ε (θ minimising
    Σ k·ln E[e^{θL}] − θε) — for a δ target, ε is the grids' upper end, or where it is missing the
    Chernoff bound's ε (a tilt chosen for too small an ε leaves the round-off far above δ) —
    with θ·(largest |loss| of the composed and of the single-step grids) ≤ ``TILT_EXPONENT``, so
    that e^{θ·(c_a + c_b)} of every product (``grid._tilted_convolve``) stays finite: a cap from the
    composed grid alone let θ·(single-step span) reach 1000 and every tilted mass underflow (R1)."""
    grids = c.upper + c.lower
    if all(g.err == 0.0 for g in grids):
        return 0.0
    eps: float | None
    if epsilon is None:
        if delta is None:
            return 0.0
        _lo, eps = c.epsilon(delta)
        if eps is not None and max(g.err_at(0.0) for g in grids) < 1e-2 * accuracy * delta:
            return 0.0
    else:
        eps = epsilon
        if max(g.err_at(0.0) for g in grids) < 1e-2 * accuracy * max(c.delta(eps)[0], 1e-300):
            return 0.0
    singles = [_coarse_grid(law, max((hi_ - lo_) / 4096, 1e-9), 1e-12)
               for law, _ in parts for lo_, hi_ in [law.support(1e-12)]]
    span = max(_span(g) for g in list(grids) + singles + list(c.singles))
    thetas = np.linspace(0.0, TILT_EXPONENT / max(span, 1e-9), 257)[1:]
    log_m = np.zeros(thetas.size)  # Σ k·ln E_P[e^{θL}] over the parts, single steps
    for (_law, k), g in zip(parts, singles, strict=True):
        keep = g.mass > 0
        if not np.any(keep):
            continue
        x = g.losses[keep]
        log_m += k * logsumexp(np.outer(thetas, x) + np.log(g.mass[keep]), axis=1)
    if eps is None:  # P(L > ε) ≤ e^{Σ k ln M(θ) − θε} ≤ δ at ε = (Σ k ln M(θ) − ln δ)/θ
        eps = float(np.min((log_m - math.log(delta if delta is not None else 1e-10)) / thetas))
    return float(thetas[int(np.argmin(log_m - thetas * eps))])


TILT_EXPONENT = 300.0
"""Largest θ·|loss| allowed on any grid (composed or single step) when choosing the tilt: products
multiply by e^{θ(c_a + c_b)} ≤ e^{600}, below the float range (e^{709})."""


def _span(g: GridPLD) -> float:
    """Largest |loss| carrying mass on a grid (``grid.loss_span``)."""
    return loss_span(g)


REFINEMENTS = 3
"""At most this many grids are composed while refining h towards the accuracy."""

CHEAP_SECONDS = 0.1
"""A refinement (h/4, width ∝ h²: 16× narrower) whose estimated time is below this is done even
when the accuracy is already reached: cheap cases end far tighter than ``DEFAULT_ACCURACY``
(Laplace b = 2, k = 20, δ = 1e-6: 6.6e-4 → 1.6e-7 relative), while the accuracy stays the stopping
rule of expensive ones. 0.1 s is 5 % of the Mechanisms page's 2 s budget for the PLD route."""

CHEAP_REFINEMENTS = 3
"""At most this many cheap refinements beyond ``REFINEMENTS``."""


def target_tail(parts: Parts, *, delta: float | None, epsilon: float | None, accuracy: float) -> float:
    """Mass all truncations together may move: δ·accuracy/10 (it adds at most that to δ, shifting
    ε by a small part of the accuracy), within [1e-30, 1e-9]; 1e-18 for an ε target."""
    if delta is None or delta <= 0:
        return 1e-18
    return min(1e-9, max(1e-30, delta * accuracy / 10.0))


def _width_ratio(c: Composed, *, delta: float | None, epsilon: float | None, accuracy: float) -> float:
    """Width of the interval over the width aimed for (≤ 1: accurate enough)."""
    if delta is not None:
        lo, up = c.epsilon(delta)
        if lo is None:
            return 0.0
        if up is None:
            return math.inf
        return (up - lo) / (accuracy * max(up, 0.1))
    lo_d, up_d = c.delta(epsilon if epsilon is not None else 0.0)
    if up_d <= 0:
        return 0.0
    return (up_d - lo_d) / (accuracy * up_d)


def _pilot_h(parts: Parts, tail: float) -> float:
    """A first width: 1/8 of the smallest single-step standard deviation of the loss (narrower
    cells than that lose the law's shape), at most 0.05."""
    sds = []
    for law, _ in parts:
        lo, hi = law.support(1e-12)
        g = _coarse_grid(law, max((hi - lo) / 4096, 1e-9), 1e-12)
        sds.append(max(g.mean_sd()[1], g.h))
    return min(0.05, min(sds) / 8.0)


def _anchor(parts: Parts) -> float | None:
    """A width the grid should divide: the distance between the two heaviest atoms (by P-mass) of
    the first part that has two, so that with ``_law_offset`` both sit on grid points (e.g. a
    subsampled Laplace's atoms at its largest and smallest loss, where δ is decided); None if no
    part has two atoms."""
    for law, _ in parts:
        keep = law.p > 0
        if np.count_nonzero(keep) >= 2:
            loss, p = law.loss[keep], law.p[keep]
            two = np.argsort(p)[-2:]
            d = abs(float(loss[two[1]] - loss[two[0]]))
            if d > 0:
                return d
    return None


def _lattice(parts: Parts) -> float | None:
    """The coarsest h putting every atom of every law on the grid h·ℤ (None if there is none)."""
    cands = []
    for law, _ in parts:
        loss = law.loss[(law.p > 0) | (law.q > 0)]
        nz = np.abs(loss[loss != 0])
        if nz.size == 0:
            continue
        cands.append(float(nz.min()))
    if not cands:
        return None
    base = min(cands)
    for div in range(1, 13):
        h0 = base / div
        ok = True
        for law, _ in parts:
            t = law.loss[(law.p > 0) | (law.q > 0)] / h0
            if np.any(np.abs(t - np.round(t)) > 1e-9 * np.maximum(1.0, np.abs(t))):
                ok = False
                break
        if ok:
            return h0
    return None
