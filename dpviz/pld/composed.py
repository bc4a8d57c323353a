"""Composed PLD grids: every law discretised twice per direction, each (direction, bound) composed by
one transform (``dpviz.pld.power``), refused or coarsened by the a-priori ``cost`` (``dpviz.budget``).

For each direction of the neighbouring relation (the laws as given, and all of them reversed) every
law is discretised pessimistically and optimistically (``dpviz.pld.discretize``), and each set of
grids composed (docs/MATH.md §7.3, §17). The mechanism's δ(ε) is the larger of the two directions
(Steinke Prop. 7 applied to (P, Q) and (Q, P)), so

    lower = max_dir lower_dir ≤ truth ≤ max_dir upper_dir = upper.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import numpy as np

from dpviz import budget as budgets
from dpviz.budget import Budget, OverBudget
from dpviz.pld import discretize
from dpviz.pld.cost import DEFAULT_H, Parts, directions, plan_grids, staged_cost, transforms_cost
from dpviz.pld.cost import check as check_cost
from dpviz.pld.grid import DEFAULT_TAIL, GridPLD
from dpviz.pld.law import LossLaw
from dpviz.pld.power import chernoff_theta, compose_power, merged_part
from dpviz.pld.staged import Stages, compose_staged
from dpviz.validation import ParameterError, check_count

T = TypeVar("T")


@dataclass(frozen=True)
class Composed:
    """Composed pessimistic and optimistic grids, one pair per direction."""

    upper: tuple[GridPLD, ...]
    lower: tuple[GridPLD, ...]
    h: float
    seconds: float
    single: GridPLD | None = None
    """One step of the first part, pessimistic (the Mechanisms page draws its histogram)."""
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


@lru_cache(maxsize=16)
def discretized(law: LossLaw, h: float, tail: float, pessimistic: bool, offset: float = 0.0) -> GridPLD:
    """One law's single-step grid, kept while the refinement reruns a width (tilted after the pilot)."""
    if pessimistic:
        return discretize.pessimistic(law, h=h, tail=tail, offset=offset)
    return discretize.optimistic(law, h=h, tail=tail, offset=offset)


def law_offset(law: LossLaw, h: float) -> float:
    """The grid shift putting the law's heaviest atom (by P-mass) on a grid point: a heavy atom off
    the grid is rounded down by the lower grid, an error of order h per step (the post-processing
    cannot raise a lone atom's loss), where on the grid it is exact."""
    if not law.loss.size or not np.any(law.p > 0):
        return 0.0
    a = float(law.loss[int(np.argmax(law.p))])
    return a - math.floor(a / h) * h


def on_lattice(h: float, lattice: float | None) -> float:
    """The largest divisor of ``lattice`` that is ≤ h (h itself without a lattice): a width that keeps
    the atoms of a lattice on grid points."""
    return h if lattice is None else lattice / math.ceil(lattice / h)


def single_step(law: LossLaw, k: int, *, h: float, tail: float, n_parts: int, pessimistic: bool,
                total: bool = True, offsets: bool = False) -> GridPLD:
    """One step of a part of ``n_parts`` as ``compose`` discretises it (kept by ``discretized``).
    With ``total`` a single step leaves ≤ tail/(2·n_parts·k) beyond its grid, so its k steps leave
    ≤ tail/(2·n_parts); ``offsets``: the grid shifted onto the law's heaviest atom (``law_offset``)."""
    off = law_offset(law, h) if offsets else 0.0
    return discretized(law, h, tail / (2 * n_parts) / k if total else tail, pessimistic, off)


