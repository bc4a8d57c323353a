"""What a PLD composition will cost, before any transform is run.

``plan`` returns the a-priori size of the composed grid (bins) and refuses requests above
``MAX_BINS`` with a ``ParameterError`` naming h; ``cost`` turns the same counts (cells discretised,
bins × log2 bins of every transform) into an estimated time and memory (``dpviz.budget``). Both look
at the single steps only (their spread and range, Steinke Thm 9: the composed law is their sum).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from dpviz import budget as budgets
from dpviz.budget import Cost, cost_of
from dpviz.pld import discretize
from dpviz.pld.grid import DEFAULT_TAIL, MAX_BINS, GridPLD, composed_bins
from dpviz.pld.law import LossLaw
from dpviz.validation import ParameterError

Parts = Sequence[tuple[LossLaw, int]]

DEFAULT_H = 2e-4
"""Grid width used when none is given. Twice dp-accounting's default value_discretization_interval:
our errors are second order in h, so for DP-SGD (q = 0.01, σ = 1.1, 10⁴ steps) this gives a
certified interval of relative width 2e-4 in less time than dp-accounting's default run
(``benchmarks/results/mechanisms.md``)."""


def directions(parts: Parts) -> list[list[tuple[LossLaw, int]]]:
    """The parts as given and all reversed (one list when every law is symmetric)."""
    if all(law.symmetric for law, _ in parts):
        return [list(parts)]
    return [list(parts), [(reversed_law(law), k) for law, k in parts]]


@lru_cache(maxsize=16)
def reversed_law(law: LossLaw) -> LossLaw:
    """``law.reversed()``, the same object for the same law (so plans can reuse discretisations)."""
    return law.reversed()


@lru_cache(maxsize=32)
def coarse_grid(law: LossLaw, h: float, tail: float) -> GridPLD:
    """A pessimistic discretisation for planning, reused while the refinement tries widths."""
    return discretize.pessimistic(law, h=h, tail=tail)


PLAN_CELLS = 1 << 16
"""``plan`` discretises a law on at most this many cells: the spread it needs hardly depends on
the width, while a fine discretisation is itself the expensive step (seconds for a subsampled
law spanning 10^6 cells)."""

COST_CELLS = 1 << 10
"""``cost`` sizes the composed grid from discretisations this coarse (a rough count is enough)."""


def plan(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> int:
    """Largest grid (bins) the composition will need; raises ``ParameterError`` above MAX_BINS.

    Discretises each law once, on at most ``PLAN_CELLS`` cells, and sizes the composed grid
    from the single-step spreads and ranges at width h, before any transform is run.
    """
    return check_bins(max(planned_bins(d, h=h, tail=tail) for d in directions(parts)), h)


def planned_bins(parts: Parts, *, h: float, tail: float, cells: int = PLAN_CELLS) -> int:
    """``composed_bins`` for the grids at width h, from discretisations at most ``cells`` wide."""
    for law, _ in parts:
        discretize.grid_range(law, h=h, tail=tail)  # the law fits a grid of width h at all
    grids = []
    for law, k in parts:
        lo, hi = law.support(tail)
        coarse = max(h, (hi - lo) / cells)
        grids.append((coarse_grid(law, coarse, tail), k))
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
        first = max(first, size)
    total = 2 * z * math.sqrt(var) + 2 * spread
    return int(min(full, max(total / h + 1, first)))


def plan_grids(grids: list[list[tuple[GridPLD, int]]], h: float) -> int:
    """``composed_bins`` of discretised parts, one list per direction, checked against MAX_BINS."""
    return check_bins(max(composed_bins(single) for single in grids), h)


def check_bins(worst: int, h: float) -> int:
    if worst > MAX_BINS:
        raise ParameterError("h", h, f"coarse enough that the composed grid stays below {MAX_BINS:,} "
                                     f"bins (needs ≈{worst:,}; increase h or reduce k)")
    return worst


def cost(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL) -> Cost:
    """Estimated time and memory of ``compose`` at width h (``dpviz.budget`` units): every law
    discretised twice per direction, and per direction and bound one forward transform per part
    and one inverse (docs/MATH.md §17), each of at most the planned composed grid. Kept per
    (parts, h, tail): the width prediction checks the budget at the width the composition then
    checks again."""
    return _cost(tuple((law, int(k)) for law, k in parts), float(h), float(tail))


@lru_cache(maxsize=64)
def _cost(parts: tuple[tuple[LossLaw, int], ...], h: float, tail: float) -> Cost:
    return transforms_cost(parts, transforms=len(parts) + 1, h=h, tail=tail)


def check(parts: Parts, *, h: float, tail: float, budget: budgets.Budget | None) -> None:
    """``budgets.check(cost(parts, h=h, tail=tail), budget)``: the same decision and refusal, without
    discretising where the bound is within the budget (``above_bound``)."""
    estimate = above_bound(parts, h=h, tail=tail, budget=budget)
    if estimate is not None:
        budgets.check(estimate, budget)


def above_bound(parts: Parts, *, h: float, tail: float, budget: budgets.Budget | None) -> Cost | None:
    """None where an upper bound of ``cost(parts, h=h, tail=tail)`` (``bound``) is within ``budget``
    (so is the estimate itself), else the estimate; raises where ``cost`` does. The planned grids are
    then not discretised for the estimate (a direction's grid at h, e.g. the add direction of a
    subsampled law: a quarter of a millisecond of a 10 ms question, issue 23)."""
    if budgets.resolve(budget).admits(bound(parts, h=h, tail=tail)):
        return None
    return cost(parts, h=h, tail=tail)


def bound(parts: Parts, *, h: float, tail: float) -> Cost:
    """An upper bound of ``cost(parts, h=h, tail=tail)`` (seconds and bytes) without discretising:
    the planned bins of a direction are at most Σ k·(bins of its law's planned grid, at width h), and
    the estimate increases with the bins. Refuses a width as ``cost`` does (``discretize.grid_range``)."""
    dirs = directions(parts)
    bins = max(sum(k * _planned_size(law, h, tail) for law, k in d) for d in dirs)
    return _estimate(parts, len(dirs), bins, transforms=len(parts) + 1, h=h, tail=tail)


def _planned_size(law: LossLaw, h: float, tail: float) -> int:
    """At least the bins ``planned_bins`` counts for one step of ``law`` at width h (its grid at the
    planned width, rescaled to h; one more for the rescaling's rounding)."""
    discretize.grid_range(law, h=h, tail=tail)  # the law fits a grid of width h at all
    lo, hi = law.support(tail)
    coarse = max(h, (hi - lo) / COST_CELLS)
    i_lo, i_hi = discretize.grid_range(law, h=coarse, tail=tail)  # the planned grid's bins
    return math.ceil((i_hi - i_lo + 1) * coarse / h) + 1


def first_stage_cost(parts: Parts, h: float, tail: float) -> Cost:
    """The cost of discretising the single steps at h and composing √k of them (the first stage of a
    two-stage composition, ``dpviz.pld.staged``; its second stage composes far fewer bins)."""
    return cost([(law, max(2, math.isqrt(int(k)))) for law, k in parts], h=h, tail=tail)


def staged_cost(parts: Parts, h: float, m: int, ratio: int, tail: float) -> Cost:
    """The cost of a two-stage composition (``dpviz.pld.staged``): m steps at h, then all of them at
    ``ratio``·h (the m-fold grid's transforms are sized as the k-fold law's at the coarse width)."""
    return cost([(law, m) for law, _ in parts], h=h, tail=tail) + cost(parts, h=h * ratio, tail=tail)


def cell_unit(law: LossLaw) -> str:
    """The ``dpviz.budget`` unit of one discretised cell of ``law``."""
    if not law.symmetric:
        return "pld_cell_asymmetric"
    return "pld_cell" if law.continuous is not None else "pld_atom_cell"


def transforms_cost(parts: Parts, *, transforms: int, h: float, tail: float) -> Cost:
    """``cost`` with ``transforms`` transforms per direction and bound (``compose_many`` shares some).
    The unit ``fft_bin_log`` was calibrated on a convolution (three transforms and a product); one
    transform and a power (⌈log2 k⌉ pointwise products) is counted as half of it."""
    dirs = directions(parts)
    bins = max(planned_bins(d, h=h, tail=tail, cells=COST_CELLS) for d in dirs)
    return _estimate(parts, len(dirs), bins, transforms=transforms, h=h, tail=tail)


def cost_above(parts: Parts, seconds: float, *, h: float, tail: float) -> bool:
    """``cost(parts, h=h, tail=tail).seconds > seconds``, without discretising where a lower bound
    already says so: the same estimate from a bin count ≤ the planned one (the widest single step at
    width h, where ``planned_bins`` discretises at h itself). The refinement asks this of every
    finer width it considers; the discretisations for the exact count were up to 7 % of a small
    subsampled Gaussian's time (issue 23)."""
    dirs = directions(parts)
    widest = 1
    for d in dirs:
        for law, _ in d:
            i_lo, i_hi = discretize.grid_range(law, h=h, tail=tail)  # raises as ``planned_bins`` would
            lo, hi = law.support(tail)
            if max(h, (hi - lo) / COST_CELLS) == h:  # ``planned_bins`` uses this law's grid at h
                widest = max(widest, i_hi - i_lo + 1)
    if _estimate(parts, len(dirs), widest, transforms=len(parts) + 1, h=h, tail=tail).seconds > seconds:
        return True
    return cost(parts, h=h, tail=tail).seconds > seconds


def _estimate(parts: Parts, n_dirs: int, bins: int, *, transforms: int, h: float, tail: float) -> Cost:
    """``transforms_cost`` for a given composed bin count (increasing in ``bins``)."""
    n = 2 * n_dirs  # pessimistic and optimistic, per direction
    work = cost_of("fft_bin_log", n * transforms * 0.5 * bins * math.log2(max(bins, 2)), memory_units=0) \
        + Cost(0.0, budgets.UNIT_BYTES["fft_bin"] * bins)
    for law, _ in parts:
        lo, hi = law.support(tail)
        work = work + cost_of(cell_unit(law), n * ((hi - lo) / h + 3), memory_units=(hi - lo) / h + 3)
    return Cost(work.seconds, work.bytes, f"PLD grid of about {bins:,} bins, h = {h:.3g}")