def compose(parts: Parts, *, h: float = DEFAULT_H, tail: float = DEFAULT_TAIL,
            budget: Budget | None = None, total: bool = False, tilt: float | None = None,
            offsets: bool = False, lower_at: float | None = None, lower_at_epsilon: float | None = None,
            spare: tuple[int, float] | None = None, stages: Stages | None = None) -> Composed:
    """Upper and lower composed grids for every direction (module docstring); raises
    :class:`~dpviz.budget.OverBudget` when the estimated ``cost`` is above ``budget``. ``tail`` bounds
    the mass the composition moves (window edges and truncation, ``compose_power``); with ``total``
    the single steps' discretisations share it too (half to them, split over the parts and steps).
    ``tilt``: the loss at which each composition's round-off is made relative (``compose_power``).
    ``lower_at`` = δ: only the direction whose upper grid has the largest ε at δ gets a lower grid
    (``_dominant``); ``lower_at_epsilon`` = ε likewise, the one whose upper grid has the largest δ at
    ε. ``spare`` = (lead, c), with ``lower_at``: the directions other than ``lead``
    (the one predicted to read the largest ε) get their upper grid at width c·h, composed again at h
    only if it reads above the lead's upper end (``_again_at_h``). ``stages``: a direction of one law
    composed over enough steps is composed in two stages (``dpviz.pld.staged``), m steps at its width
    and the m-fold grid at ``stages.ratio`` times it."""
    if not parts:
        raise ParameterError("mechanisms", "[]", "a non-empty list")
    for _, k in parts:
        check_count(k, field="k")
    dirs = directions(parts)
    plan = stages if stages is not None and len(parts) == 1 and stages.applies(parts[0][1]) else None
    if plan is None:
        check_cost(parts, h=h, tail=tail, budget=budget)
    else:
        budgets.check(staged_cost(parts, h, plan.m, plan.ratio, tail), budget)
    t0 = time.perf_counter()

    def single(law: LossLaw, k: int, up: bool, hh: float = h) -> GridPLD:
        return single_step(law, k, h=hh, tail=tail, n_parts=len(parts), pessimistic=up, total=total,
                           offsets=offsets)

    rest = tail / 2 if total else tail

    def composition(grids: list[tuple[GridPLD, int]], law: LossLaw, up: bool, hh: float) -> GridPLD:
        """The grids composed: in two stages where ``stages`` applies (``plan``: one law), else by one
        power; a spared direction's (at a width other than h) by plain transforms: it only has to read
        below the lead's upper end, and the heavy bins' direct sums (``spectrum.transform``) were a
        tenth of a millisecond a bin there (q = 8.7e-4, σ = 2.68, 6,458 steps: 16 bins, 0.5 ms)."""
        if plan is None:
            plan_grids([grids], hh)
            return compose_power(grids, tail=rest, tilt_at=tilt, split=hh == h)
        g, k = grids[0]
        theta = 0.0 if tilt is None else chernoff_theta([merged_part(g, k)], tilt)
        coarse = single(law, k, up, hh * plan.ratio) if k % plan.m else None
        return compose_staged(g, coarse, k, plan, theta=theta, tail=rest)

    def upper(i: int, hh: float) -> tuple[GridPLD, list[tuple[GridPLD, int]]]:
        grids = [(single(law, k, True, hh), k) for law, k in dirs[i]]
        return composition(grids, dirs[i][0][0], True, hh), grids

    widths = [h] * len(dirs)
    if spare is not None and lower_at is not None and len(dirs) > 1 and spare[1] > 1.0:
        widths = [h if i == spare[0] else h * spare[1] for i in range(len(dirs))]

    def at_width(i: int) -> tuple[GridPLD, list[tuple[GridPLD, int]]]:
        """Direction i's upper grid at its width; at h where a coarser one is refused (too many bins:
        a tilt far from this direction's own ε can widen its window)."""
        if widths[i] == h:
            return upper(i, h)
        try:
            return upper(i, widths[i])
        except ParameterError as exc:
            if exc.field != "h":
                raise
            widths[i] = h
            return upper(i, h)

    made = [at_width(i) for i in range(len(dirs))]
    for i in _again_at_h(made, widths, h, lower_at):
        made[i] = upper(i, h)
        widths[i] = h
    ups = tuple(g for g, _ in made)
    pess = [grids for _, grids in made]
    def lower(i: int) -> tuple[GridPLD, list[tuple[GridPLD, int]]]:
        grids = [(single(law, k, False), k) for law, k in dirs[i]]
        return composition(grids, dirs[i][0][0], False, h), grids

    kept = _dominant(ups, lower_at, lower_at_epsilon)
    made_low = [lower(i) for i in kept]
    if lower_at_epsilon is not None and len(kept) < len(dirs):
        # a direction left out whose upper δ is above the kept lower δ might read a larger lower end:
        # it gets its lower grid too, so the lower end at ε is the one all directions give
        floor = max(g.delta(lower_at_epsilon) for g, _ in made_low)
        made_low += [lower(i) for i in range(len(dirs))
                     if i not in kept and ups[i].delta(lower_at_epsilon) > floor]
    lows = tuple(g for g, _ in made_low)
    opt = [grids for _, grids in made_low]
    singles = tuple(g for grids in (pess, opt) for dgrids in grids for g, _ in dgrids)
    # the first direction's first step at h (the page's histogram), also where that direction was spared
    first = pess[0][0][0] if widths[0] == h else single(*dirs[0][0], True)
    note = "" if plan is None else f"two stages: {plan.m:,} steps at h, then at {plan.ratio}·h"
    return Composed(upper=ups, lower=lows, h=h, seconds=time.perf_counter() - t0, tail=tail,
                    single=first, singles=singles, note=note)


def _again_at_h(made: Sequence[tuple[GridPLD, object]], widths: Sequence[float], h: float,
            delta: float | None) -> list[int]:
    """The directions composed at a coarser width whose upper grid reads above the largest ε of those
    at h (or reads nothing, e.g. a round-off bound that says nothing): they are composed again at h,
    so that the interval's upper end is never set by a coarser grid. A coarser upper grid is an upper
    bound all the same: this is about the width, not about soundness."""
    coarse = [i for i, hh in enumerate(widths) if hh != h]
    if not coarse or delta is None:
        return []
    fine = [made[i][0].epsilon(delta) for i, hh in enumerate(widths) if hh == h]
    top = max((r for r in fine if r is not None), default=None)
    if top is None or any(r is None for r in fine):
        return coarse
    return [i for i in coarse if (r := made[i][0].epsilon(delta)) is None or r > top]


def _dominant(ups: Sequence[GridPLD], delta: float | None, epsilon: float | None = None) -> list[int]:
    """The directions that get a lower grid: all of them, or with ``delta`` only the one whose upper
    grid reads the largest ε at δ (with ``epsilon``, the largest δ at ε). Any one direction's lower
    end is a lower end of the mechanism's ε or δ (the larger of the directions'), and the width
    ``max_dir upper − lower`` is then that direction's own: one composition in four saved for an
    asymmetric law read at one δ (issue 23), and at one ε also that direction's optimistic single
    step, the dearer of the two grids (q = 0.0031, σ = 1, 1,000 steps: 21 of a refinement's 164 ms;
    ``compose`` adds back a direction whose upper δ is above the kept lower δ, so that the lower end
    at ε is the one every direction gives)."""
    every = list(range(len(ups)))
    if (delta is None and epsilon is None) or len(ups) < 2:
        return every
    if delta is not None:
        reads = [r for r in (g.epsilon(delta) for g in ups) if r is not None]
        if len(reads) < len(ups):
            return every
        return [int(np.argmax(reads))]
    assert epsilon is not None
    return [int(np.argmax([g.delta(epsilon) for g in ups]))]


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
    return coarsening(h, lambda hh: compose(parts, h=hh, tail=tail, budget=budget))


def coarsening(h: float, run: Callable[[float], T]) -> T:
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
    """``compose([(law, k)], h=…)`` for every k in ``ks`` on one grid: the law is discretised once
    per direction and bound (``discretized`` keeps it), each k is one power of the same transform
    length's worth of work. Like ``compose_within_limits``, h is doubled while the estimate is above
    ``budget`` (or a grid above ``MAX_BINS``); every result then uses the same, coarser h."""
    ks = sorted({check_count(k, field="k") for k in ks})
    top = ks[-1]

    def run(hh: float) -> dict[int, Composed]:
        budgets.check(transforms_cost([(law, top)], transforms=2 * len(ks), h=hh, tail=tail), budget)
        return {k: compose([(law, k)], h=hh, tail=tail) for k in ks}

    return coarsening(h, run)
